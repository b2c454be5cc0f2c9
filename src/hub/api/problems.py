"""GraphQL problem types, the one mapping from domain errors to them, and each
mutation's result union: its payload and the problems its operations declare."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Final, Union

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


# Each problem type by the domain error it answers; a subclass is answered as its base.
PROBLEM_TYPES: Final[Mapping[type[errors.HubError], type[Problem]]] = {
    errors.NotFound: NotFoundProblem,
    errors.PermissionDenied: PermissionDeniedProblem,
    errors.Conflict: ConflictProblem,
    errors.LeaseExpired: LeaseExpiredProblem,
    errors.StaleGeneration: StaleGenerationProblem,
    errors.InvalidTransition: InvalidTransitionProblem,
    errors.DependencyNotMet: DependencyNotMetProblem,
    errors.IdempotencyConflict: IdempotencyConflictProblem,
    errors.IdempotencyReceiptExpired: IdempotencyReceiptExpiredProblem,
    errors.ValidationFailed: ValidationFailedProblem,
    errors.QuotaExceeded: QuotaExceededProblem,
    errors.Blocked: BlockedProblem,
    AmbiguousProjectError: AmbiguousProjectProblem,
}

# In the exported SDL's order (also the order of every result union's problems).
ALL_PROBLEMS: Final[tuple[type[Problem], ...]] = tuple(PROBLEM_TYPES.values())

# What every mutation can answer, whatever its operation: the credential table refuses
# it (`api.operations.mutate` → `identity.permissions.authorize`), or a concurrent
# writer stored conflicting data first (`Runtime.write`); `Conflict` is also the answer
# for an error an operation failed to declare (logged as a bug).
EVERY_MUTATION: Final = (errors.PermissionDenied, errors.Conflict)


def problem_type(error: type[errors.HubError]) -> type[Problem]:
    """The problem type a client sees for a kind of domain error (`to_problem`'s)."""
    for kind in error.__mro__:
        if kind in PROBLEM_TYPES:
            return PROBLEM_TYPES[kind]
    return ConflictProblem


@dataclass(frozen=True)
class ResultUnion:
    """A mutation's result union, and where its members come from."""

    name: str
    payload: type
    operations: tuple[Callable[..., Any], ...]
    problems: tuple[type[Problem], ...]

    @property
    def annotation(self) -> Any:
        members = (self.payload, *self.problems)
        return Annotated[Union[members], strawberry.union(self.name)]  # noqa: UP007


# Every mutation's union by its name, as built (a test walks the SDL against it).
RESULT_UNIONS: dict[str, ResultUnion] = {}


def result_union(name: str, payload: type, *operations: Callable[..., Any]) -> Any:
    """The union `name`: `payload`, then the problems `operations` declare
    (`hub.errors.raises`) and those every mutation can answer, in `ALL_PROBLEMS`'s
    order. A resolver names it as its field's type (`strawberry.mutation(graphql_type=…)`)."""
    declared = {*EVERY_MUTATION}
    for operation in operations:
        declared |= errors.declared_errors(operation)
    kinds = {problem_type(error) for error in declared}
    union = ResultUnion(name, payload, operations, tuple(p for p in ALL_PROBLEMS if p in kinds))
    RESULT_UNIONS[name] = union
    return union.annotation


def to_problem(error: errors.HubError) -> Problem:
    """The problem a client sees for a domain error; subclasses map by their base
    (`PROBLEM_TYPES`), and the problems with fields beyond code and message fill them."""
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
    return problem_type(type(error))(code=code, message=message)
