"""GraphQL types of the review module: reviews, findings, review status and queue."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.artifacts.types import Artifact, artifacts_of
from hub.api.context import HubContext
from hub.api.review.enums import FindingSeverity, ReviewDecision
from hub.api.work.types import Submission, Task
from hub.artifacts import service as artifacts


@strawberry.type
class Finding:
    id: strawberry.ID
    review_id: strawberry.ID
    submission_id: strawberry.ID
    task_id: strawberry.ID
    severity: FindingSeverity
    title: str
    detail: str
    remedy: str
    required: bool = strawberry.field(description="BLOCKER and MAJOR block integration.")
    resolution: str | None
    resolution_evidence: list[str]
    resolved_by: strawberry.ID | None
    resolved_at: datetime | None
    proposed_resolution: str | None = strawberry.field(
        description=(
            "A contributor's proposal for a BLOCKER or MAJOR finding: it stays unresolved "
            "until its author, an operator or a later submission's reviewer clears it."
        )
    )
    proposed_evidence: list[str]
    proposed_by: strawberry.ID | None
    proposed_at: datetime | None
    created_at: datetime


@strawberry.type
class Review:
    id: strawberry.ID
    submission_id: strawberry.ID
    task_id: strawberry.ID
    candidate_revision: str | None
    reviewer_kind: str
    principal_id: strawberry.ID
    session_id: strawberry.ID | None
    attempt_id: strawberry.ID | None
    decision: ReviewDecision
    summary: str
    evidence: list[str] = strawberry.field(description="What was inspected, in words.")
    evidence_ids: list[strawberry.ID] = strawberry.field(
        description="Evidence records of this project the reviewer inspected."
    )
    policy_revision: int
    findings: list[Finding]
    created_at: datetime

    @strawberry.field(
        description="The artifacts it cites, in the order cited, then those uploaded for it "
        "(`reviewId`), in whatever state: a gone one says when and why."
    )
    async def artifacts(self, info: Info[HubContext, Any]) -> list[Artifact]:
        return await artifacts_of(info, artifacts.review_artifacts, str(self.id))


@strawberry.type(description="An agent's request that a human review a submission.")
class HumanReviewRequest:
    id: strawberry.ID
    submission_id: strawberry.ID
    requested_by: strawberry.ID
    context: str = strawberry.field(description="What the requester wants the human to look at.")
    created_at: datetime


@strawberry.type(description="Where a submission stands against the policy pinned to it.")
class ReviewStatus:
    submission_id: strawberry.ID
    task_id: strawberry.ID
    policy_revision: int
    review_policy: str
    agent_approvals: int
    required_agent_approvals: int
    human_approvals: int
    required_human_approvals: int
    rejected: bool
    unresolved_required_findings: list[strawberry.ID]
    human_review_requested: bool
    human_review_requests: list[HumanReviewRequest]
    approved: bool
    ready_for_integration: bool
    waiting_reason: str | None


@strawberry.type
class SubmissionReview:
    """A submission with its reviews, the task's findings and its review status."""

    submission: Submission
    task: Task
    status: ReviewStatus
    reviews: list[Review]
    findings: list[Finding]


@strawberry.type
class ReviewQueueItem:
    task: Task
    submission: Submission
    status: ReviewStatus
    waiting_since: datetime
    escalated: bool = strawberry.field(description="Waiting past the review-wait threshold.")
