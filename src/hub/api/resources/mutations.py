"""The resources mutations: `defineResource`, `acquireResources`, `releaseResources`,
`clearHold`, `recordCapacityObservation`."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.mapping import call, from_view, payload
from hub.api.operations import mutate
from hub.api.problems import Problem
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
    @strawberry.mutation(graphql_type=DefineResourceResult)
    async def define_resource(
        self, info: Info[HubContext, Any], input: DefineResourceInput
    ) -> ResourcePayload | Problem:
        return await mutate(
            info,
            call(resources.define_resource, input),
            lambda made, now: ResourcePayload(
                resource=from_view(Resource, made[0]), created=made[1], server_time=now
            ),
        )

    @strawberry.mutation(
        graphql_type=AcquireResourcesResult,
        description="Reserve the whole set, or nothing (Blocked names why).",
    )
    async def acquire_resources(
        self, info: Info[HubContext, Any], input: AcquireResourcesInput
    ) -> ReservationsPayload | Problem:
        return await mutate(
            info,
            call(resources.acquire_resources, input),
            payload(ReservationsPayload),
        )

    @strawberry.mutation(graphql_type=ReleaseResourcesResult)
    async def release_resources(
        self, info: Info[HubContext, Any], input: ReleaseResourcesInput
    ) -> ReservationsPayload | Problem:
        return await mutate(
            info,
            call(resources.release_resources, input),
            lambda made, now: ReservationsPayload(
                reservations=[from_view(Reservation, r) for r in made],
                replay=False,
                server_time=now,
            ),
        )

    @strawberry.mutation(
        graphql_type=ClearHoldResult,
        description="Operators: end a recovery hold, with a reason.",
    )
    async def clear_hold(
        self, info: Info[HubContext, Any], input: ClearHoldInput
    ) -> ReservationPayload | Problem:
        return await mutate(
            info, call(resources.clear_hold, input), payload(ReservationPayload, "reservation")
        )

    @strawberry.mutation(
        graphql_type=RecordCapacityObservationResult,
        description="Store a dated capacity reading (not a promise).",
    )
    async def record_capacity_observation(
        self, info: Info[HubContext, Any], input: RecordCapacityObservationInput
    ) -> CapacityObservationPayload | Problem:
        return await mutate(
            info,
            call(resources.record_capacity_observation, input),
            payload(CapacityObservationPayload, "reading"),
        )
