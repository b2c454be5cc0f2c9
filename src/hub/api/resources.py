"""resources: definitions, all-or-nothing reservations, capacity readings, recovery holds."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.operations import mutate, read, read_optional
from hub.api.problems import AnyProblem
from hub.api.resources_types import (
    CapacityReading,
    Reservation,
    Resource,
    ResourceMode,
    ResourceScope,
    ResourceStatus,
)
from hub.resources import service as resources

# --- inputs ---------------------------------------------------------------------------


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


# --- payloads -------------------------------------------------------------------------


@strawberry.type
class ResourcePayload:
    resource: Resource
    created: bool = strawberry.field(description="False: the identical resource existed.")
    server_time: datetime


@strawberry.type
class ReservationsPayload:
    reservations: list[Reservation]
    replay: bool
    server_time: datetime


@strawberry.type
class ReservationPayload:
    reservation: Reservation
    server_time: datetime


@strawberry.type
class CapacityObservationPayload:
    reading: CapacityReading
    server_time: datetime


DefineResourceResult = Annotated[
    ResourcePayload | AnyProblem, strawberry.union("DefineResourceResult")
]
AcquireResourcesResult = Annotated[
    ReservationsPayload | AnyProblem, strawberry.union("AcquireResourcesResult")
]
ReleaseResourcesResult = Annotated[
    ReservationsPayload | AnyProblem, strawberry.union("ReleaseResourcesResult")
]
ClearHoldResult = Annotated[ReservationPayload | AnyProblem, strawberry.union("ClearHoldResult")]
RecordCapacityObservationResult = Annotated[
    CapacityObservationPayload | AnyProblem, strawberry.union("RecordCapacityObservationResult")
]


# --- queries --------------------------------------------------------------------------


@strawberry.type
class ResourcesQuery:
    @strawberry.field(
        description="The resources a project can reserve (its own and shared ones), with "
        "reservations and holds judged now and the latest capacity reading."
    )
    async def resources(
        self, info: Info[HubContext, Any], project_id: strawberry.ID
    ) -> list[ResourceStatus]:
        found = await read(info, lambda uow, _: resources.project_resources(uow, str(project_id)))
        return [ResourceStatus.of(status) for status in found]

    @strawberry.field
    async def reservation(
        self, info: Info[HubContext, Any], id: strawberry.ID
    ) -> Reservation | None:
        view = await read_optional(info, lambda uow, _: resources.get_reservation(uow, str(id)))
        return Reservation.of(view) if view else None


# --- mutations ------------------------------------------------------------------------


@strawberry.type
class ResourcesMutation:
    @strawberry.mutation
    async def define_resource(
        self, info: Info[HubContext, Any], input: DefineResourceInput
    ) -> DefineResourceResult:
        command = resources.ResourceDefinition(
            project_id=str(input.project_id),
            scope=input.scope.value,
            key=input.key,
            mode=input.mode.value,
            capacity=input.capacity,
            unit=input.unit,
            description=input.description,
        )
        return await mutate(
            info,
            lambda uow, actor: resources.define_resource(uow, actor, command),
            lambda made, now: ResourcePayload(
                resource=Resource.of(made[0]), created=made[1], server_time=now
            ),
        )

    @strawberry.mutation(description="Reserve the whole set, or nothing (Blocked names why).")
    async def acquire_resources(
        self, info: Info[HubContext, Any], input: AcquireResourcesInput
    ) -> AcquireResourcesResult:
        command = resources.AcquireRequest(
            attempt_id=str(input.attempt_id),
            generation=input.generation,
            requests=[
                resources.ResourceRequest(resource_id=str(r.resource_id), units=r.units)
                for r in input.requests
            ],
            job_id=str(input.job_id) if input.job_id else None,
            idempotency_key=input.idempotency_key,
        )
        return await mutate(
            info,
            lambda uow, actor: resources.acquire_resources(uow, actor, command),
            lambda made, now: ReservationsPayload(
                reservations=[Reservation.of(r) for r in made.reservations],
                replay=made.replay,
                server_time=now,
            ),
        )

    @strawberry.mutation
    async def release_resources(
        self, info: Info[HubContext, Any], input: ReleaseResourcesInput
    ) -> ReleaseResourcesResult:
        return await mutate(
            info,
            lambda uow, actor: resources.release_resources(
                uow,
                actor,
                attempt_id=str(input.attempt_id),
                generation=input.generation,
                reservation_ids=[str(r) for r in input.reservation_ids],
                reason=input.reason,
            ),
            lambda made, now: ReservationsPayload(
                reservations=[Reservation.of(r) for r in made], replay=False, server_time=now
            ),
        )

    @strawberry.mutation(description="Operators: end a recovery hold, with a reason.")
    async def clear_hold(
        self, info: Info[HubContext, Any], input: ClearHoldInput
    ) -> ClearHoldResult:
        return await mutate(
            info,
            lambda uow, actor: resources.clear_hold(
                uow, actor, reservation_id=str(input.reservation_id), reason=input.reason
            ),
            lambda view, now: ReservationPayload(
                reservation=Reservation.of(view), server_time=now
            ),
        )

    @strawberry.mutation(description="Store a dated capacity reading (not a promise).")
    async def record_capacity_observation(
        self, info: Info[HubContext, Any], input: RecordCapacityObservationInput
    ) -> RecordCapacityObservationResult:
        return await mutate(
            info,
            lambda uow, actor: resources.record_capacity_observation(
                uow,
                actor,
                resource_id=str(input.resource_id),
                available=input.available,
                total=input.total,
                source=input.source,
                observed_at=input.observed_at,
                project_id=str(input.project_id) if input.project_id else None,
            ),
            lambda view, now: CapacityObservationPayload(
                reading=CapacityReading.of(view), server_time=now
            ),
        )
