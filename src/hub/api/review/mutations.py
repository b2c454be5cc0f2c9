"""The review mutations: `submitReview`, `recordHumanReview`, `requestHumanReview`,
`resolveFinding`, and an operator's `repinSubmissionPolicy`."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.mapping import call, payload
from hub.api.operations import mutate
from hub.api.problems import Problem
from hub.api.review.inputs import (
    RecordHumanReviewInput,
    RepinSubmissionPolicyInput,
    RequestHumanReviewInput,
    ResolveFindingInput,
    SubmitReviewInput,
)
from hub.api.review.payloads import (
    RecordHumanReviewResult,
    RepinSubmissionPolicyResult,
    RequestHumanReviewResult,
    ResolveFindingPayload,
    ResolveFindingResult,
    ReviewPayload,
    ReviewStatusPayload,
    SubmitReviewResult,
)
from hub.artifacts import service as artifacts
from hub.review import service as review

_review_payload = payload(ReviewPayload)
_status_payload = payload(ReviewStatusPayload, "status")


@strawberry.type
class ReviewMutation:
    @strawberry.mutation(
        graphql_type=SubmitReviewResult,
        description="An agent's review, under its attempt on the review task.",
    )
    async def submit_review(
        self, info: Info[HubContext, Any], input: SubmitReviewInput
    ) -> ReviewPayload | Problem:
        # Through artifacts (as is recordHumanReview): the artifacts it cites with it.
        return await mutate(info, call(artifacts.submit_review, input), _review_payload)

    @strawberry.mutation(
        graphql_type=RecordHumanReviewResult,
        description="A human's decision; only a human principal records one.",
    )
    async def record_human_review(
        self, info: Info[HubContext, Any], input: RecordHumanReviewInput
    ) -> ReviewPayload | Problem:
        return await mutate(info, call(artifacts.record_human_review, input), _review_payload)

    @strawberry.mutation(graphql_type=RequestHumanReviewResult)
    async def request_human_review(
        self, info: Info[HubContext, Any], input: RequestHumanReviewInput
    ) -> ReviewStatusPayload | Problem:
        return await mutate(info, call(review.request_human_review, input), _status_payload)

    @strawberry.mutation(graphql_type=ResolveFindingResult)
    async def resolve_finding(
        self, info: Info[HubContext, Any], input: ResolveFindingInput
    ) -> ResolveFindingPayload | Problem:
        return await mutate(
            info, call(review.resolve_finding, input), payload(ResolveFindingPayload, "finding")
        )


@strawberry.type
class SubmissionPolicyMutation:
    """An operator's re-pin; its own type so that the schema lists it where it always has,
    after the integration mutations."""

    @strawberry.mutation(
        graphql_type=RepinSubmissionPolicyResult,
        description=(
            "Operators: move a submission waiting for review onto the project's current "
            "policy revision, saying why."
        ),
    )
    async def repin_submission_policy(
        self, info: Info[HubContext, Any], input: RepinSubmissionPolicyInput
    ) -> ReviewStatusPayload | Problem:
        return await mutate(info, call(review.repin_submission_policy, input), _status_payload)
