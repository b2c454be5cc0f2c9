"""Running one service function for a resolver: the actor, the transaction, the problem.

Every mutation resolver is `return await mutate(info, operation, to_payload)`; the
mapping from domain error to problem type happens here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from graphql import GraphQLError
from strawberry.types import Info

from hub.api.context import HubContext, unauthenticated
from hub.api.problems import AnyProblem, to_problem
from hub.errors import HubError, NotFound, Unauthenticated
from hub.identity.actor import Actor
from hub.storage.unit_of_work import UnitOfWork

T = TypeVar("T")
P = TypeVar("P")


async def mutate(
    info: Info[HubContext, Any],
    operation: Callable[[UnitOfWork, Actor], T],
    to_payload: Callable[[T, datetime], P],
) -> P | AnyProblem:
    context = info.context
    try:
        result = await context.runtime.awrite(
            lambda uow: operation(uow, context.actor_in(uow))
        )
    except Unauthenticated as exc:
        raise unauthenticated(exc.message) from None
    except HubError as error:
        return to_problem(error)
    return to_payload(result, context.runtime.clock.now())


async def read(
    info: Info[HubContext, Any], operation: Callable[[UnitOfWork, Actor], T]
) -> T:
    """Run a query; a domain error becomes a GraphQL error carrying its code."""
    context = info.context
    actor = await context.actor()
    try:
        return await context.runtime.aread(lambda uow: operation(uow, actor))
    except HubError as error:
        raise GraphQLError(error.message, extensions={"code": error.code}) from None


async def read_optional(
    info: Info[HubContext, Any], operation: Callable[[UnitOfWork, Actor], T]
) -> T | None:
    """Like `read`, but a missing record is `null` rather than an error."""
    context = info.context
    actor = await context.actor()
    try:
        return await context.runtime.aread(lambda uow: operation(uow, actor))
    except NotFound:
        return None
    except HubError as error:
        raise GraphQLError(error.message, extensions={"code": error.code}) from None


def server_time(info: Info[HubContext, Any]) -> datetime:
    return info.context.runtime.clock.now()
