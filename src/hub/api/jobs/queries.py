"""The jobs queries: `job`, `jobs`, `evidence`, `watchWindow`."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.jobs.types import Evidence, Job, WatchWindow
from hub.api.mapping import from_view
from hub.api.operations import read, read_optional
from hub.api.relay import Connection, connection, decode_cursor, page_size
from hub.identity.service import require_reporter_scope
from hub.identity.views import Actor
from hub.jobs import service as jobs
from hub.storage.unit_of_work import UnitOfWork


@strawberry.type
class JobsQuery:
    @strawberry.field
    async def job(self, info: Info[HubContext, Any], id: strawberry.ID) -> Job | None:
        def load(uow: UnitOfWork, actor: Actor) -> jobs.JobView:
            view = jobs.get_job(uow, str(id))
            require_reporter_scope(actor, view.attempt_id, f"job {id}")
            return view

        view = await read_optional(info, load)
        return from_view(Job, view) if view else None

    @strawberry.field(description="A project's (or one task's) jobs, freshness judged now.")
    async def jobs(
        self,
        info: Info[HubContext, Any],
        project_id: strawberry.ID,
        task_id: strawberry.ID | None = None,
        open_only: bool = False,
        first: int | None = None,
        after: str | None = None,
    ) -> Connection[Job]:
        def load(uow: UnitOfWork, _actor: Actor) -> tuple[int, list[jobs.JobView]]:
            size = page_size(first, uow.settings.max_page_size)
            found = jobs.list_jobs(
                uow,
                project_id=str(project_id),
                task_id=str(task_id) if task_id else None,
                open_only=open_only,
                after=decode_cursor(after),
                limit=size + 1,
            )
            return size, found

        size, found = await read(info, load)
        return connection(found, size, key=lambda v: v.id, node=lambda v: from_view(Job, v))

    @strawberry.field
    async def evidence(self, info: Info[HubContext, Any], id: strawberry.ID) -> Evidence | None:
        view = await read_optional(info, lambda uow, _: jobs.get_evidence(uow, str(id)))
        return from_view(Evidence, view) if view else None

    @strawberry.field
    async def watch_window(
        self, info: Info[HubContext, Any], id: strawberry.ID
    ) -> WatchWindow | None:
        view = await read_optional(info, lambda uow, _: jobs.get_watch_window(uow, str(id)))
        return from_view(WatchWindow, view) if view else None
