"""The resources mutations: `defineResource`, `acquireResources`, `releaseResources`,
`clearHold`, `recordCapacityObservation`."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.mapping import from_view, payload
from hub.api.operations import mutate
from hub.api.resources.inputs import (
    AcquireResourcesInput,
    ClearHoldInput,
    DefineResourceInput,
    RecordCapacityObservationInput,
    ReleaseResourcesInput,
)
from hub.api.resources.payloads import (
    AcquireResourcesResult,
    CapacityObservationPayload,
    ClearHoldResult,
    DefineResourceResult,
    RecordCapacityObservationResult,
    ReleaseResourcesResult,
    ReservationPayload,
    ReservationsPayload,
    ResourcePayload,
)
from hub.api.resources.types import Reservation, Resource
from hub.resources import service as resources


@strawberry.type
class ResourcesMutation:
    @strawberry.mutation
    async def define_resource(
        self, info: Info[HubContext, Any], input: DefineResourceInput
    ) -> DefineResourceResult:
        command = resources.ResourceDefinition(
            project_id=str(input.project_id),
            scope=input.scope,
            key=input.key,
            mode=input.mode,
            capacity=input.capacity,
            unit=input.unit,
            description=input.description,
        )
        return await mutate(
            info,
            lambda uow, actor: resources.define_resource(uow, actor, command),
            lambda made, now: ResourcePayload(
                resource=from_view(Resource, made[0]), created=made[1], server_time=now
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
            payload(ReservationsPayload),
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
                reservations=[from_view(Reservation, r) for r in made],
                replay=False,
                server_time=now,
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
            payload(ReservationPayload, "reservation"),
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
            payload(CapacityObservationPayload, "reading"),
        )
