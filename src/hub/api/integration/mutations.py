"""The integration mutations: `claimIntegration`, `recordIntegrationResult`,
`reconcileIntegration`, `releaseIntegration`, `recordValidation`."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.integration.inputs import (
    ClaimIntegrationInput,
    ReconcileIntegrationInput,
    RecordIntegrationResultInput,
    RecordValidationInput,
    ReleaseIntegrationInput,
)
from hub.api.integration.payloads import (
    ClaimIntegrationPayload,
    ClaimIntegrationResult,
    IntegrationPayload,
    ReconcileIntegrationResult,
    RecordIntegrationResultResult,
    RecordValidationPayload,
    RecordValidationResult,
    ReleaseIntegrationResult,
)
from hub.api.mapping import payload
from hub.api.operations import mutate
from hub.integration import service as integration

_integration_payload = payload(IntegrationPayload)


@strawberry.type
class IntegrationMutation:
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
        return await mutate(
            info,
            lambda uow, actor: integration.claim_integration(uow, actor, command),
            payload(ClaimIntegrationPayload),
        )

    @strawberry.mutation
    async def record_integration_result(
        self, info: Info[HubContext, Any], input: RecordIntegrationResultInput
    ) -> RecordIntegrationResultResult:
        command = integration.IntegrationReportRequest(
            attempt_id=str(input.attempt_id),
            generation=input.generation,
            integration_id=str(input.integration_id),
            outcome=input.outcome,
            target_branch=input.target_branch,
            base_revision=input.base_revision,
            result_revision=input.result_revision,
            verified_how=input.verified_how,
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
                verified_how=input.verified_how,
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
            payload(RecordValidationPayload),
        )
