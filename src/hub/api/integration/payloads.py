"""Payloads of the integration mutations, and their result unions."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from hub.api.integration.types import Integration, Validation
from hub.api.mapping import shows
from hub.api.problems import AnyProblem
from hub.api.work.types import Attempt, Lease, Task


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
