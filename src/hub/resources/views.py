"""What the resources module returns: plain views, with reservation states judged now.

A reservation's state is a function of its attempt's lease and its jobs at the moment
of reading (no background job moves it):

    RESERVED  its attempt holds a live lease (or its job still runs under one)
    HELD      the lease has ended while a job the attempt launched is not terminal:
              a recovery hold, blocking this resource only
    LAPSED    the lease has ended and no job of the attempt can still interfere
    RELEASED  released by its owner, ended with its job, or its hold was cleared
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from hub.jobs.service import JobView
from hub.mapping import view_of
from hub.resources.tables import CapacityObservation, Reservation, Resource
from hub.resources.vocabulary import ReservationState, ResourceMode, ResourceScope

BLOCKING = (ReservationState.RESERVED, ReservationState.HELD)


@dataclass(frozen=True)
class ResourceView:
    id: str
    project_id: str
    scope: ResourceScope
    key: str
    mode: ResourceMode
    capacity: int | None
    unit: str
    description: str
    shared_across_projects: bool
    created_at: datetime


@dataclass(frozen=True)
class ReservationView:
    id: str
    resource_id: str
    resource_key: str
    project_id: str
    task_id: str
    attempt_id: str
    job_id: str | None
    units: int
    state: ReservationState
    open_job_ids: tuple[str, ...]
    acquired_at: datetime
    acquired_by: str
    released_at: datetime | None
    release_reason: str | None
    hold_cleared_by: str | None
    hold_clear_reason: str | None


@dataclass(frozen=True)
class CapacityReading:
    id: str
    resource_id: str
    available: int
    total: int | None
    source: str
    observed_at: datetime
    recorded_at: datetime
    recorded_by: str


@dataclass(frozen=True)
class ResourceStatus:
    resource: ResourceView
    reservations: tuple[ReservationView, ...]  # the blocking ones: RESERVED and HELD
    units_in_use: int
    latest_reading: CapacityReading | None


@dataclass(frozen=True)
class JobReport:
    """A job's observation or result, with the reservations it ended and the recovery
    holds it cleared (none for a replay, which changes nothing)."""

    job: JobView
    replay: bool
    released_reservations: tuple[ReservationView, ...]


@dataclass(frozen=True)
class Acquisition:
    reservations: tuple[ReservationView, ...]
    replay: bool = False


def resource_view(row: Resource, shared: bool) -> ResourceView:
    return view_of(ResourceView, row, shared_across_projects=shared)


def reservation_view(
    row: Reservation, resource_key: str, state: str, open_jobs: tuple[str, ...]
) -> ReservationView:
    return view_of(
        ReservationView, row, resource_key=resource_key, state=state, open_job_ids=open_jobs
    )


def capacity_reading(row: CapacityObservation) -> CapacityReading:
    return view_of(CapacityReading, row)
