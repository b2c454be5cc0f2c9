"""The resources queries: `resources`, `reservation`."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.mapping import from_view
from hub.api.operations import read, read_optional
from hub.api.resources.types import Reservation, ResourceStatus
from hub.resources import service as resources


@strawberry.type
class ResourcesQuery:
    @strawberry.field(
        description="The resources a project can reserve (its own and shared ones), with "
        "reservations and holds judged now and the latest capacity reading."
    )
    async def resources(
        self, info: Info[HubContext, Any], project_id: strawberry.ID
    ) -> list[ResourceStatus]:
        found = await read(info, lambda uow, _: resources.project_resources(uow, str(project_id)))
        return [from_view(ResourceStatus, status) for status in found]

    @strawberry.field
    async def reservation(
        self, info: Info[HubContext, Any], id: strawberry.ID
    ) -> Reservation | None:
        view = await read_optional(info, lambda uow, _: resources.get_reservation(uow, str(id)))
        return from_view(Reservation, view) if view else None
