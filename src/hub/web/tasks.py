"""The task page (`/tasks/{id}`) and the dependency pictures.

A task's page gathers what every module knows of it, each part read through the
owning module's service in one read transaction: the task, its criteria's revisions,
its family (parent, children, prerequisites, dependents, links) and the picture of
its neighbourhood (work); every attempt with its checkpoints, worktrees, recovery
dispositions and notes (work); submissions with their reviews and findings (review);
jobs and evidence (jobs); reservations (resources); events (events); names (identity).
The project page shows the whole project's picture while it stays readable
(`PROJECT_GRAPH_LIMIT` tasks) and links to the board beyond.

The pictures are `hub.web.graph`'s inline SVG: inline, so each node is a link the
browser follows, and within the CSP (no script, no style attribute).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from hub.events import service as events
from hub.identity import service as identity
from hub.jobs import service as jobs
from hub.jobs.service import EvidenceView, JobView
from hub.projects import service as projects
from hub.resources import service as resources
from hub.review import service as review
from hub.runtime import Runtime
from hub.storage.unit_of_work import UnitOfWork
from hub.web.graph import Edge, Node, render_svg
from hub.web.links import TASK_PAGE_ANCHORS, id_href
from hub.web.live import EventLine, event_lines
from hub.web.signin import require_viewer
from hub.web.templates import render
from hub.work import service as work
from hub.work.views import CheckpointView, NoteView, WorktreeView
from hub.work.vocabulary import WaitKind

# Past this many tasks a project's picture is a tangle, not an overview: the project
# page links to the board, where a filter narrows the tasks, instead.
PROJECT_GRAPH_LIMIT = 300
TASK_EVENTS = 50
_EDGE_KINDS = {WaitKind.PREREQUISITE: "prerequisite", WaitKind.CHILD: "child"}


@dataclass(frozen=True)
class Picture:
    """A dependency picture and the same graph as text, for readers who cannot see it."""

    svg: Markup
    tasks: tuple[work.TaskView, ...]
    edges: tuple[work.WaitEdge, ...]
    left_out: int  # tasks not drawn (a neighbourhood's cap, or a project past the limit)

    def title_of(self, task_id: str) -> str:
        return next((task.title for task in self.tasks if task.id == task_id), task_id)


@dataclass(frozen=True)
class AttemptLine:
    """One attempt on the timeline, with what it left behind."""

    attempt: work.AttemptView
    checkpoints: list[CheckpointView]
    worktrees: list[WorktreeView]
    notes: list[NoteView]
    submissions: list[work.SubmissionView]


@dataclass(frozen=True)
class SubmissionLine:
    submission: work.SubmissionView
    reviews: list[review.ReviewView]
    current: bool  # the task's current candidate


@dataclass(frozen=True)
class LinkLine:
    """A link as read from this task's side: "this task DUPLICATE_OF other", or the
    other way round (`outgoing` False: the other task named this one)."""

    link: work.LinkView
    other: work.TaskView
    outgoing: bool


@dataclass(frozen=True)
class TaskPage:
    project: projects.ProjectView
    task: work.TaskView
    parent: work.TaskView | None
    children: list[work.TaskView]
    prerequisites: list[work.TaskView]
    dependents: list[work.TaskView]
    links: list[LinkLine]
    criteria: list[work.CriteriaRevisionView]  # oldest first
    subject: work.SubmissionView | None  # what a review or integration task is about
    attempts: list[AttemptLine]  # oldest first
    submissions: list[SubmissionLine]  # oldest first
    jobs: list[JobView]
    evidence: list[EvidenceView]
    reservations: list[resources.ReservationView]
    events: list[EventLine]  # newest first
    picture: Picture
    names: dict[str, str]  # principal id -> name
    now: datetime

    def name(self, principal_id: str | None) -> str:
        if principal_id is None:
            return "—"
        return self.names.get(principal_id, principal_id)

    def href(self, reference: object) -> str | None:
        """Where an id shown on this page leads (None for anything that is no id)."""
        return id_href(reference, project_id=self.project.id, task_id=self.task.id,
                       here=TASK_PAGE_ANCHORS)


def read_task_page(uow: UnitOfWork, task_id: str) -> TaskPage:
    packet = work.recovery_packet(uow, task_id)
    task = packet.task
    current = work.current_submission(uow, task.id)
    submissions = [
        SubmissionLine(
            made, review.list_reviews(uow, made.id), current is not None and current.id == made.id
        )
        for made in packet.submissions
    ]
    attempts = [
        AttemptLine(
            attempt,
            [c for c in packet.checkpoints if c.attempt_id == attempt.id],
            [w for w in packet.worktrees if w.attempt_id == attempt.id],
            [n for n in packet.notes if n.attempt_id == attempt.id],
            [s for s in packet.submissions if s.attempt_id == attempt.id],
        )
        for attempt in packet.attempts
    ]
    recorded = work.task_links(uow, task.id)
    others = [link.other_id if link.task_id == task.id else link.task_id for link in recorded]
    links = [
        LinkLine(link, other, link.task_id == task.id)
        for link, other in zip(recorded, work.get_tasks(uow, others), strict=True)
    ]
    found_jobs = jobs.jobs_for_task(uow, task.id)
    evidence = jobs.evidence_for_task(uow, task.id)
    reservations = resources.task_reservations(uow, task.id)
    # The task's own events and those about the records of its work.
    subjects = {task.id, *(a.id for a in packet.attempts), *(s.id for s in packet.submissions)}
    subjects |= {job.id for job in found_jobs}
    recent = events.subject_events(
        uow, stream=task.project_id, subject_ids=subjects, limit=TASK_EVENTS
    )
    criteria = work.criteria_history(uow, task.id)
    reviews = [made for line in submissions for made in line.reviews]
    people = {task.created_by, *(c.created_by for c in criteria)}
    people |= {a.principal_id for a in packet.attempts}
    people |= {a.revoked_by for a in packet.attempts if a.revoked_by}
    people |= {n.author_id for n in packet.notes}
    people |= {r.principal_id for r in reviews}
    people |= {f.resolved_by for r in reviews for f in r.findings if f.resolved_by}
    people |= {f.proposed_by for r in reviews for f in r.findings if f.proposed_by}
    people |= {e.producer_id for e in evidence}
    people |= {link.link.created_by for link in links}
    people |= {r.acquired_by for r in reservations}
    people |= {r.hold_cleared_by for r in reservations if r.hold_cleared_by}
    return TaskPage(
        project=projects.get_project(uow, task.project_id),
        task=task,
        parent=work.get_task(uow, task.parent_id) if task.parent_id else None,
        children=work.children_of(uow, task.id),
        prerequisites=work.get_tasks(uow, task.prerequisite_ids),
        dependents=work.dependents_of(uow, task.id),
        links=links,
        criteria=criteria,
        subject=(
            work.get_submission(uow, task.subject_submission_id)
            if task.subject_submission_id
            else None
        ),
        attempts=attempts,
        submissions=submissions,
        jobs=found_jobs,
        evidence=evidence,
        reservations=reservations,
        events=event_lines(uow, recent),
        picture=_picture(
            work.task_neighbourhood(uow, task.id),
            label=f"Dependencies around this task, {task.title}",
            focus=task.id,
        ),
        names=identity.principal_names(uow, people),
        now=uow.now(),
    )


def project_picture(uow: UnitOfWork, project_id: str) -> Picture:
    """The project's whole dependency picture, or none past `PROJECT_GRAPH_LIMIT` tasks
    (then `left_out` counts them all)."""
    graph = work.project_graph(uow, project_id, limit=PROJECT_GRAPH_LIMIT)
    return _picture(graph, label=f"Dependencies among the tasks of project {project_id}")


def _picture(graph: work.TaskGraph, *, label: str, focus: str | None = None) -> Picture:
    nodes = [
        Node(task.id, task.title, task.effective_state, focus=task.id == focus)
        for task in graph.tasks
    ]
    edges = [
        Edge(edge.task_id, edge.other_id, _EDGE_KINDS[edge.kind])
        for edge in graph.edges
    ]
    prefix = f"graph-{focus}" if focus else "project-graph"
    svg = render_svg(nodes, edges, label=label, id_prefix=prefix) if nodes else ""
    # render_svg escapes every piece of text it is given.
    return Picture(Markup(svg), graph.tasks, graph.edges, graph.left_out)  # noqa: S704


def task_routes(runtime: Runtime) -> list[BaseRoute]:
    async def task_page(request: Request) -> Response:
        await require_viewer(runtime, request)
        task_id = request.path_params["task_id"]
        page = await runtime.aread(lambda uow: read_task_page(uow, task_id))
        return render(request, "task.html", {"page": page})

    return [Route("/tasks/{task_id}", task_page, methods=["GET"])]
