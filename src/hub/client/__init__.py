"""The agent client: talks to a running hub server over its GraphQL API, nothing else.

    results       the API's objects and the operations' payloads as typed records,
                  read and selected by their declarations (`mapping`)
    Mutation      one request as a value: name, input, the payload record (`operations`)
    HubApi        GraphQL over HTTP: sends a `Mutation`, and the queries the agent
                  client needs (`api`); every document is a verb's file under
                  graphql/operations/ (`hub.verbs`, shared with the server)
    StateFile     the 0600 local state: session, current attempt (with the submission and
                  integration it is for), pending keys (`state`)
    deadline      the conservative local deadline (docs/agent-cli.md)
    engine        how each command sends its request and keeps the state file in step
    AgentClient   the protocol's client half, one method per `hub agent` command (`agent`,
                  with `reviewing`, `integrating`, `delivery`, `knowledge`, `artifacts`
                  and `adapter`, what the harness saw); `briefs`
                  says what a task is and `git` reads the checkout (never changing it)
    hooks         `hub agent hook EVENT`: a harness's hook payload told to hub, within
                  a time budget; `harness_settings` puts hub's hooks into a harness's
                  settings and takes them out
    PlanningApi   projects and tasks, for `hub project …` and `hub task …` (`planning`),
                  with `Connection`: which server and credential a command uses
                  (`connection`)
    plans         plan files read as import items, one reader per format
    importing     `hub import`: a plan's items streamed to the server, its key pending

Errors are drawn in `hub.client.errors`. Nothing here imports the server's modules: an
import-linter contract in pyproject.toml keeps it that way.
"""

from hub.client.agent import (
    AgentClient,
    AttemptOutcome,
    Claimed,
    Ended,
    Recorded,
    Standing,
    Status,
    standing,
)
from hub.client.api import HubApi
from hub.client.connection import Connection
from hub.client.deadline import LocalClock, Sent, SystemLocalClock
from hub.client.errors import (
    AttemptExpired,
    AttemptNotActive,
    CheckoutRefused,
    ClientError,
    DeadlinePassed,
    GitFailed,
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
from hub.client.mapping import from_graphql, selection, to_graphql
from hub.client.operations import Mutation
from hub.client.results import (
    Attempt,
    AttemptChanged,
    AttemptResult,
    AttemptSnapshot,
    Evidence,
    EvidenceRecorded,
    Finding,
    FindingResolved,
    Integration,
    IntegrationClaimed,
    IntegrationReported,
    Job,
    JobReported,
    Lease,
    RecoveryClaimed,
    RecoveryPacket,
    Repository,
    Reservation,
    ReservationsReported,
    Review,
    ReviewRecorded,
    ReviewStatus,
    ReviewStatusReported,
    Session,
    SessionStarted,
    Submission,
    SubmissionReview,
    Task,
    TaskBrief,
    Validation,
    ValidationRecorded,
    Viewer,
    Worktree,
)
from hub.client.reviewing import FindingDraft
from hub.client.state import AgentState, AttemptRecord, PendingOperation, StateFile

__all__ = [
    "AgentClient",
    "AgentState",
    "Attempt",
    "AttemptChanged",
    "AttemptExpired",
    "AttemptNotActive",
    "AttemptOutcome",
    "AttemptRecord",
    "AttemptResult",
    "AttemptSnapshot",
    "CheckoutRefused",
    "Claimed",
    "ClientError",
    "Connection",
    "DeadlinePassed",
    "Ended",
    "Evidence",
    "EvidenceRecorded",
    "Finding",
    "FindingDraft",
    "FindingResolved",
    "GitFailed",
    "HubApi",
    "Integration",
    "IntegrationClaimed",
    "IntegrationReported",
    "Job",
    "JobReported",
    "Lease",
    "LocalClock",
    "LocalRefusal",
    "Mutation",
    "NothingToClaim",
    "PendingOperation",
    "PendingOperationConflict",
    "ProblemError",
    "Recorded",
    "RecoveryClaimed",
    "RecoveryPacket",
    "Repository",
    "RequestRejected",
    "Reservation",
    "ReservationsReported",
    "Review",
    "ReviewRecorded",
    "ReviewStatus",
    "ReviewStatusReported",
    "Sent",
    "ServerAnswered",
    "Session",
    "SessionStarted",
    "Standing",
    "StateError",
    "StateFile",
    "Status",
    "Submission",
    "SubmissionReview",
    "SystemLocalClock",
    "Task",
    "TaskBrief",
    "TransportFailure",
    "Unauthenticated",
    "UsageError",
    "Validation",
    "ValidationRecorded",
    "Viewer",
    "Worktree",
    "from_graphql",
    "selection",
    "standing",
    "to_graphql",
]
