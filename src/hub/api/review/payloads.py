"""Payloads of the review mutations, and their result unions."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from hub.api.problems import AnyProblem
from hub.api.review.types import Finding, Review, ReviewStatus


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


SubmitReviewResult = Annotated[ReviewPayload | AnyProblem, strawberry.union("SubmitReviewResult")]
RecordHumanReviewResult = Annotated[
    ReviewPayload | AnyProblem, strawberry.union("RecordHumanReviewResult")
]
RequestHumanReviewResult = Annotated[
    ReviewStatusPayload | AnyProblem, strawberry.union("RequestHumanReviewResult")
]
ResolveFindingResult = Annotated[
    ResolveFindingPayload | AnyProblem, strawberry.union("ResolveFindingResult")
]
RepinSubmissionPolicyResult = Annotated[
    ReviewStatusPayload | AnyProblem, strawberry.union("RepinSubmissionPolicyResult")
]
