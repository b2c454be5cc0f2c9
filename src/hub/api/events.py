"""The event log over the API: `projectEvents` (subscription) and `events` (query)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import datetime
from typing import Any

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.operations import read
from hub.events import service as events
from hub.events.feed import follow
from hub.projects import service as projects


@strawberry.type
class ProjectEvent:
    project_id: strawberry.ID | None
    sequence: int = strawberry.field(description="Dense per project: resume with after=sequence.")
    kind: str
    subject_id: str
    actor_id: str | None
    occurred_at: datetime
    payload: JSON

    @classmethod
    def of(cls, record: events.EventRecord) -> ProjectEvent:
        return cls(
            project_id=strawberry.ID(record.project_id) if record.project_id else None,
            sequence=record.seq,
            kind=record.kind,
            subject_id=record.subject_id,
            actor_id=record.actor_id,
            occurred_at=record.occurred_at,
            payload=record.payload,
        )


@strawberry.type
class EventsQuery:
    @strawberry.field(description="A page of a project's event log after a sequence number.")
    async def events(
        self,
        info: Info[HubContext, Any],
        project_id: strawberry.ID,
        after: int = 0,
        first: int = 100,
    ) -> list[ProjectEvent]:
        def load(uow: Any, _actor: Any) -> list[events.EventRecord]:
            projects.ensure_project_exists(uow, str(project_id))
            limit = max(1, min(first, uow.settings.max_page_size))
            return events.list_events(uow, stream=str(project_id), after=max(after, 0), limit=limit)

        return [ProjectEvent.of(record) for record in await read(info, load)]


@strawberry.type
class EventsSubscription:
    @strawberry.subscription(
        description="Replays a project's events after `after`, then streams new ones live."
    )
    async def project_events(
        self, info: Info[HubContext, Any], project_id: strawberry.ID, after: int = 0
    ) -> AsyncGenerator[ProjectEvent, None]:
        runtime = info.context.runtime
        await read(info, lambda uow, _: projects.ensure_project_exists(uow, str(project_id)))
        async for record in follow(
            runtime.aread, runtime.event_signal, stream=str(project_id), after=max(after, 0)
        ):
            yield ProjectEvent.of(record)
