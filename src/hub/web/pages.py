"""The home page (`/`: what needs a person, then the projects) and the project page
(`/projects/{id}`).

Each page is read in one transaction from service functions only; the dataclasses
below are what a template may show, so a template never reaches into the database.
Each project's tasks are counted by one grouped query for the whole page of projects.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from hub.events import service as events
from hub.projects import service as projects
from hub.runtime import Runtime
from hub.storage.unit_of_work import UnitOfWork
from hub.web.home import Attention, read_attention
from hub.web.live import EventLine, event_lines
from hub.web.signin import require_viewer
from hub.web.tasks import Picture, project_picture
from hub.web.templates import render
from hub.work import service as work
from hub.work.vocabulary import EffectiveTaskState

PROJECTS_PER_PAGE = 50
RECENT_EVENTS = 25


# The groups a supervisor reads a project's tasks by, in the order the table shows them.
TASK_GROUPS: tuple[tuple[str, tuple[EffectiveTaskState, ...]], ...] = (
    ("Ready", (EffectiveTaskState.OPEN, EffectiveTaskState.REVISION_NEEDED)),
    ("In progress", (EffectiveTaskState.IN_PROGRESS,)),
    ("Awaiting review", (EffectiveTaskState.AWAITING_REVIEW,)),
    ("Awaiting integration", (EffectiveTaskState.AWAITING_INTEGRATION,)),
    ("Blocked", (EffectiveTaskState.BLOCKED,)),
    ("Done", (EffectiveTaskState.DONE,)),
)


def _grouped(by_state: dict[EffectiveTaskState, int]) -> list[int]:
    return [sum(by_state.get(state, 0) for state in states) for _, states in TASK_GROUPS]


@dataclass(frozen=True)
class ProjectRow:
    project: projects.ProjectView
    repository_count: int
    event_count: int
    tasks: list[int]  # by TASK_GROUPS


@dataclass(frozen=True)
class Overview:
    attention: Attention
    rows: list[ProjectRow]
    total: int
    next_after: str | None  # the cursor of the following page, if there is one


@dataclass(frozen=True)
class ProjectPage:
    project: projects.ProjectView
    repositories: list[projects.RepositoryView]
    policy: projects.PolicyView
    events: list[EventLine]  # newest first
    newest_seq: int  # the live stream continues after this one
    picture: Picture  # the project's dependency picture (`hub.web.tasks`)


def read_overview(uow: UnitOfWork, *, after: str | None) -> Overview:
    # One extra row tells whether a next page exists without a second count query.
    found = projects.list_projects(uow, after=after, limit=PROJECTS_PER_PAGE + 1)
    shown = found[:PROJECTS_PER_PAGE]
    ids = [project.id for project in shown]
    repositories = projects.count_repositories(uow, ids)
    event_counts = events.count_events(uow, ids)
    task_counts = work.task_counts(uow, ids)
    rows = [
        ProjectRow(
            project,
            repositories.get(project.id, 0),
            event_counts.get(project.id, 0),
            _grouped(task_counts.get(project.id, {})),
        )
        for project in shown
    ]
    next_after = shown[-1].id if len(found) > PROJECTS_PER_PAGE else None
    return Overview(read_attention(uow), rows, projects.count_projects(uow), next_after)


def read_project_page(uow: UnitOfWork, project_id: str) -> ProjectPage:
    project = projects.get_project(uow, project_id)
    recent = events.recent_events(uow, stream=project.id, limit=RECENT_EVENTS)
    return ProjectPage(
        project=project,
        repositories=projects.list_repositories(uow, project.id),
        policy=projects.get_policy(uow, project.id),
        events=event_lines(uow, recent),
        newest_seq=recent[0].seq if recent else 0,
        picture=project_picture(uow, project.id),
    )


def page_routes(runtime: Runtime) -> list[BaseRoute]:
    async def overview(request: Request) -> Response:
        await require_viewer(runtime, request)
        after = request.query_params.get("after") or None
        page = await runtime.aread(lambda uow: read_overview(uow, after=after))
        context = {"overview": page, "after": after, "task_groups": TASK_GROUPS}
        return render(request, "overview.html", context)

    async def project_page(request: Request) -> Response:
        await require_viewer(runtime, request)
        project_id = request.path_params["project_id"]
        page = await runtime.aread(lambda uow: read_project_page(uow, project_id))
        return render(request, "project.html", {"page": page})

    return [
        Route("/", overview, methods=["GET"]),
        Route("/projects/{project_id}", project_page, methods=["GET"]),
    ]
