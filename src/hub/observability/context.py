"""What the log lines and spans of one request share: its request id, the operation it
runs, and who sent it.

A `RequestContext` lives in a context variable for the length of an HTTP request or a
websocket connection (`request_scope`, opened by `hub.observability.access`), and one
for each GraphQL operation inside it (`operation_scope`: a websocket carries many). The
log formatters read it at each line, so a line says which request it belongs to
without its caller passing anything along.

Context variables follow `await`s and the tasks a request starts, but not the worker
threads its transactions run on: `hub.runtime` hands each operation's context over
explicitly (`contextvars.copy_context`), the SQLite group-commit writer included. The
object is shared, not copied, so the principal a transaction authenticates
(`identify`, from the identity module) is known to the request's access log line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from hub.ids import new_id

# A client's X-Request-ID is kept only if it is a plain token a log line can carry as is.
_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:/+=@-]{1,128}")


@dataclass(slots=True)
class RequestContext:
    request_id: str
    principal_id: str | None = None
    session_id: str | None = None
    # The GraphQL operation's label (its root field), on an operation's context only.
    operation: str | None = None
    # `problem:<CODE>` when a mutation answered with one of its typed problems.
    problem: str | None = None
    # An operation's context points at its request's, which learns who the caller was.
    parent: RequestContext | None = None


_CURRENT: ContextVar[RequestContext | None] = ContextVar("hub_request", default=None)


def current() -> RequestContext | None:
    return _CURRENT.get()


def request_id_from(presented: str | None) -> str:
    """The client's request id if it is sane (short, printable token characters), else
    a new one: a log line never carries what a client chose to put in it."""
    if presented is not None and _SANE_REQUEST_ID.fullmatch(presented):
        return presented
    return new_id("req")


@contextmanager
def request_scope(request_id: str) -> Iterator[RequestContext]:
    context = RequestContext(request_id=request_id)
    token = _CURRENT.set(context)
    try:
        yield context
    finally:
        _CURRENT.reset(token)


@contextmanager
def operation_scope() -> Iterator[RequestContext]:
    """One GraphQL operation's context, under its request's (a schema executed outside
    any request, as some tests do, gets a request id of its own)."""
    parent = _CURRENT.get()
    context = RequestContext(
        request_id=parent.request_id if parent else new_id("req"),
        principal_id=parent.principal_id if parent else None,
        session_id=parent.session_id if parent else None,
        parent=parent,
    )
    token = _CURRENT.set(context)
    try:
        yield context
    finally:
        _CURRENT.reset(token)


def identify(principal_id: str, session_id: str | None) -> None:
    """Say who the current request is from (ids only: never a credential)."""
    context = _CURRENT.get()
    while context is not None:
        context.principal_id = principal_id
        context.session_id = session_id
        context = context.parent


def note_problem(code: str) -> None:
    """The current operation answered with a typed problem (not an error)."""
    context = _CURRENT.get()
    if context is not None:
        context.problem = f"problem:{code}"
