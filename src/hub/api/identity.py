"""identity: `viewer`, `startSession`, `endSession`."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated, Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.operations import mutate, read
from hub.api.problems import AnyProblem
from hub.identity import service as identity
from hub.identity.actor import Actor
from hub.storage.unit_of_work import UnitOfWork


@strawberry.enum
class PrincipalKind(Enum):
    HUMAN = "human"
    AGENT = "agent"
    SERVICE = "service"


@strawberry.enum
class CredentialKind(Enum):
    PERSONAL = "personal"
    SESSION = "session"
    REPORTER = "reporter"
    WEB = "web"
    SYSTEM = "system"


@strawberry.type
class Principal:
    id: strawberry.ID
    name: str
    kind: PrincipalKind
    is_operator: bool
    created_at: datetime

    @classmethod
    def of(cls, view: identity.PrincipalView) -> Principal:
        return cls(
            id=strawberry.ID(view.id),
            name=view.name,
            kind=PrincipalKind(view.kind),
            is_operator=view.is_operator,
            created_at=view.created_at,
        )


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

    @classmethod
    def of(cls, view: identity.SessionView) -> AgentSession:
        return cls(
            id=strawberry.ID(view.id),
            principal_id=strawberry.ID(view.principal_id),
            workstation=view.workstation,
            harness=view.harness,
            harness_instance=view.harness_instance,
            started_at=view.started_at,
            ended_at=view.ended_at,
            last_adapter_event=view.last_adapter_event,
        )


@strawberry.type
class Viewer:
    principal: Principal
    credential: CredentialKind
    session: AgentSession | None
    server_time: datetime


@strawberry.input
class StartSessionInput:
    workstation: str = strawberry.field(description="Label of the machine the agent runs on.")
    harness: str = strawberry.field(description="The agent harness, e.g. claude-code.")
    harness_instance: str = strawberry.field(description="Id of this harness process/run.")


@strawberry.type
class StartSessionPayload:
    session: AgentSession
    token: str = strawberry.field(
        description="The session token (hub_ses_…). Shown once; store it, it is not retrievable."
    )
    server_time: datetime


@strawberry.input
class EndSessionInput:
    session_id: strawberry.ID
    reason: str = ""


@strawberry.type
class EndSessionPayload:
    session: AgentSession
    server_time: datetime


StartSessionResult = Annotated[
    StartSessionPayload | AnyProblem, strawberry.union("StartSessionResult")
]
EndSessionResult = Annotated[EndSessionPayload | AnyProblem, strawberry.union("EndSessionResult")]


@strawberry.type
class IdentityQuery:
    @strawberry.field(description="Who the bearer token belongs to, and its session if any.")
    async def viewer(self, info: Info[HubContext, Any]) -> Viewer:
        def load(
            uow: UnitOfWork, actor: Actor
        ) -> tuple[identity.PrincipalView, identity.SessionView | None, datetime]:
            principal = identity.get_principal(uow, actor.principal_id)
            session = identity.get_session(uow, actor.session_id) if actor.session_id else None
            return principal, session, uow.now()

        principal, session, now = await read(info, load)
        actor = await info.context.actor()
        return Viewer(
            principal=Principal.of(principal),
            credential=CredentialKind(actor.credential),
            session=AgentSession.of(session) if session else None,
            server_time=now,
        )


@strawberry.type
class IdentityMutation:
    @strawberry.mutation(description="Open an agent session; returns its session token once.")
    async def start_session(
        self, info: Info[HubContext, Any], input: StartSessionInput
    ) -> StartSessionResult:
        return await mutate(
            info,
            lambda uow, actor: identity.start_session(
                uow,
                actor,
                workstation=input.workstation,
                harness=input.harness,
                harness_instance=input.harness_instance,
            ),
            lambda started, now: StartSessionPayload(
                session=AgentSession.of(started.session), token=started.token, server_time=now
            ),
        )

    @strawberry.mutation(description="End a session; its token stops working at once.")
    async def end_session(
        self, info: Info[HubContext, Any], input: EndSessionInput
    ) -> EndSessionResult:
        return await mutate(
            info,
            lambda uow, actor: identity.end_session(
                uow, actor, session_id=str(input.session_id), reason=input.reason
            ),
            lambda session, now: EndSessionPayload(
                session=AgentSession.of(session), server_time=now
            ),
        )
