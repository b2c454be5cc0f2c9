"""The event log's subscription: `projectEvents`."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.events.types import ProjectEvent
from hub.api.mapping import from_view
from hub.api.operations import read
from hub.projects import service as projects


async def _project_events(
    info: Info[HubContext, Any], project_id: strawberry.ID, after: int = 0
) -> AsyncGenerator[ProjectEvent, None]:
    stream = str(project_id)
    # Checked before the first event: an unknown project is a NOT_FOUND error, not a
    # subscription that silently never yields.
    await read(info, lambda uow, _: projects.ensure_project_exists(uow, stream))
    async with aclosing(info.context.follow(stream, after)) as records:
        async for record in records:
            yield from_view(ProjectEvent, record)


@strawberry.type
class EventsSubscription:
    project_events: AsyncGenerator[ProjectEvent, None] = strawberry.subscription(
        resolver=_project_events,
        description="Replays a project's events after `after`, then streams new ones live. "
        "Ends with an UNAUTHENTICATED error once the connection's credential no longer holds "
        "(token revoked, session ended, principal disabled).",
    )
