"""Payloads of the resources mutations, and their result unions."""

from __future__ import annotations

from datetime import datetime

import strawberry

from hub.api.problems import result_union
from hub.api.resources.types import CapacityReading, Reservation, Resource
from hub.resources import service as resources


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


DefineResourceResult = result_union(
    "DefineResourceResult", ResourcePayload, resources.define_resource
)
AcquireResourcesResult = result_union(
    "AcquireResourcesResult", ReservationsPayload, resources.acquire_resources
)
ReleaseResourcesResult = result_union(
    "ReleaseResourcesResult", ReservationsPayload, resources.release_resources
)
ClearHoldResult = result_union("ClearHoldResult", ReservationPayload, resources.clear_hold)
RecordCapacityObservationResult = result_union(
    "RecordCapacityObservationResult",
    CapacityObservationPayload,
    resources.record_capacity_observation,
)
