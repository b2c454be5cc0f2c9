"""Per-request context: the runtime, and the actor behind the bearer token."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, TypeVar

from graphql import GraphQLError
from starlette.requests import HTTPConnection
from strawberry.types import Info

from hub.errors import ProblemCode, Unauthenticated
from hub.events.feed import follow
from hub.events.recheck import rechecked
from hub.events.service import EventRecord
from hub.identity import service as identity
from hub.identity.views import Actor
from hub.runtime import Runtime
from hub.storage.unit_of_work import UnitOfWork

T = TypeVar("T")


def unauthenticated(message: str) -> GraphQLError:
    return GraphQLError(message, extensions={"code": ProblemCode.UNAUTHENTICATED})


@dataclass
class HubContext:
    runtime: Runtime
    request: HTTPConnection
    response: Any = None
    connection_params: dict[str, Any] | None = None
    _actor: Actor | None = field(default=None, repr=False)
    # What this request's nested fields read, batched (`hub.api.loaders`).
    nested_reads: Any = field(default=None, repr=False)

    def bearer(self) -> str | None:
        header = self.request.headers.get("authorization")
        if not header and self.connection_params:
            header = str(
                self.connection_params.get("Authorization")
                or self.connection_params.get("authorization")
                or ""
            )
        return identity.bearer_token(header)

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

    async def while_authenticated(self, items: AsyncIterator[T]) -> AsyncGenerator[T, None]:
        """A subscription's stream, for as long as its bearer token still authenticates.

        Checked every `credential_recheck_seconds`; a token revoked, a session ended or
        a principal disabled ends the subscription with an UNAUTHENTICATED error.
        """
        guarded = rechecked(
            items, self._authenticate_again,
            every_seconds=self.runtime.settings.credential_recheck_seconds,
        )
        async with aclosing(guarded):
            try:
                async for item in guarded:
                    yield item
            except Unauthenticated as gone:
                raise unauthenticated(
                    f"the subscription ended, its credential no longer holds: {gone.message}"
                ) from None

    async def follow(self, stream: str, after: int) -> AsyncGenerator[EventRecord, None]:
        """An event stream replayed after `after`, then live, while the credential holds;
        other processes' commits arrive through LISTEN/NOTIFY (docs/design.md, "Scale").

        Closing it (client gone, `complete`) closes the follower too, so it leaves the
        event signal now rather than whenever it is garbage-collected."""
        runtime = self.runtime
        records = follow(
            runtime.aread,
            runtime.event_signal,
            stream=stream,
            after=max(after, 0),
            poll_seconds=runtime.settings.event_poll_seconds,
        )
        live = self.while_authenticated(records)
        async with aclosing(live):
            async for record in live:
                yield record

    async def _authenticate_again(self) -> None:
        token = self.bearer()
        if token is None:
            raise Unauthenticated("a bearer token is required (Authorization: Bearer …)")
        await self.runtime.aread(lambda uow: identity.authenticate(uow, token))


def hub_context(info: Info[HubContext, Any]) -> HubContext:
    return info.context
