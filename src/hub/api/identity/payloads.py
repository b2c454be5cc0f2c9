"""Payloads of the identity mutations, and their result unions."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from hub.api.identity.types import AgentSession
from hub.api.problems import AnyProblem


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


StartSessionResult = Annotated[
    StartSessionPayload | AnyProblem, strawberry.union("StartSessionResult")
]
EndSessionResult = Annotated[EndSessionPayload | AnyProblem, strawberry.union("EndSessionResult")]
