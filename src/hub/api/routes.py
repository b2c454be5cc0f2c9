"""What the plain-HTTP routes of the API share (`POST /api/artifacts`,
`POST /api/imports`): the bearer token, the caller authorized by the credential table
inside a transaction, the query's parameters checked, and a refusal answered as
`{"error": {"code", "message", …}}` with its status (`hub.errors.http_problem`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from hub.errors import HubError, Unauthenticated, Unavailable, ValidationFailed, http_problem
from hub.identity import service as identity
from hub.identity.views import Actor
from hub.storage.unit_of_work import UnitOfWork


def bearer(request: Request) -> str:
    """The request's bearer token, or `Unauthenticated`."""
    token = identity.bearer_token(request.headers.get("authorization"))
    if token is None:
        raise Unauthenticated("a bearer token is required (Authorization: Bearer …)")
    return token


def caller(token: str, operation: str) -> Callable[[UnitOfWork], Actor]:
    """Authenticates the token inside a transaction and authorizes it for `operation`
    (its row in the credential table): `Unauthenticated` if the credential does not hold,
    `PermissionDenied` if the table refuses it."""

    def authorized(uow: UnitOfWork) -> Actor:
        return identity.authorize(identity.authenticate(uow, token), operation)

    return authorized


def known_parameters(query: QueryParams, known: Iterable[str], what: str) -> None:
    """Refuse a query parameter the route does not take (a misspelt one is never
    silently ignored)."""
    names = list(known)
    unknown = sorted(set(query) - set(names))
    if unknown:
        raise ValidationFailed(
            unknown[0], f"is not a parameter of {what} (they are {', '.join(names)})"
        )


def refusal(error: HubError | Unauthenticated | Unavailable) -> Response:
    status, body = http_problem(error)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else {}
    if isinstance(error, Unavailable):
        headers["Retry-After"] = str(error.retry_after_seconds)
    return JSONResponse(body, status_code=status, headers=headers or None)
