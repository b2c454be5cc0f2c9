"""The event log's query: `events`."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.events.types import ProjectEvent
from hub.api.mapping import from_view
from hub.api.operations import read
from hub.events.service import EventRecord
from hub.identity.views import Actor
from hub.projects import service as projects
from hub.storage.unit_of_work import UnitOfWork


async def _events(
    info: Info[HubContext, Any], project_id: strawberry.ID, after: int = 0, first: int = 100
) -> list[ProjectEvent]:
    def load(uow: UnitOfWork, _actor: Actor) -> list[EventRecord]:
        limit = max(1, min(first, uow.settings.max_page_size))
        return projects.project_events(uow, str(project_id), after=max(after, 0), limit=limit)

    return [from_view(ProjectEvent, record) for record in await read(info, load)]


@strawberry.type
class EventsQuery:
    events: list[ProjectEvent] = strawberry.field(
        resolver=_events,
        description="A page of a project's event log after a sequence number.",
    )
