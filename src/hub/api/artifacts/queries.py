"""The artifacts queries: `artifact`, `artifacts`."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.artifacts.enums import ArtifactState
from hub.api.artifacts.types import Artifact
from hub.api.context import HubContext
from hub.api.mapping import from_view
from hub.api.operations import read, read_optional
from hub.api.relay import Connection, connection, decode_cursor, page_size
from hub.artifacts import service as artifacts
from hub.identity.views import Actor
from hub.storage.unit_of_work import UnitOfWork


@strawberry.type
class ArtifactsQuery:
    @strawberry.field(description="An artifact's record, in whatever state.")
    async def artifact(self, info: Info[HubContext, Any], id: strawberry.ID) -> Artifact | None:
        view = await read_optional(info, lambda uow, _: artifacts.get_artifact(uow, str(id)))
        return from_view(Artifact, view) if view else None

    @strawberry.field(
        description="A project's artifacts (or one task's, one job's), oldest first; "
        "uploads in progress only with state: STAGED."
    )
    async def artifacts(
        self,
        info: Info[HubContext, Any],
        project_id: strawberry.ID,
        task_id: strawberry.ID | None = None,
        job_id: strawberry.ID | None = None,
        state: ArtifactState | None = None,
        first: int | None = None,
        after: str | None = None,
    ) -> Connection[Artifact]:
        def load(uow: UnitOfWork, _actor: Actor) -> tuple[int, list[artifacts.ArtifactView]]:
            size = page_size(first, uow.settings.max_page_size)
            found = artifacts.list_artifacts(
                uow,
                project_id=str(project_id),
                task_id=str(task_id) if task_id else None,
                job_id=str(job_id) if job_id else None,
                state=state,
                after=decode_cursor(after),
                limit=size + 1,
            )
            return size, found

        size, found = await read(info, load)
        return connection(found, size, key=lambda v: v.id, node=lambda v: from_view(Artifact, v))
