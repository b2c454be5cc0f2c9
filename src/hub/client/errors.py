"""What the agent client reports instead of a result, drawn in one place.

    ClientError
    ├── ServerAnswered            a definite answer: this request changed nothing
    │   ├── ProblemError          a mutation returned a Problem (code, message, details)
    │   │   └── NothingToClaim    a claim of the next task found none ready (NotFound,
    │   │                         code NO_ELIGIBLE_TASK): an answer, not a failure
    │   ├── Unauthenticated       the bearer token was refused (UNAUTHENTICATED)
    │   └── RequestRejected       GraphQL errors or a 4xx: the request itself was refused
    ├── TransportFailure          no definite answer; `uncertain` says whether the server
    │                             may have applied the request (timeout, reset, 5xx)
    ├── LocalRefusal              the client refused without asking the server
    │   ├── LikelyDuplicate       `hub task create` found a likely duplicate unfinished
    │   │                         (details: the matches); --force and the links go on
    │   ├── DeadlinePassed        past the conservative local deadline: reconcile first
    │   ├── AttemptNotActive      the attempt in the state file has ended or lost the task
    │   ├── AttemptExpired        a claim refused: the state file's attempt expired and
    │   │                         still holds its task (`hub agent recover TASK`)
    │   └── CheckoutRefused       the checkout cannot be used as it is (dirty, detached);
    │                             the client never stashes or resets it
    ├── StateError                the local state file is missing, unreadable or in the way
    │   └── PendingOperationConflict  a different request of the same kind is unresolved
    └── UsageError                the arguments cannot work (e.g. a server URL without http)
        └── GitFailed             git could not answer (not a checkout, a remote unreachable)

The command line maps them to exit codes: problems and refusals 1, state and usage
errors 2, transport failures 3 (see `hub.cli.agent`); `NothingToClaim` is reported as
"nothing to do" with exit 0.
"""

from __future__ import annotations

from typing import Any


class ClientError(Exception):
    code = "CLIENT_ERROR"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ServerAnswered(ClientError):
    pass


class ProblemError(ServerAnswered):
    """The server refused the mutation with one of its problem types."""

    def __init__(
        self, typename: str, code: str, message: str, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.typename = typename
        self.code = code
        self.details = details or {}


class NothingToClaim(ProblemError):
    """Nothing in the project is ready for this session to claim now. The server answers
    a claim of the next eligible task with the `NotFound` problem and this code; the
    command line says "nothing to do" and exits 0."""

    CODE = "NO_ELIGIBLE_TASK"


class Unauthenticated(ServerAnswered):
    code = "UNAUTHENTICATED"


class RequestRejected(ServerAnswered):
    """GraphQL errors (other than authentication) or a 4xx status."""

    def __init__(self, message: str, code: str = "REQUEST_REJECTED") -> None:
        super().__init__(message)
        self.code = code


class TransportFailure(ClientError):
    """No definite answer arrived.

    `uncertain` is False only when the request provably never left (the connection
    could not be opened); otherwise the server may have applied it.
    """

    code = "TRANSPORT_FAILURE"

    def __init__(self, message: str, *, uncertain: bool) -> None:
        super().__init__(message)
        self.uncertain = uncertain


class LocalRefusal(ClientError):
    code = "LOCAL_REFUSAL"


class LikelyDuplicate(LocalRefusal):
    """A task about to be created looks like one that is neither done nor closed
    (`similarTasks`): nothing was created. `details` holds the matches."""

    code = "LIKELY_DUPLICATE"

    def __init__(self, message: str, details: dict[str, Any]) -> None:
        super().__init__(message)
        self.details = details


class DeadlinePassed(LocalRefusal):
    code = "LOCAL_DEADLINE_PASSED"


class AttemptNotActive(LocalRefusal):
    code = "ATTEMPT_NOT_ACTIVE"


class AttemptExpired(LocalRefusal):
    code = "ATTEMPT_EXPIRED"


class CheckoutRefused(LocalRefusal):
    code = "CHECKOUT_REFUSED"


class StateError(ClientError):
    code = "LOCAL_STATE"


class PendingOperationConflict(StateError):
    code = "PENDING_OPERATION"


class UsageError(ClientError):
    code = "USAGE"


class GitFailed(UsageError):
    code = "GIT"
