"""Running one service function for a resolver: the actor, the transaction, the problem.

Every mutation resolver is `return await mutate(info, operation, to_payload)`; the
mapping from domain error to problem type happens here and nowhere else. A problem the
mutation's result union does not list (its operation raised an error it did not declare,
`hub.errors.raises`) is a bug: logged and answered as a `Conflict`, and under the test
setting `strict_problems` raised, so the test that reached it fails.

Every operation passes through here (`mutate`, `read`, `read_optional`, `authorized`;
the subscriptions start with a `read`), and here the credential table
(`hub.identity.service.authorize`) is applied, by the operation's root field: a field nested
under a root (a task's current attempt, a payload's project) is served under the root's
row, so it is as open as the operation that reached it and no more.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLUnionType,
    InlineFragmentNode,
    SelectionSetNode,
    get_named_type,
)
from strawberry.types import Info
from strawberry.types.base import get_object_definition
from strawberry.types.nodes import SelectedField

from hub.api.context import HubContext, unauthenticated
from hub.api.problems import ConflictProblem, Problem, to_problem
from hub.errors import Conflict, HubError, NotFound, Unauthenticated
from hub.identity.service import authorize
from hub.identity.views import Actor
from hub.observability.context import note_problem
from hub.storage.unit_of_work import UnitOfWork

T = TypeVar("T")
P = TypeVar("P")

log = logging.getLogger(__name__)


class UndeclaredProblem(AssertionError):
    """An operation raised an error its mutation's result union does not list."""


async def mutate(
    info: Info[HubContext, Any],
    operation: Callable[[UnitOfWork, Actor], T],
    to_payload: Callable[[T, datetime], P],
) -> P | Problem:
    context = info.context
    name = root_field(info)
    unread = _unread(info)

    def run(uow: UnitOfWork) -> tuple[T, datetime]:
        uow.unread = unread
        result = operation(uow, authorize(context.actor_in(uow), name))
        # The payload's `serverTime` is the operation's one instant.
        return result, uow.now()

    try:
        result, instant = await context.runtime.awrite(run)
    except Unauthenticated as exc:
        raise unauthenticated(exc.message) from None
    except HubError as error:
        problem = _declared(info, name, error)
        # An answer, not an error: the operation's log line says which (`problem:CODE`).
        note_problem(problem.code)
        return problem
    return to_payload(result, instant)


# Payload fields an operation may leave out when the request does not select them
# (`UnitOfWork.reads`): each costs the operation a read of its own.
_OMISSIBLE = frozenset({"task"})


def _unread(info: Info[HubContext, Any]) -> frozenset[str]:
    """The omissible payload fields the request does not select, in any fragment of the
    mutation's answer (a field under `@skip`/`@include` counts as selected)."""
    selected: set[str] = set()
    pending: list[Any] = [*info.selected_fields]
    while pending:
        node = pending.pop()
        for child in node.selections:
            if isinstance(child, SelectedField):
                selected.add(child.name)
            else:  # an inline fragment or a fragment spread: its fields are the payload's
                pending.append(child)
    return _OMISSIBLE - selected


def _declared(info: Info[HubContext, Any], name: str, error: HubError) -> Problem:
    """The error's problem, if the mutation's result union lists it; else a bug (an
    error its operation did not declare), answered as the generic `Conflict`."""
    problem = to_problem(error)
    union = get_named_type(info._raw_info.return_type)
    if not isinstance(union, GraphQLUnionType) or any(
        member.name == get_object_definition(problem, strict=True).name for member in union.types
    ):
        return problem
    what = f"{name} answered {type(error).__name__}, which {union.name} does not list"
    if info.context.runtime.settings.strict_problems:
        raise UndeclaredProblem(f"{what}: declare it (hub.errors.raises)")
    log.error("%s; answered Conflict", what)
    return ConflictProblem(code=Conflict.code, message=error.message)


async def read(
    info: Info[HubContext, Any], operation: Callable[[UnitOfWork, Actor], T]
) -> T:
    """Run a query; a domain error becomes a GraphQL error carrying its code."""
    context = info.context
    actor = await authorized(info)
    try:
        return await context.runtime.aread(lambda uow: operation(uow, actor))
    except HubError as error:
        raise GraphQLError(error.message, extensions={"code": error.code}) from None


async def read_optional(
    info: Info[HubContext, Any], operation: Callable[[UnitOfWork, Actor], T]
) -> T | None:
    """Like `read`, but a missing record is `null` rather than an error."""
    context = info.context
    actor = await authorized(info)
    try:
        return await context.runtime.aread(lambda uow: operation(uow, actor))
    except NotFound:
        return None
    except HubError as error:
        raise GraphQLError(error.message, extensions={"code": error.code}) from None


async def authorized(info: Info[HubContext, Any]) -> Actor:
    """The request's actor, if the credential table lets it call this operation (a
    refusal is a GraphQL error with code PERMISSION_DENIED)."""
    actor = await info.context.actor()
    try:
        return authorize(actor, root_field(info))
    except HubError as error:
        raise GraphQLError(error.message, extensions={"code": error.code}) from None


def root_field(info: Info[HubContext, Any]) -> str:
    """The schema name of the root field this resolver runs under (aliases resolved)."""
    path = info.path
    if path.prev is None:
        return info.field_name
    while path.prev is not None:
        path = path.prev
    raw = info._raw_info
    name = _field_named(raw.operation.selection_set, str(path.key), raw.fragments)
    # Not found cannot happen for a valid document; an empty name has no table row,
    # so it is refused rather than guessed.
    return name or ""


def _field_named(
    selections: SelectionSetNode, key: str, fragments: dict[str, FragmentDefinitionNode]
) -> str | None:
    """The field whose response key (alias, else name) is `key`: validation lets one
    key stand for one field only."""
    for node in selections.selections:
        if isinstance(node, FieldNode):
            if (node.alias or node.name).value == key:
                return node.name.value
        elif isinstance(node, InlineFragmentNode):
            found = _field_named(node.selection_set, key, fragments)
            if found is not None:
                return found
        elif isinstance(node, FragmentSpreadNode):
            fragment = fragments.get(node.name.value)
            found = _field_named(fragment.selection_set, key, fragments) if fragment else None
            if found is not None:
                return found
    return None
