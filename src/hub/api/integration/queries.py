"""The integration queries: `integration`, `integrations`."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.integration.types import Integration
from hub.api.mapping import from_view
from hub.api.operations import read, read_optional
from hub.integration import service as integration


@strawberry.type
class IntegrationQuery:
    @strawberry.field
    async def integration(
        self, info: Info[HubContext, Any], id: strawberry.ID
    ) -> Integration | None:
        view = await read_optional(info, lambda uow, _: integration.get_integration(uow, str(id)))
        return from_view(Integration, view) if view else None

    @strawberry.field(description="The integrations of an implementation task, oldest first.")
    async def integrations(
        self, info: Info[HubContext, Any], task_id: strawberry.ID
    ) -> list[Integration]:
        views = await read(info, lambda uow, _: integration.integrations_of(uow, str(task_id)))
        return [from_view(Integration, v) for v in views]
