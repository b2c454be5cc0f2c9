"""The jobs and resources views of the dashboard, and their live updates (SSE).

Pages: `/projects/{id}/jobs` (every job of a project), `/projects/{id}/tasks/{task}/jobs`
(one task's jobs), each with the jobs' artifacts (uploaded for a job, or cited by its
evidence), and `/projects/{id}/resources`. Each is read in one transaction from
the jobs and resources services; freshness and holds are judged at that moment with
coordinator time. The live stream follows the project's event log after the newest
event the page was rendered with and pushes re-rendered fragments (a job's row, or the
resources table) whenever a job or resource event arrives; `web/static/live-swap.js`
swaps them in by element id. Time passing alone changes freshness without an event, so
each row says when it was judged. Both streams last only while the viewer stays signed
in (`hub.web.signin.while_signed_in`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from functools import partial

from sse_starlette import ServerSentEvent
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from hub.artifacts import service as artifacts
from hub.events import service as events
from hub.jobs import service as jobs
from hub.projects import service as projects
from hub.resources import service as resources
from hub.runtime import Runtime
from hub.storage.unit_of_work import UnitOfWork
from hub.web.live import project_stream
from hub.web.signin import require_viewer
from hub.web.templates import render, render_fragment

JOBS_SHOWN = 200
ARTIFACTS_SHOWN = 200
SSE_EVENT = "swap"


@dataclass(frozen=True)
class JobRow:
    job: jobs.JobView
    holds: tuple[resources.ReservationView, ...]  # the task's reservations in a hold now


@dataclass(frozen=True)
class JobsPage:
    project: projects.ProjectView
    task_id: str | None
    rows: list[JobRow]
    # The jobs' artifacts: uploaded for them, or cited by their evidence (as of loading).
    artifacts: list[artifacts.ListedArtifact]
    newest_seq: int


@dataclass(frozen=True)
class ResourcesPage:
    project: projects.ProjectView
    statuses: list[resources.ResourceStatus]
    newest_seq: int


def _rows(uow: UnitOfWork, found: list[jobs.JobView]) -> list[JobRow]:
    holds = {task_id: tuple(resources.task_holds(uow, task_id))
             for task_id in {job.task_id for job in found}}
    return [JobRow(job, holds[job.task_id]) for job in found]


def read_jobs_page(uow: UnitOfWork, project_id: str, task_id: str | None) -> JobsPage:
    project = projects.get_project(uow, project_id)
    found = jobs.list_jobs(uow, project_id=project.id, task_id=task_id, limit=JOBS_SHOWN)
    job_ids = [job.id for job in found]
    evidence_ids = [evidence.id for evidence in jobs.evidence_for_jobs(uow, job_ids)]
    listed = artifacts.listed_artifacts(
        uow, project.id, job_ids=job_ids, evidence_ids=evidence_ids, limit=ARTIFACTS_SHOWN
    )
    return JobsPage(project, task_id, _rows(uow, found), listed,
                    events.last_sequence(uow, stream=project.id))


def read_resources_page(uow: UnitOfWork, project_id: str) -> ResourcesPage:
    project = projects.get_project(uow, project_id)
    return ResourcesPage(project, resources.project_resources(uow, project.id),
                         events.last_sequence(uow, stream=project.id))


def _changed_rows(
    uow: UnitOfWork, record: events.EventRecord, task_id: str | None
) -> list[JobRow]:
    """The job rows an event changes: the job itself, or every job of a task whose
    reservations (and so holds) changed."""
    if record.kind.startswith("job."):
        found = [jobs.get_job(uow, record.subject_id)]
    elif record.kind.startswith("resource") and record.payload.get("task"):
        found = jobs.jobs_for_task(uow, str(record.payload["task"]))
    else:
        return []
    return _rows(uow, [job for job in found if task_id is None or job.task_id == task_id])


def jobs_routes(runtime: Runtime) -> list[BaseRoute]:
    async def jobs_page(request: Request) -> Response:
        await require_viewer(runtime, request)
        project_id = request.path_params["project_id"]
        task_id = request.path_params.get("task_id")
        page = await runtime.aread(lambda uow: read_jobs_page(uow, project_id, task_id))
        return render(request, "jobs.html", {"page": page})

    async def jobs_live(request: Request) -> Response:
        task_id = request.query_params.get("task") or None

        async def push(
            project_id: str, records: AsyncIterator[events.EventRecord]
        ) -> AsyncGenerator[ServerSentEvent, None]:
            async for record in records:
                rows = await runtime.aread(partial(_changed_rows, record=record, task_id=task_id))
                for row in rows:
                    yield ServerSentEvent(
                        data=render_fragment("_job_row.html", {"row": row}),
                        event=SSE_EVENT, id=str(record.seq),
                    )

        return await project_stream(runtime, request, push)

    async def resources_page(request: Request) -> Response:
        await require_viewer(runtime, request)
        project_id = request.path_params["project_id"]
        page = await runtime.aread(lambda uow: read_resources_page(uow, project_id))
        return render(request, "resources.html", {"page": page})

    async def resources_live(request: Request) -> Response:
        async def push(
            project_id: str, records: AsyncIterator[events.EventRecord]
        ) -> AsyncGenerator[ServerSentEvent, None]:
            async for record in records:
                # Job results clear holds, so they change the table as well.
                if not record.kind.startswith(("resource", "job.")):
                    continue
                page = await runtime.aread(lambda uow: read_resources_page(uow, project_id))
                yield ServerSentEvent(
                    data=render_fragment("_resources_table.html", {"page": page}),
                    event=SSE_EVENT, id=str(record.seq),
                )

        return await project_stream(runtime, request, push)

    return [
        Route("/projects/{project_id}/jobs", jobs_page, methods=["GET"]),
        Route("/projects/{project_id}/tasks/{task_id}/jobs", jobs_page, methods=["GET"]),
        Route("/projects/{project_id}/jobs/live", jobs_live, methods=["GET"]),
        Route("/projects/{project_id}/resources", resources_page, methods=["GET"]),
        Route("/projects/{project_id}/resources/live", resources_live, methods=["GET"]),
    ]

