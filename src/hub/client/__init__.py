"""The agent client: talks to a running hub server over its GraphQL API, nothing else.

    HubApi        typed GraphQL-over-HTTP calls, one method per operation (`api`),
                  answering the typed records of `results`
    StateFile     the 0600 local state: session, current attempt (with the submission and
                  integration it is for), pending keys (`state`)
    deadline      the conservative local deadline (decisions §2)
    AgentClient   the protocol's client half, one method per `hub agent` command (`agent`)
    PlanningApi   projects and tasks, for `hub project …` and `hub task …` (`planning`),
                  with `Connection`: which server and credential a command uses

Errors are drawn in `hub.client.errors`. Nothing here imports the server's modules: an
import-linter contract in pyproject.toml keeps it that way.
"""

from hub.client.agent import AgentClient, AttemptOutcome, Ended, Recorded, ReviewClaimed, Status
from hub.client.api import FindingDraft, HubApi
from hub.client.deadline import LocalClock, Sent, SystemLocalClock
from hub.client.errors import (
    AttemptNotActive,
    ClientError,
    DeadlinePassed,
    LocalRefusal,
    NothingToClaim,
    PendingOperationConflict,
    ProblemError,
    RequestRejected,
    ServerAnswered,
    StateError,
    TransportFailure,
    Unauthenticated,
    UsageError,
)
from hub.client.results import (
    Attempt,
    AttemptResult,
    AttemptSnapshot,
    Finding,
    FindingResolved,
    Integration,
    IntegrationClaimed,
    IntegrationReported,
    Lease,
    Review,
    ReviewRecorded,
    ReviewStatus,
    ReviewStatusReported,
    Session,
    SessionStarted,
    Submission,
    SubmissionReview,
    Task,
    Validation,
    Viewer,
)
from hub.client.state import AgentState, AttemptRecord, PendingOperation, StateFile

__all__ = [
    "AgentClient",
    "AgentState",
    "Attempt",
    "AttemptNotActive",
    "AttemptOutcome",
    "AttemptRecord",
    "AttemptResult",
    "AttemptSnapshot",
    "ClientError",
    "DeadlinePassed",
    "Ended",
    "Finding",
    "FindingDraft",
    "FindingResolved",
    "HubApi",
    "Integration",
    "IntegrationClaimed",
    "IntegrationReported",
    "Lease",
    "LocalClock",
    "LocalRefusal",
    "NothingToClaim",
    "PendingOperation",
    "PendingOperationConflict",
    "ProblemError",
    "Recorded",
    "RequestRejected",
    "Review",
    "ReviewClaimed",
    "ReviewRecorded",
    "ReviewStatus",
    "ReviewStatusReported",
    "Sent",
    "ServerAnswered",
    "Session",
    "SessionStarted",
    "StateError",
    "StateFile",
    "Status",
    "Submission",
    "SubmissionReview",
    "SystemLocalClock",
    "Task",
    "TransportFailure",
    "Unauthenticated",
    "UsageError",
    "Validation",
    "Viewer",
]
