"""Per-request context: the runtime, and the actor behind the bearer token."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graphql import GraphQLError
from starlette.requests import HTTPConnection
from strawberry.types import Info

from hub.errors import Unauthenticated
from hub.identity import service as identity
from hub.identity.actor import Actor
from hub.runtime import Runtime
from hub.storage.unit_of_work import UnitOfWork


def unauthenticated(message: str) -> GraphQLError:
    return GraphQLError(message, extensions={"code": "UNAUTHENTICATED"})


@dataclass
class HubContext:
    runtime: Runtime
    request: HTTPConnection
    response: Any = None
    connection_params: dict[str, Any] | None = None
    _actor: Actor | None = field(default=None, repr=False)

    def bearer(self) -> str | None:
        header = self.request.headers.get("authorization")
        if not header and self.connection_params:
            header = str(
                self.connection_params.get("Authorization")
                or self.connection_params.get("authorization")
                or ""
            )
        if not header:
            return None
        scheme, _, value = header.partition(" ")
        return value.strip() if scheme.lower() == "bearer" and value.strip() else None

    def actor_in(self, uow: UnitOfWork) -> Actor:
        """The actor, authenticated inside the operation's own transaction: one round
        trip fewer per mutation, and revocation is judged in the same transaction."""
        if self._actor is None:
            token = self.bearer()
            if token is None:
                raise Unauthenticated("a bearer token is required (Authorization: Bearer …)")
            self._actor = identity.authenticate(uow, token)
        return self._actor

    async def actor(self) -> Actor:
        if self._actor is None:
            token = self.bearer()
            if token is None:
                raise unauthenticated("a bearer token is required (Authorization: Bearer …)")
            try:
                self._actor = await self.runtime.aread(
                    lambda uow: identity.authenticate(uow, token)
                )
            except Unauthenticated as exc:
                raise unauthenticated(exc.message) from None
        return self._actor


def hub_context(info: Info[HubContext, Any]) -> HubContext:
    return info.context
