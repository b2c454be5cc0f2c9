"""GraphQL types of the identity module: principals and agent sessions."""

from __future__ import annotations

from datetime import datetime

import strawberry

from hub.api.identity.enums import CredentialKind, PrincipalKind


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
