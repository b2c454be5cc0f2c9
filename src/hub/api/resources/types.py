"""GraphQL types of the resources module: resources, reservations, capacity readings."""

from __future__ import annotations

from datetime import datetime

import strawberry

from hub.api.resources.enums import ReservationState, ResourceMode, ResourceScope


@strawberry.type
class Resource:
    id: strawberry.ID
    project_id: strawberry.ID = strawberry.field(description="The project that defined it.")
    scope: ResourceScope
    key: str
    mode: ResourceMode
    capacity: int | None
    unit: str
    description: str
    shared_across_projects: bool = strawberry.field(
        description="WORKSTATION and ENVIRONMENT resources are one resource per key for "
        "every project."
    )
    created_at: datetime


@strawberry.type
class Reservation:
    id: strawberry.ID
    resource_id: strawberry.ID
    resource_key: str
    project_id: strawberry.ID
    task_id: strawberry.ID
    attempt_id: strawberry.ID
    job_id: strawberry.ID | None
    units: int
    state: ReservationState
    open_job_ids: list[strawberry.ID] = strawberry.field(
        description="Jobs of the attempt that are not terminal: what keeps a hold."
    )
    acquired_at: datetime
    acquired_by: strawberry.ID
    released_at: datetime | None
    release_reason: str | None
    hold_cleared_by: strawberry.ID | None
    hold_clear_reason: str | None


@strawberry.type(description="A dated reading of available units: not a promise.")
class CapacityReading:
    id: strawberry.ID
    resource_id: strawberry.ID
    available: int
    total: int | None
    source: str
    observed_at: datetime
    recorded_at: datetime
    recorded_by: strawberry.ID


@strawberry.type
class ResourceStatus:
    resource: Resource
    reservations: list[Reservation] = strawberry.field(
        description="The reservations blocking it now: RESERVED and HELD."
    )
    units_in_use: int
    latest_reading: CapacityReading | None
