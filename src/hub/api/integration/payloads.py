"""Payloads of the integration mutations, and their result unions."""

from __future__ import annotations

from datetime import datetime

import strawberry

from hub.api.integration.types import Integration, Validation
from hub.api.mapping import shows
from hub.api.problems import result_union
from hub.api.work.types import Attempt, Lease, Task
from hub.integration import service as integration


@strawberry.type
class ClaimIntegrationPayload:
    integration: Integration
    task: Task = strawberry.field(metadata=shows("claim.task"))
    attempt: Attempt = strawberry.field(metadata=shows("claim.attempt"))
    lease: Lease = strawberry.field(metadata=shows("claim.attempt.lease"))
    replay: bool = strawberry.field(metadata=shows("claim.replay"))
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


ClaimIntegrationResult = result_union(
    "ClaimIntegrationResult", ClaimIntegrationPayload, integration.claim_integration
)
RecordIntegrationResultResult = result_union(
    "RecordIntegrationResultResult", IntegrationPayload, integration.record_integration_result
)
ReconcileIntegrationResult = result_union(
    "ReconcileIntegrationResult", IntegrationPayload, integration.reconcile_integration
)
RecordValidationResult = result_union(
    "RecordValidationResult", RecordValidationPayload, integration.record_validation
)

ReleaseIntegrationResult = result_union(
    "ReleaseIntegrationResult", IntegrationPayload, integration.release_integration
)
