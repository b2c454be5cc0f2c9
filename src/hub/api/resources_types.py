"""GraphQL types of the resources module: resources, reservations, capacity readings."""

from __future__ import annotations

from datetime import datetime
from enum import Enum

import strawberry

from hub.resources import service as resources


@strawberry.enum
class ResourceScope(Enum):
    WORKSTATION = "WORKSTATION"
    CHECKOUT = "CHECKOUT"
    PROJECT = "PROJECT"
    ENVIRONMENT = "ENVIRONMENT"


@strawberry.enum
class ResourceMode(Enum):
    EXCLUSIVE = "EXCLUSIVE"
    CAPACITY = "CAPACITY"


@strawberry.enum(description="Judged at read time from the attempt's lease and its jobs.")
class ReservationState(Enum):
    RESERVED = "RESERVED"
    HELD = "HELD"
    LAPSED = "LAPSED"
    RELEASED = "RELEASED"


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

    @classmethod
    def of(cls, view: resources.ResourceView) -> Resource:
        return cls(
            id=strawberry.ID(view.id),
            project_id=strawberry.ID(view.project_id),
            scope=ResourceScope(view.scope),
            key=view.key,
            mode=ResourceMode(view.mode),
            capacity=view.capacity,
            unit=view.unit,
            description=view.description,
            shared_across_projects=view.shared_across_projects,
            created_at=view.created_at,
        )


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

    @classmethod
    def of(cls, view: resources.ReservationView) -> Reservation:
        return cls(
            id=strawberry.ID(view.id),
            resource_id=strawberry.ID(view.resource_id),
            resource_key=view.resource_key,
            project_id=strawberry.ID(view.project_id),
            task_id=strawberry.ID(view.task_id),
            attempt_id=strawberry.ID(view.attempt_id),
            job_id=strawberry.ID(view.job_id) if view.job_id else None,
            units=view.units,
            state=ReservationState(view.state),
            open_job_ids=[strawberry.ID(j) for j in view.open_job_ids],
            acquired_at=view.acquired_at,
            acquired_by=strawberry.ID(view.acquired_by),
            released_at=view.released_at,
            release_reason=view.release_reason,
            hold_cleared_by=strawberry.ID(view.hold_cleared_by) if view.hold_cleared_by else None,
            hold_clear_reason=view.hold_clear_reason,
        )


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

    @classmethod
    def of(cls, view: resources.CapacityReading) -> CapacityReading:
        return cls(
            id=strawberry.ID(view.id),
            resource_id=strawberry.ID(view.resource_id),
            available=view.available,
            total=view.total,
            source=view.source,
            observed_at=view.observed_at,
            recorded_at=view.recorded_at,
            recorded_by=strawberry.ID(view.recorded_by),
        )


@strawberry.type
class ResourceStatus:
    resource: Resource
    reservations: list[Reservation] = strawberry.field(
        description="The reservations blocking it now: RESERVED and HELD."
    )
    units_in_use: int
    latest_reading: CapacityReading | None

    @classmethod
    def of(cls, view: resources.ResourceStatus) -> ResourceStatus:
        return cls(
            resource=Resource.of(view.resource),
            reservations=[Reservation.of(r) for r in view.reservations],
            units_in_use=view.units_in_use,
            latest_reading=CapacityReading.of(view.latest_reading) if view.latest_reading else None,
        )
