"""The domain error hierarchy, drawn in one place.

    HubError
    ├── NotFound                 a referenced record does not exist
    ├── PermissionDenied         authenticated, but this actor may not do this
    ├── Conflict                 the state changed under the caller, or a uniqueness rule
    ├── LeaseExpired             coordinator time reached the lease's expiresAt
    ├── StaleGeneration          the attempt no longer holds the task's current generation
    ├── InvalidTransition        the state machine does not allow this step now
    ├── DependencyNotMet         prerequisites are not complete
    ├── IdempotencyConflict      the key was used before with a different request
    ├── IdempotencyReceiptExpired the key's receipt was pruned; the result is gone
    ├── ValidationFailed         the input is malformed; names the field
    ├── QuotaExceeded            a size or count limit
    ├── Blocked                  something else holds what is needed; lists blockers
    └── AmbiguousProject         (projects) an alias matches several projects

`Unauthenticated` and `Unavailable` stand apart: they are not problems a mutation
returns but transport-level failures (a GraphQL error with `extensions.code` =
"UNAUTHENTICATED" or "UNAVAILABLE"; the latter also answers HTTP 503 with Retry-After).
So is a request over its credential's rate (`RATE_LIMITED`, answered with HTTP 429
before the request is read: `hub.api.rate_limits`).
Each module adds its specific subclasses in its own `errors.py`; the API maps
them to GraphQL problem types by base class, in `hub.api.problems`.

Every operation a mutation calls says which of them it can raise (`raises`, beside
its code); the mutation's result union lists exactly those problems.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from typing import Any, Final, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class ProblemCode(StrEnum):
    """Every problem code a client may see (`extensions.code`, a problem's `code`)."""

    HUB_ERROR = "HUB_ERROR"
    NOT_FOUND = "NOT_FOUND"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    CONFLICT = "CONFLICT"
    LEASE_EXPIRED = "LEASE_EXPIRED"
    STALE_GENERATION = "STALE_GENERATION"
    INVALID_TRANSITION = "INVALID_TRANSITION"
    DEPENDENCY_NOT_MET = "DEPENDENCY_NOT_MET"
    IDEMPOTENCY_CONFLICT = "IDEMPOTENCY_CONFLICT"
    IDEMPOTENCY_RECEIPT_EXPIRED = "IDEMPOTENCY_RECEIPT_EXPIRED"
    VALIDATION_FAILED = "VALIDATION_FAILED"
    QUOTA_EXCEEDED = "QUOTA_EXCEEDED"
    BLOCKED = "BLOCKED"
    AMBIGUOUS_PROJECT = "AMBIGUOUS_PROJECT"
    NO_ELIGIBLE_TASK = "NO_ELIGIBLE_TASK"
    DUPLICATE_OF_UNFINISHED = "DUPLICATE_OF_UNFINISHED"
    UNAUTHENTICATED = "UNAUTHENTICATED"  # a transport-level failure, not a problem type
    UNAVAILABLE = "UNAVAILABLE"  # likewise: the database cannot serve now; retry later
    # Transport-level too: the credential made more requests than its rate allows
    # (HTTP 429 with Retry-After; `hub.api.rate_limits`).
    RATE_LIMITED = "RATE_LIMITED"


class HubError(Exception):
    code: ProblemCode = ProblemCode.HUB_ERROR
    # The status of an HTTP answer carrying it, where not its code's (`HTTP_STATUS`).
    http_status: int | None = None

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def details(self) -> dict[str, object]:
        """What a JSON answer carries beside `code` and `message` (`http_problem`)."""
        return {}


class NotFound(HubError):
    code = ProblemCode.NOT_FOUND

    def __init__(self, what: str, ident: str) -> None:
        super().__init__(f"{what} {ident!r} does not exist")
        self.what = what
        self.ident = ident

    def details(self) -> dict[str, object]:
        return {"what": self.what}


class PermissionDenied(HubError):
    code = ProblemCode.PERMISSION_DENIED


class Conflict(HubError):
    code = ProblemCode.CONFLICT


class LeaseExpired(HubError):
    code = ProblemCode.LEASE_EXPIRED


class StaleGeneration(HubError):
    code = ProblemCode.STALE_GENERATION


class InvalidTransition(HubError):
    code = ProblemCode.INVALID_TRANSITION


class DependencyNotMet(HubError):
    code = ProblemCode.DEPENDENCY_NOT_MET


class IdempotencyConflict(HubError):
    code = ProblemCode.IDEMPOTENCY_CONFLICT


class IdempotencyReceiptExpired(HubError):
    code = ProblemCode.IDEMPOTENCY_RECEIPT_EXPIRED


class ValidationFailed(HubError):
    code = ProblemCode.VALIDATION_FAILED

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field

    def details(self) -> dict[str, object]:
        return {"field": self.field}


class QuotaExceeded(HubError):
    code = ProblemCode.QUOTA_EXCEEDED


class Blocked(HubError):
    code = ProblemCode.BLOCKED

    def __init__(self, message: str, blockers: Sequence[str]) -> None:
        super().__init__(message)
        self.blockers = list(blockers)

    def details(self) -> dict[str, object]:
        return {"blockers": self.blockers}


class Unauthenticated(Exception):
    """No valid credential: missing, unknown, revoked, or of the wrong kind."""

    def __init__(self, message: str = "a valid bearer token is required") -> None:
        super().__init__(message)
        self.message = message


class Unavailable(Exception):
    """The database (or the disk) cannot serve the request now: unreachable, read-only,
    full or too busy (docs/ops/faults.md). Nothing of the operation is known to be committed
    unless the connection broke during its commit; either way the client retries with
    the same idempotency key, which replays a change that did land."""

    code = ProblemCode.UNAVAILABLE
    retry_after_seconds = 2

    def __init__(self, reason: str) -> None:
        super().__init__(f"unavailable: {reason}; retry shortly")
        self.reason = reason
        self.message = str(self)


# The routes that answer plain HTTP rather than GraphQL (uploads and downloads of
# artifacts) answer a problem with this status and `{"error": {"code", "message", …}}`.
HTTP_STATUS: Final[Mapping[ProblemCode, int]] = {
    ProblemCode.VALIDATION_FAILED: 400,
    ProblemCode.UNAUTHENTICATED: 401,
    ProblemCode.PERMISSION_DENIED: 403,
    ProblemCode.NOT_FOUND: 404,
    ProblemCode.QUOTA_EXCEEDED: 413,
    ProblemCode.RATE_LIMITED: 429,
    ProblemCode.HUB_ERROR: 500,
}
# Any other problem: the request conflicts with the state of what it names.
_CONFLICT_STATUS = 409


def http_problem(
    error: HubError | Unauthenticated | Unavailable,
) -> tuple[int, dict[str, Any]]:
    """The status and JSON body an HTTP route answers a refusal with."""
    details: dict[str, object]
    if isinstance(error, Unauthenticated):
        code, status, details = ProblemCode.UNAUTHENTICATED, 401, {}
    elif isinstance(error, Unavailable):
        code, status = ProblemCode.UNAVAILABLE, 503
        details = {"retryable": True, "retryAfterSeconds": error.retry_after_seconds}
    else:
        code, details = error.code, error.details()
        status = error.http_status or HTTP_STATUS.get(code, _CONFLICT_STATUS)
    return status, {"error": {"code": str(code), "message": error.message, **details}}


_DECLARED = "__hub_raises__"


def raises(*kinds: type[HubError]) -> Callable[[F], F]:
    """Declare the domain errors an operation can raise, its own and those of what it
    calls (base classes suffice: a subclass is answered as its base's problem). The API
    builds the mutation's result union from it (`hub.api.problems.result_union`), so a
    client is offered only the problems it can actually get."""

    def declare(operation: F) -> F:
        setattr(operation, _DECLARED, frozenset(kinds))
        return operation

    return declare


def declared_errors(operation: Callable[..., Any]) -> frozenset[type[HubError]]:
    """What `raises` declared for `operation`; an undeclared operation is refused."""
    declared: frozenset[type[HubError]] | None = getattr(operation, _DECLARED, None)
    if declared is None:
        name = getattr(operation, "__qualname__", repr(operation))
        raise TypeError(f"{name} declares no errors (hub.errors.raises)")
    return declared
