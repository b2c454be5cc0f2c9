"""What the agent operations answer: the API's objects and payloads as typed records.

Each record declares the GraphQL fields it holds, named as the schema names them (in
snake case). `hub.client.mapping` derives from that one declaration both what a
document selects and how an answer is read: a field is added in one place. A payload
record names its GraphQL type (`graphql_type`), which a mutation's answer must be.
Those that report a lease carry `sent` (when the request left, for the local deadline);
those the command line prints with `--json` keep `raw`, the payload as received.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

from hub.client.deadline import Sent
from hub.client.mapping import GIVEN, RECEIVED


@dataclass(frozen=True)
class Ref:
    id: str


@dataclass(frozen=True)
class Lease:
    attempt_id: str
    generation: int
    expires_at: datetime
    heartbeat_seconds: int


@dataclass(frozen=True)
class Task:
    id: str
    project_id: str
    kind: str
    title: str
    state: str
    effective_state: str
    generation: int
    criteria_revision: int
    current_attempt_id: str | None
    subject_submission_id: str | None  # REVIEW and INTEGRATION tasks: what they are for
    # What the work is: the outcome wanted and the criteria (of `criteria_revision`).
    outcome: str = ""
    acceptance_criteria: tuple[str, ...] = ()
    priority: int = 0


@dataclass(frozen=True)
class Attempt:
    id: str
    project_id: str
    task_id: str
    session_id: str
    generation: int
    state: str
    kind: str
    is_current: bool
    lease_expired: bool
    expires_at: datetime
    lease_seconds: int
    heartbeat_seconds: int
    criteria_revision: int
    disposition: str | None
    # Read-time judgement: the task's live, current attempt, which may change things now.
    # Absent (None) from answers that do not select it.
    holds_authority: bool | None = None


@dataclass(frozen=True)
class AttemptResult:
    """A claim (ClaimPayload): the task, attempt and lease after it."""

    graphql_type: ClassVar[str] = "ClaimPayload"

    task: Task
    attempt: Attempt
    lease: Lease
    replay: bool
    server_time: datetime
    sent: Sent = field(metadata=GIVEN)
    raw: dict[str, Any] = field(metadata=RECEIVED)


@dataclass(frozen=True)
class AttemptChanged(AttemptResult):
    """An ownership-dependent change (AttemptPayload), with what it made."""

    graphql_type: ClassVar[str] = "AttemptPayload"

    checkpoint: Ref | None
    submission: SubmissionRef | None
    worktree: Ref | None


@dataclass(frozen=True)
class Session:
    id: str
    principal_id: str
    workstation: str
    harness: str
    harness_instance: str
    started_at: datetime
    ended_at: datetime | None


@dataclass(frozen=True)
class SessionStarted:
    graphql_type: ClassVar[str] = "StartSessionPayload"

    session: Session
    token: str
    server_time: datetime


@dataclass(frozen=True)
class SessionEnded:
    graphql_type: ClassVar[str] = "EndSessionPayload"

    session: Session
    server_time: datetime


@dataclass(frozen=True)
class PrincipalRef:
    id: str
    name: str


@dataclass(frozen=True)
class Viewer:
    principal: PrincipalRef
    credential: str
    session: Session | None
    server_time: datetime
    sent: Sent = field(metadata=GIVEN)


@dataclass(frozen=True)
class AttemptSnapshot:
    """An attempt read now, with a serverTime sampled in the same request."""

    attempt: Attempt
    server_time: datetime
    sent: Sent


@dataclass(frozen=True)
class AdapterEventRecorded:
    """What the harness saw, recorded: the session, and its current attempts with a
    serverTime read in the same request (a lease is counted from `sent`)."""

    graphql_type: ClassVar[str] = "RecordAdapterEventPayload"

    session: Session
    attempts: list[Attempt]
    server_time: datetime
    sent: Sent = field(metadata=GIVEN)


# --- review and integration ----------------------------------------------------------


@dataclass(frozen=True)
class Submission:
    id: str
    project_id: str
    task_id: str
    attempt_id: str
    outcome: str
    result: str
    handoff: str
    candidate_revision: str | None
    criteria_revision: int
    policy_revision: int
    created_at: datetime


@dataclass(frozen=True)
class SubmissionRef:
    id: str
    outcome: str
    candidate_revision: str | None


@dataclass(frozen=True)
class Finding:
    id: str
    submission_id: str
    severity: str
    title: str
    remedy: str
    detail: str
    required: bool
    resolution: str | None
    resolved_at: datetime | None
    # A contributor's proposal, waiting for the author, an operator or a later reviewer.
    proposed_resolution: str | None
    review_id: str
    task_id: str
    resolution_evidence: list[str]
    resolved_by: str | None
    proposed_by: str | None
    proposed_at: datetime | None
    created_at: datetime


@dataclass(frozen=True)
class Review:
    id: str
    submission_id: str
    reviewer_kind: str
    principal_id: str
    attempt_id: str | None
    decision: str
    summary: str
    candidate_revision: str | None
    findings: list[Finding]
    created_at: datetime
    task_id: str
    session_id: str | None
    evidence: list[str]
    policy_revision: int


@dataclass(frozen=True)
class ReviewStatus:
    """Where a submission stands against the review policy pinned to it."""

    submission_id: str
    review_policy: str
    agent_approvals: int
    required_agent_approvals: int
    human_approvals: int
    required_human_approvals: int
    rejected: bool
    unresolved_required_findings: list[str]
    human_review_requested: bool
    approved: bool
    ready_for_integration: bool
    waiting_reason: str | None
    task_id: str
    policy_revision: int


@dataclass(frozen=True)
class SubmissionReview:
    """A submission to review: its task, candidate, handoff, reviews and findings so far."""

    submission: Submission
    task: Task
    status: ReviewStatus
    reviews: list[Review]
    findings: list[Finding]
    raw: dict[str, Any] = field(metadata=RECEIVED)


@dataclass(frozen=True)
class ReviewRecorded:
    """submitReview's answer: the review as recorded and the submission's status after it."""

    graphql_type: ClassVar[str] = "ReviewPayload"

    review: Review
    status: ReviewStatus
    server_time: datetime
    raw: dict[str, Any] = field(metadata=RECEIVED)


@dataclass(frozen=True)
class ReviewStatusReported:
    graphql_type: ClassVar[str] = "ReviewStatusPayload"

    status: ReviewStatus
    server_time: datetime
    raw: dict[str, Any] = field(metadata=RECEIVED)


@dataclass(frozen=True)
class FindingResolved:
    graphql_type: ClassVar[str] = "ResolveFindingPayload"

    finding: Finding
    server_time: datetime
    raw: dict[str, Any] = field(metadata=RECEIVED)


@dataclass(frozen=True)
class Validation:
    id: str
    result_revision: str
    passed: bool
    evidence_ids: list[str]
    integration_id: str
    summary: str
    reported_by: str
    created_at: datetime


@dataclass(frozen=True)
class IntegrationReport:
    outcome: str
    base_revision: str | None
    result_revision: str | None
    verified_how: str
    note: str
    created_at: datetime
    id: str
    reported_by: str


@dataclass(frozen=True)
class Integration:
    id: str
    project_id: str
    submission_id: str
    task_id: str
    integration_task_id: str
    attempt_id: str
    binding: str
    target_branch: str
    candidate_revision: str
    expected_base_revision: str
    result_revision: str | None
    state: str
    reservation_held: bool
    validations: list[Validation]
    reports: list[IntegrationReport]
    repository_id: str
    policy_revision: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class IntegrationClaimed(AttemptResult):
    """claimIntegration's answer: a claim of the integration task, plus the integration
    holding the target's exclusive reservation."""

    graphql_type: ClassVar[str] = "ClaimIntegrationPayload"

    integration: Integration
    # Taken over from an earlier attempt that left it unfinished: read its reports first.
    inherited: bool = False


@dataclass(frozen=True)
class IntegrationReported:
    """The integration after a result or a reconciliation was recorded."""

    graphql_type: ClassVar[str] = "IntegrationPayload"

    integration: Integration
    server_time: datetime
    raw: dict[str, Any] = field(metadata=RECEIVED)


@dataclass(frozen=True)
class ValidationRecorded(IntegrationReported):
    """The integration after a validation, and the validation recorded."""

    graphql_type: ClassVar[str] = "RecordValidationPayload"

    validation: Validation


# --- repositories, worktrees, recovery ------------------------------------------------


@dataclass(frozen=True)
class Repository:
    id: str
    project_id: str
    remote_url: str
    binding: str
    default_branch: str


@dataclass(frozen=True)
class Worktree:
    id: str
    task_id: str
    attempt_id: str
    repository_id: str
    worktree_id: str  # the checkout's identity
    path: str
    branch: str
    base_revision: str
    workstation: str
    released_at: datetime | None


@dataclass(frozen=True)
class Checkpoint:
    id: str
    attempt_id: str
    summary: str
    revision: str | None
    branch: str | None
    published: bool
    created_at: datetime


@dataclass(frozen=True)
class Job:
    id: str
    job_id: str  # the client's own id
    task_id: str
    attempt_id: str
    operation: str
    invocation: str
    status: str
    exit_status: int | None
    freshness: str
    started_at: datetime | None
    finished_at: datetime | None
    registered_at: datetime


@dataclass(frozen=True)
class Reservation:
    id: str
    resource_id: str
    resource_key: str
    attempt_id: str
    job_id: str | None
    units: int
    state: str  # RESERVED, HELD (a recovery hold), LAPSED, RELEASED


@dataclass(frozen=True)
class AttemptNote:
    body: str


@dataclass(frozen=True)
class RecoveryPacket:
    """What the task's earlier attempts left: read it before choosing a disposition."""

    task: Task
    attempts: list[Attempt]
    checkpoints: list[Checkpoint]
    submissions: list[Submission]
    worktrees: list[Worktree]
    published_revisions: list[str]
    notes: list[AttemptNote]
    jobs: list[Job]
    holds: list[Reservation]
    integrations: list[Integration]
    raw: dict[str, Any] = field(metadata=RECEIVED)


@dataclass(frozen=True)
class RecoveryClaimed(AttemptResult):
    """claimRecovery's answer: a claim of the task, and its recovery packet."""

    graphql_type: ClassVar[str] = "ClaimRecoveryPayload"

    recovery_packet: RecoveryPacket


@dataclass(frozen=True)
class TaskBrief:
    """What an agent needs to do a task it holds: the task's content (outcome and
    acceptance criteria of a revision), the repository and branch where known, the
    findings still open from earlier reviews, and, for a review or integration task,
    the submission it is for."""

    task: Task
    repository: Repository | None
    branch: str | None  # the work branch (its worktree's, or its last checkpoint's)
    open_findings: list[Finding]
    subject: SubmissionReview | None
    worktree: Worktree | None = None  # the task's registered worktree, if it has one


# --- jobs, evidence, reservations -----------------------------------------------------


@dataclass(frozen=True)
class JobReported:
    graphql_type: ClassVar[str] = "JobPayload"

    job: Job
    replay: bool
    released_reservations: list[Reservation]
    raw: dict[str, Any] = field(metadata=RECEIVED)


@dataclass(frozen=True)
class CheckResult:
    """A check's outcome as evidence reports it (and as the client records it)."""

    name: str
    outcome: str  # PASS | FAIL | SKIPPED | INTERRUPTED
    reason: str = ""


@dataclass(frozen=True)
class Evidence:
    id: str
    passed: bool
    not_passed_because: list[str]
    revision: str | None
    job_id: str | None
    tree_digest: str | None
    required_checks: list[str]
    checks: list[CheckResult]
    config_fingerprint: str
    check_definition_revision: str
    environment_identity: str
    started_at: datetime
    ended_at: datetime
    inputs_stable: bool


@dataclass(frozen=True)
class EvidenceRecorded:
    graphql_type: ClassVar[str] = "EvidencePayload"

    evidence: Evidence
    raw: dict[str, Any] = field(metadata=RECEIVED)


@dataclass(frozen=True)
class ReservationsReported:
    graphql_type: ClassVar[str] = "ReservationsPayload"

    reservations: list[Reservation]
    replay: bool
    raw: dict[str, Any] = field(metadata=RECEIVED)
