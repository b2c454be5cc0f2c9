"""The review mutations: `submitReview`, `recordHumanReview`, `requestHumanReview`,
`resolveFinding`, and an operator's `repinSubmissionPolicy`."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.mapping import payload
from hub.api.operations import mutate
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
from hub.review import service as review

_review_payload = payload(ReviewPayload)
_status_payload = payload(ReviewStatusPayload, "status")


def _decision(input: SubmitReviewInput | RecordHumanReviewInput) -> review.ReviewDecision:
    return review.ReviewDecision(
        submission_id=str(input.submission_id),
        decision=input.decision,
        summary=input.summary,
        findings=[
            review.NewFinding(severity=f.severity, title=f.title, remedy=f.remedy, detail=f.detail)
            for f in input.findings
        ],
        evidence=list(input.evidence),
        evidence_ids=[str(e) for e in input.evidence_ids],
    )


@strawberry.type
class ReviewMutation:
    @strawberry.mutation(description="An agent's review, under its attempt on the review task.")
    async def submit_review(
        self, info: Info[HubContext, Any], input: SubmitReviewInput
    ) -> SubmitReviewResult:
        return await mutate(
            info,
            lambda uow, actor: review.submit_review_with_status(
                uow,
                actor,
                attempt_id=str(input.attempt_id),
                generation=input.generation,
                decision=_decision(input),
                idempotency_key=input.idempotency_key,
            ),
            _review_payload,
        )

    @strawberry.mutation(description="A human's decision; only a human principal records one.")
    async def record_human_review(
        self, info: Info[HubContext, Any], input: RecordHumanReviewInput
    ) -> RecordHumanReviewResult:
        return await mutate(
            info,
            lambda uow, actor: review.record_human_review_with_status(uow, actor, _decision(input)),
            _review_payload,
        )

    @strawberry.mutation
    async def request_human_review(
        self, info: Info[HubContext, Any], input: RequestHumanReviewInput
    ) -> RequestHumanReviewResult:
        return await mutate(
            info,
            lambda uow, actor: review.request_human_review(
                uow, actor, submission_id=str(input.submission_id), context=input.context
            ),
            _status_payload,
        )

    @strawberry.mutation
    async def resolve_finding(
        self, info: Info[HubContext, Any], input: ResolveFindingInput
    ) -> ResolveFindingResult:
        return await mutate(
            info,
            lambda uow, actor: review.resolve_finding(
                uow,
                actor,
                finding_id=str(input.finding_id),
                resolution=input.resolution,
                evidence=list(input.evidence),
            ),
            payload(ResolveFindingPayload, "finding"),
        )


@strawberry.type
class SubmissionPolicyMutation:
    """An operator's re-pin; its own type so that the schema lists it where it always has,
    after the integration mutations."""

    @strawberry.mutation(
        description=(
            "Operators: move a submission waiting for review onto the project's current "
            "policy revision, saying why."
        )
    )
    async def repin_submission_policy(
        self, info: Info[HubContext, Any], input: RepinSubmissionPolicyInput
    ) -> RepinSubmissionPolicyResult:
        return await mutate(
            info,
            lambda uow, actor: review.repin_submission_policy(
                uow, actor, submission_id=str(input.submission_id), reason=input.reason
            ),
            _status_payload,
        )
