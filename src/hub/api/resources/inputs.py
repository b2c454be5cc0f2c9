"""Inputs of the resources mutations."""

from __future__ import annotations

from datetime import datetime

import strawberry

from hub.api.resources.enums import ResourceMode, ResourceScope


@strawberry.input
class DefineResourceInput:
    project_id: strawberry.ID
    scope: ResourceScope
    key: str = strawberry.field(
        description="Stable key; WORKSTATION and ENVIRONMENT keys are shared by all projects."
    )
    mode: ResourceMode
    capacity: int | None = strawberry.field(default=None, description="CAPACITY mode: units.")
    unit: str = ""
    description: str = ""


@strawberry.input
class ResourceRequestInput:
    resource_id: strawberry.ID
    units: int = 1


@strawberry.input
class AcquireResourcesInput:
    attempt_id: strawberry.ID
    generation: int
    requests: list[ResourceRequestInput]
    job_id: strawberry.ID | None = strawberry.field(
        default=None, description="Reserve for this job of the attempt: kept while it runs."
    )
    idempotency_key: str | None = None


@strawberry.input
class ReleaseResourcesInput:
    attempt_id: strawberry.ID
    generation: int
    reservation_ids: list[strawberry.ID]
    reason: str = ""


@strawberry.input
class ClearHoldInput:
    reservation_id: strawberry.ID
    reason: str = strawberry.field(description="Required: recorded with who cleared it.")


@strawberry.input
class RecordCapacityObservationInput:
    resource_id: strawberry.ID
    available: int
    source: str = strawberry.field(description="Who or what read it, e.g. `df on ws-3`.")
    total: int | None = None
    observed_at: datetime | None = None
    project_id: strawberry.ID | None = strawberry.field(
        default=None, description="The project reporting it (default: the defining one)."
    )
