"""Payloads of the resources mutations, and their result unions."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from hub.api.problems import AnyProblem
from hub.api.resources.types import CapacityReading, Reservation, Resource


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
