"""What the agent operations answer, parsed from the API's JSON into typed records.

Field names follow the GraphQL schema (in snake case); each `of` reads one object of
the shape `hub.client.api` selects.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hub.client.deadline import Sent


def time_of(value: Any) -> datetime:
    return datetime.fromisoformat(str(value))


def optional_time_of(value: Any) -> datetime | None:
    return None if value is None else time_of(value)


@dataclass(frozen=True)
class Lease:
    attempt_id: str
    generation: int
    expires_at: datetime
    heartbeat_seconds: int

    @classmethod
    def of(cls, data: dict[str, Any]) -> Lease:
        return cls(
            attempt_id=str(data["attemptId"]),
            generation=int(data["generation"]),
            expires_at=time_of(data["expiresAt"]),
            heartbeat_seconds=int(data["heartbeatSeconds"]),
        )


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

    @classmethod
    def of(cls, data: dict[str, Any]) -> Task:
        return cls(
            id=str(data["id"]),
            project_id=str(data["projectId"]),
            kind=str(data["kind"]),
            title=str(data["title"]),
            state=str(data["state"]),
            effective_state=str(data["effectiveState"]),
            generation=int(data["generation"]),
            criteria_revision=int(data["criteriaRevision"]),
            current_attempt_id=data.get("currentAttemptId"),
            subject_submission_id=data.get("subjectSubmissionId"),
            outcome=str(data.get("outcome") or ""),
            acceptance_criteria=tuple(str(c) for c in data.get("acceptanceCriteria") or ()),
            priority=int(data.get("priority") or 0),
        )


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

    @classmethod
    def of(cls, data: dict[str, Any]) -> Attempt:
        return cls(
            id=str(data["id"]),
            project_id=str(data["projectId"]),
            task_id=str(data["taskId"]),
            session_id=str(data["sessionId"]),
            generation=int(data["generation"]),
            state=str(data["state"]),
            kind=str(data["kind"]),
            is_current=bool(data["isCurrent"]),
            lease_expired=bool(data["leaseExpired"]),
            expires_at=time_of(data["expiresAt"]),
            lease_seconds=int(data["leaseSeconds"]),
            heartbeat_seconds=int(data["heartbeatSeconds"]),
            criteria_revision=int(data["criteriaRevision"]),
            disposition=data.get("disposition"),
            holds_authority=(
                None if data.get("holdsAuthority") is None else bool(data["holdsAuthority"])
            ),
        )


@dataclass(frozen=True)
class AttemptResult:
    """A claim or an ownership-dependent mutation: the task, attempt and lease after it."""

    task: Task
    attempt: Attempt
    lease: Lease
    replay: bool
    server_time: datetime
    sent: Sent
    raw: dict[str, Any]

    @classmethod
    def of(cls, data: dict[str, Any], sent: Sent) -> AttemptResult:
        return cls(
            task=Task.of(data["task"]),
            attempt=Attempt.of(data["attempt"]),
            lease=Lease.of(data["lease"]),
            replay=bool(data["replay"]),
            server_time=time_of(data["serverTime"]),
            sent=sent,
            raw=data,
        )


@dataclass(frozen=True)
class Session:
    id: str
    principal_id: str
    workstation: str
    harness: str
    harness_instance: str
    started_at: datetime
    ended_at: datetime | None

    @classmethod
    def of(cls, data: dict[str, Any]) -> Session:
        return cls(
            id=str(data["id"]),
            principal_id=str(data["principalId"]),
            workstation=str(data["workstation"]),
            harness=str(data["harness"]),
            harness_instance=str(data["harnessInstance"]),
            started_at=time_of(data["startedAt"]),
            ended_at=optional_time_of(data.get("endedAt")),
        )


@dataclass(frozen=True)
class SessionStarted:
    session: Session
    token: str
    server_time: datetime


@dataclass(frozen=True)
class SessionEnded:
    session: Session
    server_time: datetime


@dataclass(frozen=True)
class Viewer:
    principal_id: str
    principal_name: str
    credential: str
    session: Session | None
    server_time: datetime
    sent: Sent


@dataclass(frozen=True)
class AttemptSnapshot:
    """An attempt read now, with a serverTime sampled in the same request."""

    attempt: Attempt
    server_time: datetime
    sent: Sent


@dataclass(frozen=True)
class AdapterEventRecorded:
    session: Session
    attempts: list[Attempt]
    server_time: datetime


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

    @classmethod
    def of(cls, data: dict[str, Any]) -> Submission:
        return cls(
            id=str(data["id"]),
            project_id=str(data["projectId"]),
            task_id=str(data["taskId"]),
            attempt_id=str(data["attemptId"]),
            outcome=str(data["outcome"]),
            result=str(data["result"]),
            handoff=str(data["handoff"]),
            candidate_revision=data.get("candidateRevision"),
            criteria_revision=int(data["criteriaRevision"]),
            policy_revision=int(data["policyRevision"]),
            created_at=time_of(data["createdAt"]),
        )


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

    @classmethod
    def of(cls, data: dict[str, Any]) -> Finding:
        return cls(
            id=str(data["id"]),
            submission_id=str(data["submissionId"]),
            severity=str(data["severity"]),
            title=str(data["title"]),
            remedy=str(data["remedy"]),
            detail=str(data["detail"]),
            required=bool(data["required"]),
            resolution=data.get("resolution"),
            resolved_at=optional_time_of(data.get("resolvedAt")),
            proposed_resolution=data.get("proposedResolution"),
        )


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

    @classmethod
    def of(cls, data: dict[str, Any]) -> Review:
        return cls(
            id=str(data["id"]),
            submission_id=str(data["submissionId"]),
            reviewer_kind=str(data["reviewerKind"]),
            principal_id=str(data["principalId"]),
            attempt_id=data.get("attemptId"),
            decision=str(data["decision"]),
            summary=str(data["summary"]),
            candidate_revision=data.get("candidateRevision"),
            findings=[Finding.of(f) for f in data["findings"]],
            created_at=time_of(data["createdAt"]),
        )


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

    @classmethod
    def of(cls, data: dict[str, Any]) -> ReviewStatus:
        return cls(
            submission_id=str(data["submissionId"]),
            review_policy=str(data["reviewPolicy"]),
            agent_approvals=int(data["agentApprovals"]),
            required_agent_approvals=int(data["requiredAgentApprovals"]),
            human_approvals=int(data["humanApprovals"]),
            required_human_approvals=int(data["requiredHumanApprovals"]),
            rejected=bool(data["rejected"]),
            unresolved_required_findings=[str(f) for f in data["unresolvedRequiredFindings"]],
            human_review_requested=bool(data["humanReviewRequested"]),
            approved=bool(data["approved"]),
            ready_for_integration=bool(data["readyForIntegration"]),
            waiting_reason=data.get("waitingReason"),
        )


@dataclass(frozen=True)
class SubmissionReview:
    """A submission to review: its task, candidate, handoff, reviews and findings so far."""

    submission: Submission
    task: Task
    status: ReviewStatus
    reviews: list[Review]
    findings: list[Finding]
    raw: dict[str, Any]

    @classmethod
    def of(cls, data: dict[str, Any]) -> SubmissionReview:
        return cls(
            submission=Submission.of(data["submission"]),
            task=Task.of(data["task"]),
            status=ReviewStatus.of(data["status"]),
            reviews=[Review.of(r) for r in data["reviews"]],
            findings=[Finding.of(f) for f in data["findings"]],
            raw=data,
        )


@dataclass(frozen=True)
class ReviewRecorded:
    """submitReview's answer: the review as recorded and the submission's status after it."""

    review: Review
    status: ReviewStatus
    server_time: datetime
    raw: dict[str, Any]


@dataclass(frozen=True)
class ReviewStatusReported:
    status: ReviewStatus
    server_time: datetime
    raw: dict[str, Any]


@dataclass(frozen=True)
class FindingResolved:
    finding: Finding
    server_time: datetime
    raw: dict[str, Any]


@dataclass(frozen=True)
class Validation:
    id: str
    result_revision: str
    passed: bool
    evidence: list[str]

    @classmethod
    def of(cls, data: dict[str, Any]) -> Validation:
        return cls(
            id=str(data["id"]),
            result_revision=str(data["resultRevision"]),
            passed=bool(data["passed"]),
            evidence=[str(e) for e in data["evidenceIds"]],
        )


@dataclass(frozen=True)
class IntegrationReport:
    outcome: str
    base_revision: str | None
    result_revision: str | None
    verified_how: str
    note: str
    created_at: datetime

    @classmethod
    def of(cls, data: dict[str, Any]) -> IntegrationReport:
        return cls(
            outcome=str(data["outcome"]),
            base_revision=data.get("baseRevision"),
            result_revision=data.get("resultRevision"),
            verified_how=str(data["verifiedHow"]),
            note=str(data["note"]),
            created_at=time_of(data["createdAt"]),
        )


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

    @classmethod
    def of(cls, data: dict[str, Any]) -> Integration:
        return cls(
            id=str(data["id"]),
            project_id=str(data["projectId"]),
            submission_id=str(data["submissionId"]),
            task_id=str(data["taskId"]),
            integration_task_id=str(data["integrationTaskId"]),
            attempt_id=str(data["attemptId"]),
            binding=str(data["binding"]),
            target_branch=str(data["targetBranch"]),
            candidate_revision=str(data["candidateRevision"]),
            expected_base_revision=str(data["expectedBaseRevision"]),
            result_revision=data.get("resultRevision"),
            state=str(data["state"]),
            reservation_held=bool(data["reservationHeld"]),
            validations=[Validation.of(v) for v in data["validations"]],
            reports=[IntegrationReport.of(r) for r in data.get("reports") or ()],
        )


@dataclass(frozen=True)
class IntegrationClaimed(AttemptResult):
    """claimIntegration's answer: a claim of the integration task, plus the integration
    holding the target's exclusive reservation."""

    integration: Integration
    # Taken over from an earlier attempt that left it unfinished: read its reports first.
    inherited: bool = False

    @classmethod
    def of(cls, data: dict[str, Any], sent: Sent) -> IntegrationClaimed:
        claimed = AttemptResult.of(data, sent)
        return cls(
            task=claimed.task,
            attempt=claimed.attempt,
            lease=claimed.lease,
            replay=claimed.replay,
            server_time=claimed.server_time,
            sent=sent,
            raw=data,
            integration=Integration.of(data["integration"]),
            inherited=bool(data.get("inherited")),
        )


@dataclass(frozen=True)
class IntegrationReported:
    """The integration after a result, reconciliation or validation was recorded."""

    integration: Integration
    validation: Validation | None
    server_time: datetime
    raw: dict[str, Any]


# --- repositories, worktrees, recovery ------------------------------------------------


@dataclass(frozen=True)
class Repository:
    id: str
    project_id: str
    remote_url: str
    binding: str
    default_branch: str

    @classmethod
    def of(cls, data: dict[str, Any]) -> Repository:
        return cls(
            id=str(data["id"]),
            project_id=str(data["projectId"]),
            remote_url=str(data["remoteUrl"]),
            binding=str(data["binding"]),
            default_branch=str(data["defaultBranch"]),
        )


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

    @classmethod
    def of(cls, data: dict[str, Any]) -> Worktree:
        return cls(
            id=str(data["id"]),
            task_id=str(data["taskId"]),
            attempt_id=str(data["attemptId"]),
            repository_id=str(data["repositoryId"]),
            worktree_id=str(data["worktreeId"]),
            path=str(data["path"]),
            branch=str(data["branch"]),
            base_revision=str(data["baseRevision"]),
            workstation=str(data["workstation"]),
            released_at=optional_time_of(data.get("releasedAt")),
        )


@dataclass(frozen=True)
class Checkpoint:
    id: str
    attempt_id: str
    summary: str
    revision: str | None
    branch: str | None
    published: bool
    created_at: datetime

    @classmethod
    def of(cls, data: dict[str, Any]) -> Checkpoint:
        return cls(
            id=str(data["id"]),
            attempt_id=str(data["attemptId"]),
            summary=str(data["summary"]),
            revision=data.get("revision"),
            branch=data.get("branch"),
            published=bool(data["published"]),
            created_at=time_of(data["createdAt"]),
        )


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

    @classmethod
    def of(cls, data: dict[str, Any]) -> Job:
        return cls(
            id=str(data["id"]),
            job_id=str(data["jobId"]),
            task_id=str(data["taskId"]),
            attempt_id=str(data["attemptId"]),
            operation=str(data["operation"]),
            invocation=str(data["invocation"]),
            status=str(data["status"]),
            exit_status=None if data.get("exitStatus") is None else int(data["exitStatus"]),
            freshness=str(data["freshness"]),
            started_at=optional_time_of(data.get("startedAt")),
            finished_at=optional_time_of(data.get("finishedAt")),
            registered_at=time_of(data["registeredAt"]),
        )


@dataclass(frozen=True)
class Reservation:
    id: str
    resource_id: str
    resource_key: str
    attempt_id: str
    job_id: str | None
    units: int
    state: str  # RESERVED, HELD (a recovery hold), LAPSED, RELEASED

    @classmethod
    def of(cls, data: dict[str, Any]) -> Reservation:
        return cls(
            id=str(data["id"]),
            resource_id=str(data["resourceId"]),
            resource_key=str(data["resourceKey"]),
            attempt_id=str(data["attemptId"]),
            job_id=data.get("jobId"),
            units=int(data["units"]),
            state=str(data["state"]),
        )


@dataclass(frozen=True)
class RecoveryPacket:
    """What the task's earlier attempts left: read it before choosing a disposition."""

    task: Task
    attempts: list[Attempt]
    checkpoints: list[Checkpoint]
    submissions: list[Submission]
    worktrees: list[Worktree]
    published_revisions: list[str]
    notes: list[str]
    jobs: list[Job]
    holds: list[Reservation]
    integrations: list[Integration]
    raw: dict[str, Any]

    @classmethod
    def of(cls, data: dict[str, Any]) -> RecoveryPacket:
        return cls(
            task=Task.of(data["task"]),
            attempts=[Attempt.of(a) for a in data["attempts"]],
            checkpoints=[Checkpoint.of(c) for c in data["checkpoints"]],
            submissions=[Submission.of(s) for s in data["submissions"]],
            worktrees=[Worktree.of(w) for w in data["worktrees"]],
            published_revisions=[str(r) for r in data["publishedRevisions"]],
            notes=[str(n["body"]) for n in data["notes"]],
            jobs=[Job.of(j) for j in data["jobs"]],
            holds=[Reservation.of(r) for r in data["holds"]],
            integrations=[Integration.of(i) for i in data["integrations"]],
            raw=data,
        )


@dataclass(frozen=True)
class RecoveryClaimed(AttemptResult):
    """claimRecovery's answer: a claim of the task, and its recovery packet."""

    packet: RecoveryPacket

    @classmethod
    def of(cls, data: dict[str, Any], sent: Sent) -> RecoveryClaimed:
        claimed = AttemptResult.of(data, sent)
        return cls(
            task=claimed.task,
            attempt=claimed.attempt,
            lease=claimed.lease,
            replay=claimed.replay,
            server_time=claimed.server_time,
            sent=sent,
            raw=data,
            packet=RecoveryPacket.of(data["recoveryPacket"]),
        )


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
    job: Job
    replay: bool
    released_reservations: list[Reservation]
    raw: dict[str, Any]


@dataclass(frozen=True)
class EvidenceRecorded:
    id: str
    passed: bool
    not_passed_because: list[str]
    revision: str | None
    job_id: str | None
    raw: dict[str, Any]


@dataclass(frozen=True)
class ReservationsReported:
    reservations: list[Reservation]
    replay: bool
    raw: dict[str, Any]
