"""Payloads of the identity mutations, and their result unions."""

from __future__ import annotations

from datetime import datetime

import strawberry

from hub.api.identity.types import AgentSession, LoginThrottle
from hub.api.problems import result_union
from hub.identity import service as identity


@strawberry.type
class StartSessionPayload:
    session: AgentSession
    token: str = strawberry.field(
        description="The session token (hub_ses_…). Shown once; store it, it is not retrievable."
    )
    server_time: datetime


@strawberry.type
class EndSessionPayload:
    session: AgentSession
    server_time: datetime


@strawberry.type
class ClearLoginLockoutPayload:
    account: str | None
    address: str | None
    cleared: list[LoginThrottle] = strawberry.field(
        description="The counts forgotten, as they were (empty: nothing was counted)."
    )
    server_time: datetime


StartSessionResult = result_union("StartSessionResult", StartSessionPayload, identity.start_session)
EndSessionResult = result_union("EndSessionResult", EndSessionPayload, identity.end_session)
ClearLoginLockoutResult = result_union(
    "ClearLoginLockoutResult", ClearLoginLockoutPayload, identity.clear_login_lockout
)
