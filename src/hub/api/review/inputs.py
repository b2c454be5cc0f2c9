"""Inputs of the review mutations."""

from __future__ import annotations

import strawberry

from hub.api.review.enums import FindingSeverity, ReviewDecision


@strawberry.input
class FindingInput:
    severity: FindingSeverity
    title: str
    remedy: str = strawberry.field(description="A concrete remedy: what would resolve it.")
    detail: str = ""


@strawberry.input
class SubmitReviewInput:
    attempt_id: strawberry.ID = strawberry.field(description="Your attempt on the review task.")
    generation: int
    submission_id: strawberry.ID
    decision: ReviewDecision
    summary: str
    findings: list[FindingInput] = strawberry.field(default_factory=list)
    evidence: list[str] = strawberry.field(
        default_factory=list, description="What you inspected, in words: checks, logs, files."
    )
    evidence_ids: list[strawberry.ID] = strawberry.field(
        default_factory=list,
        description="Evidence records (of this project) you inspected; each must exist.",
    )
    artifact_ids: list[strawberry.ID] = strawberry.field(
        default_factory=list,
        description="Artifacts of this project the review cites (logs, screenshots); each "
        "must exist and still have its bytes.",
    )
    idempotency_key: str | None = None


@strawberry.input
class RecordHumanReviewInput:
    submission_id: strawberry.ID
    decision: ReviewDecision
    summary: str
    findings: list[FindingInput] = strawberry.field(default_factory=list)
    evidence: list[str] = strawberry.field(default_factory=list)
    evidence_ids: list[strawberry.ID] = strawberry.field(default_factory=list)
    artifact_ids: list[strawberry.ID] = strawberry.field(
        default_factory=list,
        description="Artifacts of this project the decision cites; each must exist and "
        "still have its bytes.",
    )


@strawberry.input
class RequestHumanReviewInput:
    submission_id: strawberry.ID
    context: str


@strawberry.input
class ResolveFindingInput:
    finding_id: strawberry.ID
    resolution: str
    evidence: list[str]


@strawberry.input
class RepinSubmissionPolicyInput:
    submission_id: strawberry.ID
    reason: str
