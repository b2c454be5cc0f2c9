"""GraphQL problem types, and the one mapping from domain errors to them."""

from __future__ import annotations

import strawberry

from hub import errors
from hub.projects.errors import AmbiguousProject as AmbiguousProjectError


@strawberry.interface(description="Why a mutation did not do what was asked.")
class Problem:
    code: str
    message: str


@strawberry.type(name="NotFound")
class NotFoundProblem(Problem):
    what: str


@strawberry.type(name="PermissionDenied")
class PermissionDeniedProblem(Problem):
    pass


@strawberry.type(name="Conflict")
class ConflictProblem(Problem):
    pass


@strawberry.type(name="LeaseExpired")
class LeaseExpiredProblem(Problem):
    pass


@strawberry.type(name="StaleGeneration")
class StaleGenerationProblem(Problem):
    pass


@strawberry.type(name="InvalidTransition")
class InvalidTransitionProblem(Problem):
    pass


@strawberry.type(name="DependencyNotMet")
class DependencyNotMetProblem(Problem):
    pass


@strawberry.type(name="IdempotencyConflict")
class IdempotencyConflictProblem(Problem):
    pass


@strawberry.type(name="IdempotencyReceiptExpired")
class IdempotencyReceiptExpiredProblem(Problem):
    pass


@strawberry.type(name="ValidationFailed")
class ValidationFailedProblem(Problem):
    field: str


@strawberry.type(name="QuotaExceeded")
class QuotaExceededProblem(Problem):
    pass


@strawberry.type(name="Blocked")
class BlockedProblem(Problem):
    blockers: list[str]


@strawberry.type
class ProjectCandidate:
    id: strawberry.ID
    name: str
    matched: str = strawberry.field(description="What matched: id, alias or remote.")


@strawberry.type(name="AmbiguousProject")
class AmbiguousProjectProblem(Problem):
    candidates: list[ProjectCandidate]


AnyProblem = (
    NotFoundProblem
    | PermissionDeniedProblem
    | ConflictProblem
    | LeaseExpiredProblem
    | StaleGenerationProblem
    | InvalidTransitionProblem
    | DependencyNotMetProblem
    | IdempotencyConflictProblem
    | IdempotencyReceiptExpiredProblem
    | ValidationFailedProblem
    | QuotaExceededProblem
    | BlockedProblem
    | AmbiguousProjectProblem
)

ALL_PROBLEMS: tuple[type, ...] = (
    NotFoundProblem,
    PermissionDeniedProblem,
    ConflictProblem,
    LeaseExpiredProblem,
    StaleGenerationProblem,
    InvalidTransitionProblem,
    DependencyNotMetProblem,
    IdempotencyConflictProblem,
    IdempotencyReceiptExpiredProblem,
    ValidationFailedProblem,
    QuotaExceededProblem,
    BlockedProblem,
    AmbiguousProjectProblem,
)


def to_problem(error: errors.HubError) -> AnyProblem:
    """The problem a client sees for a domain error; subclasses map by their base."""
    code, message = error.code, error.message
    match error:
        case AmbiguousProjectError():
            return AmbiguousProjectProblem(
                code=code,
                message=message,
                candidates=[
                    ProjectCandidate(id=strawberry.ID(c.id), name=c.name, matched=c.matched)
                    for c in error.candidates
                ],
            )
        case errors.NotFound():
            return NotFoundProblem(code=code, message=message, what=error.what)
        case errors.ValidationFailed():
            return ValidationFailedProblem(code=code, message=message, field=error.field)
        case errors.Blocked():
            return BlockedProblem(code=code, message=message, blockers=error.blockers)
        case errors.PermissionDenied():
            return PermissionDeniedProblem(code=code, message=message)
        case errors.LeaseExpired():
            return LeaseExpiredProblem(code=code, message=message)
        case errors.StaleGeneration():
            return StaleGenerationProblem(code=code, message=message)
        case errors.InvalidTransition():
            return InvalidTransitionProblem(code=code, message=message)
        case errors.DependencyNotMet():
            return DependencyNotMetProblem(code=code, message=message)
        case errors.IdempotencyConflict():
            return IdempotencyConflictProblem(code=code, message=message)
        case errors.IdempotencyReceiptExpired():
            return IdempotencyReceiptExpiredProblem(code=code, message=message)
        case errors.QuotaExceeded():
            return QuotaExceededProblem(code=code, message=message)
        case errors.Conflict():
            return ConflictProblem(code=code, message=message)
    return ConflictProblem(code=code, message=message)
