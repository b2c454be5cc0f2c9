"""The values the review module's operations return."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from hub.review import vocabulary
from hub.review.vocabulary import FindingSeverity, ReviewerKind
from hub.work import service as work


@dataclass(frozen=True)
class FindingView:
    id: str
    project_id: str
    review_id: str
    submission_id: str
    task_id: str
    severity: FindingSeverity
    title: str
    detail: str
    remedy: str
    required: bool
    resolution: str | None
    resolution_evidence: tuple[str, ...]
    resolved_by: str | None
    resolved_at: datetime | None
    # A contributor's proposed resolution of a required finding, awaiting someone who
    # may clear it (its author, an operator, or a reviewer of a later submission).
    proposed_resolution: str | None
    proposed_evidence: tuple[str, ...]
    proposed_by: str | None
    proposed_at: datetime | None
    created_at: datetime


@dataclass(frozen=True)
class ReviewView:
    id: str
    project_id: str
    submission_id: str
    task_id: str
    candidate_revision: str | None
    reviewer_kind: ReviewerKind
    principal_id: str
    session_id: str | None
    attempt_id: str | None
    decision: vocabulary.ReviewDecision
    summary: str
    evidence: tuple[str, ...]
    evidence_ids: tuple[str, ...]
    policy_revision: int
    created_at: datetime
    findings: tuple[FindingView, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class HumanReviewRequestView:
    id: str
    submission_id: str
    requested_by: str
    context: str
    created_at: datetime


@dataclass(frozen=True)
class ReviewStatus:
    """Where a submission stands against its pinned policy."""

    submission_id: str
    task_id: str
    policy_revision: int
    review_policy: str
    agent_approvals: int
    required_agent_approvals: int
    human_approvals: int
    required_human_approvals: int
    rejected: bool
    unresolved_required_findings: tuple[str, ...]
    human_review_requested: bool
    human_review_requests: tuple[HumanReviewRequestView, ...]
    approved: bool
    ready_for_integration: bool
    waiting_reason: str | None


@dataclass(frozen=True)
class QueueItem:
    task: work.TaskView
    submission: work.SubmissionView
    status: ReviewStatus
    waiting_since: datetime
    escalated: bool


@dataclass(frozen=True)
class RecordedReview:
    """A review as recorded, and where its submission stands after it."""

    review: ReviewView
    status: ReviewStatus
    replay: bool = False  # a keyed retry of an earlier review: nothing changed


@dataclass(frozen=True)
class SubmissionReview:
    """A submission with its task, its review status, its reviews and its task's findings."""

    submission: work.SubmissionView
    task: work.TaskView
    status: ReviewStatus
    reviews: tuple[ReviewView, ...]
    findings: tuple[FindingView, ...]
