"""Payloads of the review mutations, and their result unions."""

from __future__ import annotations

from datetime import datetime

import strawberry

from hub.api.problems import result_union
from hub.api.review.types import Finding, Review, ReviewStatus
from hub.artifacts import service as artifacts
from hub.review import service as review


@strawberry.type
class ReviewPayload:
    review: Review
    status: ReviewStatus
    replay: bool = strawberry.field(description="A keyed retry of an earlier review.")
    server_time: datetime


@strawberry.type
class ReviewStatusPayload:
    status: ReviewStatus
    server_time: datetime


@strawberry.type
class ResolveFindingPayload:
    finding: Finding
    server_time: datetime


SubmitReviewResult = result_union("SubmitReviewResult", ReviewPayload, artifacts.submit_review)
RecordHumanReviewResult = result_union(
    "RecordHumanReviewResult", ReviewPayload, artifacts.record_human_review
)
RequestHumanReviewResult = result_union(
    "RequestHumanReviewResult", ReviewStatusPayload, review.request_human_review
)
ResolveFindingResult = result_union(
    "ResolveFindingResult", ResolveFindingPayload, review.resolve_finding
)
RepinSubmissionPolicyResult = result_union(
    "RepinSubmissionPolicyResult", ReviewStatusPayload, review.repin_submission_policy
)
