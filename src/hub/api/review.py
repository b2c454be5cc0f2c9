"""review and integration: decisions on submissions, serialized publishing, validation."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated, Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.operations import mutate, read, read_optional
from hub.api.problems import AnyProblem
from hub.api.work_types import Attempt, Lease, Submission, Task
from hub.identity.actor import Actor
from hub.integration import service as integration
from hub.review import service as review
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work


@strawberry.enum
class ReviewDecision(Enum):
    APPROVE = "APPROVE"
    REJECT = "REJECT"


@strawberry.enum
class FindingSeverity(Enum):
    BLOCKER = "BLOCKER"
    MAJOR = "MAJOR"
    MINOR = "MINOR"
    NOTE = "NOTE"


@strawberry.enum
class IntegrationOutcome(Enum):
    PUBLISHED = "PUBLISHED"
    TARGET_MOVED = "TARGET_MOVED"
    CONFLICT = "CONFLICT"
    UNCERTAIN = "UNCERTAIN"
    ABANDONED = "ABANDONED"


@strawberry.enum(description="How a reported revision was verified.")
class Verification(Enum):
    CLIENT_REPORTED = "CLIENT_REPORTED"
    VERIFIED_BY_REVIEWER = "VERIFIED_BY_REVIEWER"
    VERIFIED_BY_JOB = "VERIFIED_BY_JOB"
    VERIFIED_BY_HOST = "VERIFIED_BY_HOST"


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

    @classmethod
    def of(cls, view: review.FindingView) -> Finding:
        return cls(
            id=strawberry.ID(view.id),
            review_id=strawberry.ID(view.review_id),
            submission_id=strawberry.ID(view.submission_id),
            task_id=strawberry.ID(view.task_id),
            severity=FindingSeverity(view.severity),
            title=view.title,
            detail=view.detail,
            remedy=view.remedy,
            required=view.required,
            resolution=view.resolution,
            resolution_evidence=list(view.resolution_evidence),
            resolved_by=strawberry.ID(view.resolved_by) if view.resolved_by else None,
            resolved_at=view.resolved_at,
            proposed_resolution=view.proposed_resolution,
            proposed_evidence=list(view.proposed_evidence),
            proposed_by=strawberry.ID(view.proposed_by) if view.proposed_by else None,
            proposed_at=view.proposed_at,
            created_at=view.created_at,
        )


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

    @classmethod
    def of(cls, view: review.ReviewView) -> Review:
        return cls(
            id=strawberry.ID(view.id),
            submission_id=strawberry.ID(view.submission_id),
            task_id=strawberry.ID(view.task_id),
            candidate_revision=view.candidate_revision,
            reviewer_kind=view.reviewer_kind,
            principal_id=strawberry.ID(view.principal_id),
            session_id=strawberry.ID(view.session_id) if view.session_id else None,
            attempt_id=strawberry.ID(view.attempt_id) if view.attempt_id else None,
            decision=ReviewDecision(view.decision),
            summary=view.summary,
            evidence=list(view.evidence),
            evidence_ids=[strawberry.ID(e) for e in view.evidence_ids],
            policy_revision=view.policy_revision,
            findings=[Finding.of(f) for f in view.findings],
            created_at=view.created_at,
        )


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

    @classmethod
    def of(cls, view: review.ReviewStatus) -> ReviewStatus:
        return cls(
            submission_id=strawberry.ID(view.submission_id),
            task_id=strawberry.ID(view.task_id),
            policy_revision=view.policy_revision,
            review_policy=view.review_policy,
            agent_approvals=view.agent_approvals,
            required_agent_approvals=view.required_agent_approvals,
            human_approvals=view.human_approvals,
            required_human_approvals=view.required_human_approvals,
            rejected=view.rejected,
            unresolved_required_findings=[
                strawberry.ID(f) for f in view.unresolved_required_findings
            ],
            human_review_requested=view.human_review_requested,
            human_review_requests=[
                HumanReviewRequest(
                    id=strawberry.ID(r.id),
                    submission_id=strawberry.ID(r.submission_id),
                    requested_by=strawberry.ID(r.requested_by),
                    context=r.context,
                    created_at=r.created_at,
                )
                for r in view.human_review_requests
            ],
            approved=view.approved,
            ready_for_integration=view.ready_for_integration,
            waiting_reason=view.waiting_reason,
        )


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


@strawberry.type
class IntegrationReport:
    id: strawberry.ID
    outcome: str
    base_revision: str | None
    result_revision: str | None
    verified_how: Verification
    note: str
    reported_by: strawberry.ID
    attempt_id: strawberry.ID | None = strawberry.field(
        description="The attempt that reported (none for reconciliations and releases)."
    )
    created_at: datetime


@strawberry.type
class Validation:
    id: strawberry.ID
    integration_id: strawberry.ID
    result_revision: str
    passed: bool
    evidence_ids: list[strawberry.ID] = strawberry.field(
        description="The evidence records the validation cites."
    )
    summary: str
    reported_by: strawberry.ID
    created_at: datetime

    @classmethod
    def of(cls, view: integration.ValidationView) -> Validation:
        return cls(
            id=strawberry.ID(view.id),
            integration_id=strawberry.ID(view.integration_id),
            result_revision=view.result_revision,
            passed=view.passed,
            evidence_ids=[strawberry.ID(e) for e in view.evidence],
            summary=view.summary,
            reported_by=strawberry.ID(view.reported_by),
            created_at=view.created_at,
        )


@strawberry.type
class Integration:
    id: strawberry.ID
    project_id: strawberry.ID
    submission_id: strawberry.ID
    task_id: strawberry.ID
    integration_task_id: strawberry.ID
    attempt_id: strawberry.ID = strawberry.field(
        description="The attempt that holds it (or last held it): whoever holds the "
        "integration task inherits it."
    )
    repository_id: strawberry.ID
    binding: str
    target_branch: str
    candidate_revision: str
    policy_revision: int
    expected_base_revision: str = strawberry.field(
        description="The target as last observed; a publish must be based on it."
    )
    result_revision: str | None
    state: str
    reservation_held: bool
    created_at: datetime
    updated_at: datetime

    @strawberry.field
    async def reports(self, info: Info[HubContext, Any]) -> list[IntegrationReport]:
        views = await read(info, lambda uow, _: integration.reports_of(uow, str(self.id)))
        return [
            IntegrationReport(
                id=strawberry.ID(v.id),
                outcome=v.outcome,
                base_revision=v.base_revision,
                result_revision=v.result_revision,
                verified_how=Verification(v.verified_how),
                note=v.note,
                reported_by=strawberry.ID(v.reported_by),
                attempt_id=strawberry.ID(v.attempt_id) if v.attempt_id else None,
                created_at=v.created_at,
            )
            for v in views
        ]

    @strawberry.field
    async def validations(self, info: Info[HubContext, Any]) -> list[Validation]:
        views = await read(info, lambda uow, _: integration.validations_of(uow, str(self.id)))
        return [Validation.of(v) for v in views]

    @classmethod
    def of(cls, view: integration.IntegrationView) -> Integration:
        return cls(
            id=strawberry.ID(view.id),
            project_id=strawberry.ID(view.project_id),
            submission_id=strawberry.ID(view.submission_id),
            task_id=strawberry.ID(view.task_id),
            integration_task_id=strawberry.ID(view.integration_task_id),
            attempt_id=strawberry.ID(view.attempt_id),
            repository_id=strawberry.ID(view.repository_id),
            binding=view.binding,
            target_branch=view.target_branch,
            candidate_revision=view.candidate_revision,
            policy_revision=view.policy_revision,
            expected_base_revision=view.expected_base_revision,
            result_revision=view.result_revision,
            state=view.state,
            reservation_held=view.reservation_held,
            created_at=view.created_at,
            updated_at=view.updated_at,
        )


# --- inputs and payloads --------------------------------------------------------------


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
    idempotency_key: str | None = None


@strawberry.input
class RecordHumanReviewInput:
    submission_id: strawberry.ID
    decision: ReviewDecision
    summary: str
    findings: list[FindingInput] = strawberry.field(default_factory=list)
    evidence: list[str] = strawberry.field(default_factory=list)
    evidence_ids: list[strawberry.ID] = strawberry.field(default_factory=list)


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
class ClaimIntegrationInput:
    submission_id: strawberry.ID
    observed_target_revision: str = strawberry.field(
        description="The target branch's revision as you see it now."
    )
    target_branch: str | None = strawberry.field(
        default=None, description="Defaults to the repository's default branch."
    )
    idempotency_key: str | None = None


@strawberry.input
class RecordIntegrationResultInput:
    attempt_id: strawberry.ID
    generation: int
    integration_id: strawberry.ID
    outcome: IntegrationOutcome
    target_branch: str
    base_revision: str | None = None
    result_revision: str | None = None
    verified_how: Verification = Verification.CLIENT_REPORTED
    note: str = ""
    reservation_ids: list[strawberry.ID] = strawberry.field(
        default_factory=list,
        description="Reservations the publish depends on: each must be held, live, by "
        "this attempt now.",
    )
    idempotency_key: str | None = None


@strawberry.input
class ReconcileIntegrationInput:
    integration_id: strawberry.ID
    remote_revision: str = strawberry.field(description="What the remote target holds now.")
    published: bool = strawberry.field(description="Did the candidate land on the target?")
    verified_how: Verification = Verification.CLIENT_REPORTED
    note: str = ""
    idempotency_key: str | None = None


@strawberry.input
class ReleaseIntegrationInput:
    integration_id: strawberry.ID
    reason: str


@strawberry.input
class RecordValidationInput:
    attempt_id: strawberry.ID
    generation: int
    integration_id: strawberry.ID
    result_revision: str = strawberry.field(description="The integrated result (a full id).")
    passed: bool
    evidence_ids: list[strawberry.ID] = strawberry.field(
        description=(
            "Evidence records of this project. A pass must cite at least one, and every one "
            "cited must be a pass that applies exactly to the integrated result."
        )
    )
    summary: str = ""
    reservation_ids: list[strawberry.ID] = strawberry.field(default_factory=list)
    idempotency_key: str | None = None


@strawberry.input
class RepinSubmissionPolicyInput:
    submission_id: strawberry.ID
    reason: str


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


@strawberry.type
class ClaimIntegrationPayload:
    integration: Integration
    task: Task
    attempt: Attempt
    lease: Lease
    replay: bool
    inherited: bool = strawberry.field(
        description=(
            "Taken over from an earlier attempt that left it unfinished: read its reports "
            "(what was and was not published) before acting."
        )
    )
    server_time: datetime


@strawberry.type
class IntegrationPayload:
    integration: Integration
    replay: bool
    server_time: datetime


@strawberry.type
class RecordValidationPayload:
    validation: Validation
    integration: Integration
    replay: bool
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
ClaimIntegrationResult = Annotated[
    ClaimIntegrationPayload | AnyProblem, strawberry.union("ClaimIntegrationResult")
]
RecordIntegrationResultResult = Annotated[
    IntegrationPayload | AnyProblem, strawberry.union("RecordIntegrationResultResult")
]
ReconcileIntegrationResult = Annotated[
    IntegrationPayload | AnyProblem, strawberry.union("ReconcileIntegrationResult")
]
RecordValidationResult = Annotated[
    RecordValidationPayload | AnyProblem, strawberry.union("RecordValidationResult")
]
ReleaseIntegrationResult = Annotated[
    IntegrationPayload | AnyProblem, strawberry.union("ReleaseIntegrationResult")
]
RepinSubmissionPolicyResult = Annotated[
    ReviewStatusPayload | AnyProblem, strawberry.union("RepinSubmissionPolicyResult")
]


def _decision(input: SubmitReviewInput | RecordHumanReviewInput) -> review.ReviewDecision:
    return review.ReviewDecision(
        submission_id=str(input.submission_id),
        decision=input.decision.value,
        summary=input.summary,
        findings=[
            review.NewFinding(
                severity=f.severity.value, title=f.title, remedy=f.remedy, detail=f.detail
            )
            for f in input.findings
        ],
        evidence=list(input.evidence),
        evidence_ids=[str(e) for e in input.evidence_ids],
    )


def _review_payload(
    made: tuple[review.ReviewView, review.ReviewStatus, bool], now: datetime
) -> ReviewPayload:
    return ReviewPayload(
        review=Review.of(made[0]),
        status=ReviewStatus.of(made[1]),
        replay=made[2],
        server_time=now,
    )


def submission_review(uow: UnitOfWork, submission_id: str) -> dict[str, Any]:
    subject = work.get_submission(uow, submission_id)
    return {
        "submission": subject,
        "task": work.get_task(uow, subject.task_id),
        "status": review.review_status(uow, subject.id),
        "reviews": review.list_reviews(uow, subject.id),
        "findings": review.list_findings(uow, subject.task_id),
    }


@strawberry.type
class ReviewQuery:
    @strawberry.field(description="A submission with its reviews, findings and review status.")
    async def submission(
        self, info: Info[HubContext, Any], id: strawberry.ID
    ) -> SubmissionReview | None:
        found = await read_optional(info, lambda uow, _: submission_review(uow, str(id)))
        if found is None:
            return None
        return SubmissionReview(
            submission=Submission.of(found["submission"]),
            task=Task.of(found["task"]),
            status=ReviewStatus.of(found["status"]),
            reviews=[Review.of(r) for r in found["reviews"]],
            findings=[Finding.of(f) for f in found["findings"]],
        )

    @strawberry.field(description="What waits for review across all projects, oldest first.")
    async def review_queue(self, info: Info[HubContext, Any]) -> list[ReviewQueueItem]:
        items = await read(info, lambda uow, _: review.review_queue(uow))
        return [
            ReviewQueueItem(
                task=Task.of(item.task),
                submission=Submission.of(item.submission),
                status=ReviewStatus.of(item.status),
                waiting_since=item.waiting_since,
                escalated=item.escalated,
            )
            for item in items
        ]

    @strawberry.field
    async def integration(
        self, info: Info[HubContext, Any], id: strawberry.ID
    ) -> Integration | None:
        view = await read_optional(info, lambda uow, _: integration.get_integration(uow, str(id)))
        return Integration.of(view) if view else None

    @strawberry.field(description="The integrations of an implementation task, oldest first.")
    async def integrations(
        self, info: Info[HubContext, Any], task_id: strawberry.ID
    ) -> list[Integration]:
        views = await read(info, lambda uow, _: integration.integrations_of(uow, str(task_id)))
        return [Integration.of(v) for v in views]


@strawberry.type
class ReviewMutation:
    @strawberry.mutation(description="An agent's review, under its attempt on the review task.")
    async def submit_review(
        self, info: Info[HubContext, Any], input: SubmitReviewInput
    ) -> SubmitReviewResult:
        def run(
            uow: UnitOfWork, actor: Actor
        ) -> tuple[review.ReviewView, review.ReviewStatus, bool]:
            made = review.submit_review(
                uow,
                actor,
                attempt_id=str(input.attempt_id),
                generation=input.generation,
                decision=_decision(input),
                idempotency_key=input.idempotency_key,
            )
            status = review.review_status(uow, made.value.submission_id)
            return made.value, status, made.replayed

        return await mutate(info, run, _review_payload)

    @strawberry.mutation(description="A human's decision; only a human principal records one.")
    async def record_human_review(
        self, info: Info[HubContext, Any], input: RecordHumanReviewInput
    ) -> RecordHumanReviewResult:
        def run(
            uow: UnitOfWork, actor: Actor
        ) -> tuple[review.ReviewView, review.ReviewStatus, bool]:
            made = review.record_human_review(uow, actor, _decision(input))
            return made, review.review_status(uow, made.submission_id), False

        return await mutate(info, run, _review_payload)

    @strawberry.mutation
    async def request_human_review(
        self, info: Info[HubContext, Any], input: RequestHumanReviewInput
    ) -> RequestHumanReviewResult:
        return await mutate(
            info,
            lambda uow, actor: review.request_human_review(
                uow, actor, submission_id=str(input.submission_id), context=input.context
            ),
            lambda status, now: ReviewStatusPayload(
                status=ReviewStatus.of(status), server_time=now
            ),
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
            lambda finding, now: ResolveFindingPayload(
                finding=Finding.of(finding), server_time=now
            ),
        )

    @strawberry.mutation(description="Claim integration: the task and the target's reservation.")
    async def claim_integration(
        self, info: Info[HubContext, Any], input: ClaimIntegrationInput
    ) -> ClaimIntegrationResult:
        command = integration.IntegrationClaim(
            submission_id=str(input.submission_id),
            observed_target_revision=input.observed_target_revision,
            target_branch=input.target_branch,
            idempotency_key=input.idempotency_key,
        )

        def payload(made: integration.ClaimedIntegration, now: datetime) -> ClaimIntegrationPayload:
            return ClaimIntegrationPayload(
                integration=Integration.of(made.integration),
                task=Task.of(made.claim.task),
                attempt=Attempt.of(made.claim.attempt),
                lease=Lease.of(made.claim.attempt.lease),
                replay=made.claim.replay,
                inherited=made.inherited,
                server_time=now,
            )

        return await mutate(
            info, lambda uow, actor: integration.claim_integration(uow, actor, command), payload
        )

    @strawberry.mutation
    async def record_integration_result(
        self, info: Info[HubContext, Any], input: RecordIntegrationResultInput
    ) -> RecordIntegrationResultResult:
        command = integration.IntegrationReportRequest(
            attempt_id=str(input.attempt_id),
            generation=input.generation,
            integration_id=str(input.integration_id),
            outcome=input.outcome.value,
            target_branch=input.target_branch,
            base_revision=input.base_revision,
            result_revision=input.result_revision,
            verified_how=input.verified_how.value,
            note=input.note,
            reservation_ids=[str(r) for r in input.reservation_ids],
            idempotency_key=input.idempotency_key,
        )
        return await mutate(
            info,
            lambda uow, actor: integration.record_integration_result(uow, actor, command),
            _integration_payload,
        )

    @strawberry.mutation(description="Record what the remote holds after an uncertain publish.")
    async def reconcile_integration(
        self, info: Info[HubContext, Any], input: ReconcileIntegrationInput
    ) -> ReconcileIntegrationResult:
        return await mutate(
            info,
            lambda uow, actor: integration.reconcile_integration(
                uow,
                actor,
                integration_id=str(input.integration_id),
                remote_revision=input.remote_revision,
                published=input.published,
                verified_how=input.verified_how.value,
                note=input.note,
                idempotency_key=input.idempotency_key,
            ),
            _integration_payload,
        )

    @strawberry.mutation(
        description=(
            "Operators: free a target reserved by an integration whose attempt is gone, "
            "saying why. An uncertain publish is reconciled instead."
        )
    )
    async def release_integration(
        self, info: Info[HubContext, Any], input: ReleaseIntegrationInput
    ) -> ReleaseIntegrationResult:
        return await mutate(
            info,
            lambda uow, actor: integration.IntegrationResult(
                integration.release_integration(
                    uow, actor, integration_id=str(input.integration_id), reason=input.reason
                )
            ),
            _integration_payload,
        )

    @strawberry.mutation(description="Validation of the integrated result; completes the task.")
    async def record_validation(
        self, info: Info[HubContext, Any], input: RecordValidationInput
    ) -> RecordValidationResult:
        command = integration.ValidationRequest(
            attempt_id=str(input.attempt_id),
            generation=input.generation,
            integration_id=str(input.integration_id),
            result_revision=input.result_revision,
            passed=input.passed,
            evidence_ids=[str(e) for e in input.evidence_ids],
            summary=input.summary,
            reservation_ids=[str(r) for r in input.reservation_ids],
            idempotency_key=input.idempotency_key,
        )
        return await mutate(
            info,
            lambda uow, actor: integration.record_validation(uow, actor, command),
            lambda made, now: RecordValidationPayload(
                validation=Validation.of(made.validation),
                integration=Integration.of(made.integration),
                replay=made.replay,
                server_time=now,
            ),
        )

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
            lambda status, now: ReviewStatusPayload(
                status=ReviewStatus.of(status), server_time=now
            ),
        )


def _integration_payload(made: integration.IntegrationResult, now: datetime) -> IntegrationPayload:
    return IntegrationPayload(
        integration=Integration.of(made.integration), replay=made.replay, server_time=now
    )
