"""The identity queries: `viewer`."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.identity.types import Viewer
from hub.api.mapping import from_view
from hub.api.operations import read
from hub.identity import service as identity


@strawberry.type
class IdentityQuery:
    @strawberry.field(description="Who the bearer token belongs to, and its session if any.")
    async def viewer(self, info: Info[HubContext, Any]) -> Viewer:
        found, now = await read(info, lambda uow, actor: (identity.viewer(uow, actor), uow.now()))
        return from_view(Viewer, found, server_time=now)
