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
from hub.api.mapping import call, payload
from hub.api.operations import mutate
from hub.api.problems import Problem
from hub.integration import service as integration

_integration_payload = payload(IntegrationPayload)


@strawberry.type
class IntegrationMutation:
    @strawberry.mutation(
        graphql_type=ClaimIntegrationResult,
        description="Claim integration: the task and the target's reservation.",
    )
    async def claim_integration(
        self, info: Info[HubContext, Any], input: ClaimIntegrationInput
    ) -> ClaimIntegrationPayload | Problem:
        return await mutate(
            info, call(integration.claim_integration, input), payload(ClaimIntegrationPayload)
        )

    @strawberry.mutation(graphql_type=RecordIntegrationResultResult)
    async def record_integration_result(
        self, info: Info[HubContext, Any], input: RecordIntegrationResultInput
    ) -> IntegrationPayload | Problem:
        return await mutate(
            info, call(integration.record_integration_result, input), _integration_payload
        )

    @strawberry.mutation(
        graphql_type=ReconcileIntegrationResult,
        description="Record what the remote holds after an uncertain publish.",
    )
    async def reconcile_integration(
        self, info: Info[HubContext, Any], input: ReconcileIntegrationInput
    ) -> IntegrationPayload | Problem:
        return await mutate(
            info, call(integration.reconcile_integration, input), _integration_payload
        )

    @strawberry.mutation(
        graphql_type=ReleaseIntegrationResult,
        description=(
            "Operators: free a target reserved by an integration whose attempt is gone, "
            "saying why. An uncertain publish is reconciled instead."
        ),
    )
    async def release_integration(
        self, info: Info[HubContext, Any], input: ReleaseIntegrationInput
    ) -> IntegrationPayload | Problem:
        return await mutate(
            info,
            lambda uow, actor: integration.IntegrationResult(
                integration.release_integration(
                    uow, actor, integration_id=str(input.integration_id), reason=input.reason
                )
            ),
            _integration_payload,
        )

    @strawberry.mutation(
        graphql_type=RecordValidationResult,
        description="Validation of the integrated result; completes the task.",
    )
    async def record_validation(
        self, info: Info[HubContext, Any], input: RecordValidationInput
    ) -> RecordValidationPayload | Problem:
        return await mutate(
            info, call(integration.record_validation, input), payload(RecordValidationPayload)
        )
