"""Reading resources and reservations, and judging a reservation's state at read time."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select

from hub.errors import (
    NotFound,
)
from hub.jobs import service as jobs
from hub.mapping import Shortlist
from hub.projects import service as projects
from hub.resources.tables import (
    CapacityObservation,
    Reservation,
    Resource,
)
from hub.resources.views import (
    BLOCKING,
    ReservationView,
    ResourceStatus,
    ResourceView,
    capacity_reading,
    reservation_view,
    resource_view,
)
from hub.resources.vocabulary import (
    SHARED_SCOPES,
    ReservationState,
)
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work
from hub.work.vocabulary import AttemptState


def get_resource(uow: UnitOfWork, resource_id: str) -> ResourceView:
    row = uow.session.get(Resource, resource_id)
    if row is None:
        raise NotFound("resource", resource_id)
    return shown_resource(row)


def get_reservation(uow: UnitOfWork, reservation_id: str) -> ReservationView:
    return reservation_views(uow, reservations_by_id(uow, [reservation_id]))[0]


def project_resources(uow: UnitOfWork, project_id: str) -> list[ResourceStatus]:
    """The resources a project can reserve (its own and the shared ones), with who holds
    what now, units in use and the latest capacity reading."""
    projects.ensure_project_exists(uow, project_id)
    resources = uow.session.scalars(
        select(Resource)
        .where((Resource.project_id == project_id) | Resource.scope.in_(SHARED_SCOPES))
        .order_by(Resource.scope, Resource.key)
    ).all()
    ids = [r.id for r in resources]
    judged = judge(uow, active_reservations(uow, ids))
    keys = {r.id: r.key for r in resources}
    readings: dict[str, CapacityObservation] = {}
    if ids:
        for reading in uow.session.scalars(
            select(CapacityObservation)
            .where(CapacityObservation.resource_id.in_(ids))
            .order_by(CapacityObservation.recorded_at, CapacityObservation.id)
        ):
            readings[reading.resource_id] = reading
    statuses = []
    for resource in resources:
        blocking = [
            reservation_view(row, keys[row.resource_id], state, open_jobs)
            for row, state, open_jobs in judged
            if row.resource_id == resource.id and state in BLOCKING
        ]
        latest = readings.get(resource.id)
        statuses.append(
            ResourceStatus(
                resource=shown_resource(resource),
                reservations=tuple(blocking),
                units_in_use=sum(r.units for r in blocking),
                latest_reading=capacity_reading(latest) if latest else None,
            )
        )
    return statuses


def task_reservations(uow: UnitOfWork, task_id: str) -> list[ReservationView]:
    rows = uow.session.scalars(
        select(Reservation).where(Reservation.task_id == task_id).order_by(Reservation.id)
    ).all()
    return reservation_views(uow, list(rows))


def task_holds(uow: UnitOfWork, task_id: str) -> list[ReservationView]:
    """The task's reservations in a recovery hold now (for the recovery packet)."""
    return [view for view in task_reservations(uow, task_id) if view.state == ReservationState.HELD]


def holds(uow: UnitOfWork, *, limit: int) -> Shortlist[ReservationView]:
    """Reservations held now, in every project, the oldest first: their attempt is over
    but a job it launched is still open, so they stay until the job ends or an operator
    clears them (`clearHold`; docs/design.md, "Resources and
    recovery holds"). Only attempts with an open
    job can keep one, so only their reservations are read and judged."""
    held = _held_now(uow)
    return Shortlist(held[: max(limit, 0)], len(held))


def count_holds(uow: UnitOfWork) -> dict[str, int]:
    """Each project's reservations held now, awaiting the job's end or an operator's
    `clearHold` (read as `holds` reads them)."""
    counts: dict[str, int] = {}
    for view in _held_now(uow):
        counts[view.project_id] = counts.get(view.project_id, 0) + 1
    return counts


def _held_now(uow: UnitOfWork) -> list[ReservationView]:
    attempt_ids = jobs.attempts_with_open_jobs(uow)
    if not attempt_ids:
        return []
    rows = uow.session.scalars(
        select(Reservation)
        .where(Reservation.attempt_id.in_(attempt_ids), Reservation.released_at.is_(None))
        .order_by(Reservation.acquired_at, Reservation.id)
    ).all()
    return [view for view in reservation_views(uow, rows) if view.state == ReservationState.HELD]


def attempts_live(uow: UnitOfWork, attempt_ids: Sequence[str]) -> dict[str, bool]:
    live: dict[str, bool] = {}
    for attempt_id in sorted(set(attempt_ids)):
        attempt = work.get_attempt(uow, attempt_id)
        live[attempt_id] = attempt.state == AttemptState.ACTIVE and not attempt.lease_expired
    return live


def judge(
    uow: UnitOfWork, rows: Sequence[Reservation]
) -> list[tuple[Reservation, str, tuple[str, ...]]]:
    """Each reservation with its state at coordinator time, and the jobs that keep it."""
    active_attempts = [row.attempt_id for row in rows if row.released_at is None]
    live = attempts_live(uow, active_attempts)
    open_jobs = jobs.open_jobs_by_attempt(uow, sorted(set(active_attempts)))
    judged: list[tuple[Reservation, str, tuple[str, ...]]] = []
    for row in rows:
        if row.released_at is not None:
            judged.append((row, ReservationState.RELEASED, ()))
            continue
        running = tuple(open_jobs.get(row.attempt_id, ()))
        if row.job_id is not None:
            # A job's reservation lasts as long as the job; after the lease it is a hold.
            keeping = tuple(j for j in running if j == row.job_id)
        else:
            keeping = running
        if live[row.attempt_id] and (row.job_id is None or keeping):
            judged.append((row, ReservationState.RESERVED, keeping))
        elif keeping:
            judged.append((row, ReservationState.HELD, keeping))
        else:
            judged.append((row, ReservationState.LAPSED, ()))
    return judged


def lock_resources(uow: UnitOfWork, resource_ids: Sequence[str]) -> dict[str, Resource]:
    rows = uow.session.scalars(
        select(Resource)
        .where(Resource.id.in_(resource_ids))
        .order_by(Resource.id)
        .with_for_update()
        .execution_options(populate_existing=True)
    ).all()
    found = {row.id: row for row in rows}
    for resource_id in resource_ids:
        if resource_id not in found:
            raise NotFound("resource", resource_id)
    return found


def active_reservations(uow: UnitOfWork, resource_ids: Sequence[str]) -> list[Reservation]:
    if not resource_ids:
        return []
    return list(
        uow.session.scalars(
            select(Reservation)
            .where(Reservation.resource_id.in_(resource_ids), Reservation.released_at.is_(None))
            .order_by(Reservation.id)
        ).all()
    )


def reservations_by_id(
    uow: UnitOfWork, reservation_ids: Sequence[str], *, lock: bool = False
) -> list[Reservation]:
    statement = select(Reservation).where(Reservation.id.in_(list(reservation_ids)))
    if lock:
        statement = statement.with_for_update().execution_options(populate_existing=True)
    found = {row.id: row for row in uow.session.scalars(statement.order_by(Reservation.id))}
    for reservation_id in reservation_ids:
        if reservation_id not in found:
            raise NotFound("reservation", reservation_id)
    return [found[reservation_id] for reservation_id in dict.fromkeys(reservation_ids)]


def reservation_views(uow: UnitOfWork, rows: Sequence[Reservation]) -> list[ReservationView]:
    resource_ids = sorted({row.resource_id for row in rows})
    keys = (
        dict(
            uow.session.execute(
                select(Resource.id, Resource.key).where(Resource.id.in_(resource_ids))
            )
            .tuples()
            .all()
        )
        if resource_ids
        else {}
    )
    return [
        reservation_view(row, keys.get(row.resource_id, row.resource_id), state, open_jobs)
        for row, state, open_jobs in judge(uow, rows)
    ]


def shown_resource(row: Resource) -> ResourceView:
    return resource_view(row, shared=row.scope in SHARED_SCOPES)
