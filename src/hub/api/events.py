"""The event log over the API: `projectEvents` (subscription) and `events` (query)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from datetime import datetime
from typing import Any

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.operations import read
from hub.events import service as events
from hub.events.feed import follow
from hub.identity.actor import Actor
from hub.projects import service as projects
from hub.storage.unit_of_work import UnitOfWork


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
            payload=JSON(record.payload),
        )


async def _events(
    info: Info[HubContext, Any], project_id: strawberry.ID, after: int = 0, first: int = 100
) -> list[ProjectEvent]:
    def load(uow: UnitOfWork, _actor: Actor) -> list[events.EventRecord]:
        projects.ensure_project_exists(uow, str(project_id))
        limit = max(1, min(first, uow.settings.max_page_size))
        return events.list_events(uow, stream=str(project_id), after=max(after, 0), limit=limit)

    return [ProjectEvent.of(record) for record in await read(info, load)]


@strawberry.type
class EventsQuery:
    events: list[ProjectEvent] = strawberry.field(
        resolver=_events,
        description="A page of a project's event log after a sequence number.",
    )


async def _project_events(
    info: Info[HubContext, Any], project_id: strawberry.ID, after: int = 0
) -> AsyncGenerator[ProjectEvent, None]:
    runtime = info.context.runtime
    stream = str(project_id)
    # Checked before the first event: an unknown project is a NOT_FOUND error, not a
    # subscription that silently never yields.
    await read(info, lambda uow, _: projects.ensure_project_exists(uow, stream))
    records = follow(
        runtime.aread,
        runtime.event_signal,
        stream=stream,
        after=max(after, 0),
        poll_seconds=runtime.settings.event_poll_seconds,
    )
    # Closing this generator (client gone, `complete`) must close the follower too, so
    # it leaves the event signal now rather than whenever it is garbage-collected.
    live = info.context.while_authenticated(records)
    async with aclosing(live):
        async for record in live:
            yield ProjectEvent.of(record)


@strawberry.type
class EventsSubscription:
    project_events: AsyncGenerator[ProjectEvent, None] = strawberry.subscription(
        resolver=_project_events,
        description="Replays a project's events after `after`, then streams new ones live. "
        "Ends with an UNAUTHENTICATED error once the connection's credential no longer holds "
        "(token revoked, session ended, principal disabled).",
    )
