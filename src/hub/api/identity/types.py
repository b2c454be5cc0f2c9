"""GraphQL types of the identity module: principals, agent sessions and sign-in
attempt counts."""

from __future__ import annotations

from datetime import datetime

import strawberry

from hub.api.identity.enums import CredentialKind, PrincipalKind, ThrottledBy


@strawberry.type
class Principal:
    id: strawberry.ID
    name: str
    kind: PrincipalKind
    is_operator: bool
    created_at: datetime


@strawberry.type
class AgentSession:
    id: strawberry.ID
    principal_id: strawberry.ID
    workstation: str
    harness: str
    harness_instance: str
    started_at: datetime
    ended_at: datetime | None
    last_adapter_event: str | None


@strawberry.type
class Viewer:
    principal: Principal
    credential: CredentialKind
    session: AgentSession | None
    server_time: datetime


@strawberry.type(description="Dashboard sign-in attempts counted against a name or an address.")
class LoginThrottle:
    throttled_by: ThrottledBy
    key: str = strawberry.field(description="The name as typed (case-folded), or the address.")
    attempts: int
    window_started_at: datetime
    locked_until: datetime | None = strawberry.field(
        description="When the lockout ends; null when not locked out."
    )
