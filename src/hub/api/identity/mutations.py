"""The identity mutations: `startSession`, `endSession`, `clearLoginLockout`."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.identity.inputs import ClearLoginLockoutInput, EndSessionInput, StartSessionInput
from hub.api.identity.payloads import (
    ClearLoginLockoutPayload,
    ClearLoginLockoutResult,
    EndSessionPayload,
    EndSessionResult,
    StartSessionPayload,
    StartSessionResult,
)
from hub.api.mapping import call, payload
from hub.api.operations import mutate
from hub.api.problems import Problem
from hub.identity import service as identity


@strawberry.type
class IdentityMutation:
    @strawberry.mutation(
        graphql_type=StartSessionResult,
        description="Open an agent session; returns its session token once.",
    )
    async def start_session(
        self, info: Info[HubContext, Any], input: StartSessionInput
    ) -> StartSessionPayload | Problem:
        return await mutate(info, call(identity.start_session, input), payload(StartSessionPayload))

    @strawberry.mutation(
        graphql_type=EndSessionResult,
        description="End a session; its token stops working at once.",
    )
    async def end_session(
        self, info: Info[HubContext, Any], input: EndSessionInput
    ) -> EndSessionPayload | Problem:
        return await mutate(
            info, call(identity.end_session, input), payload(EndSessionPayload, "session")
        )

    @strawberry.mutation(
        graphql_type=ClearLoginLockoutResult,
        description=(
            "Operators: forget the dashboard sign-in attempts counted against a name, an "
            "address or both, ending a lockout now."
        ),
    )
    async def clear_login_lockout(
        self, info: Info[HubContext, Any], input: ClearLoginLockoutInput
    ) -> ClearLoginLockoutPayload | Problem:
        return await mutate(
            info, call(identity.clear_login_lockout, input), payload(ClearLoginLockoutPayload)
        )
