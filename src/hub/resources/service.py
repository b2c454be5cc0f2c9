"""Resources: definitions, all-or-nothing acquisition, release, and recovery holds.

Acquisition locks the requested resource rows (in id order, so two acquirers never
deadlock), samples coordinator time after the locks, judges every active reservation
of those resources at that time (`hub.resources.views`), and either reserves the whole
set or raises `Blocked` naming the blocking resources, having written nothing.

Lease expiry does not prove a resource is free: while a job the expired attempt
launched is not terminal, its reservations stay in a recovery hold until the producer's
terminal result, a reporter's observation that the process exited, or an operator's
`clear_hold` with a reason. Every clearing is an event naming who and why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from hub.errors import (
    Blocked,
    Conflict,
    InvalidTransition,
    NotFound,
    PermissionDenied,
    ValidationFailed,
    raises,
)
from hub.events.service import (
    About,
    record_event,
    task_of,
)
from hub.idempotency import service as idempotency
from hub.identity.views import Actor, require_full_credential
from hub.ids import new_id
from hub.inputs import bounded_int, clean_choice, clean_label, clean_moment, clean_text
from hub.jobs import service as jobs
from hub.jobs.vocabulary import ProducerStatus
from hub.projects import service as projects
from hub.resources.errors import (
    NotHeld,
    ReservationsNotHeld,
    ResourceDefinedDifferently,
    ResourcesBusy,
)
from hub.resources.tables import (
    CapacityObservation,
    Reservation,
    Resource,
)
from hub.resources.views import (
    BLOCKING,
    Acquisition,
    CapacityReading,
    JobReport,
    ReservationView,
    ResourceStatus,
    ResourceView,
    capacity_reading,
    reservation_view,
    resource_view,
)
from hub.resources.vocabulary import (
    SHARED_SCOPES,
    HoldClearance,
    ReservationState,
    ResourceEvent,
    ResourceMode,
    ResourceScope,
)
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work
from hub.work.vocabulary import AttemptState

MAX_REQUESTS = 50
MAX_UNITS = 1_000_000_000


@dataclass(frozen=True)
class ResourceDefinition:
    project_id: str
    scope: str
    key: str
    mode: str
    capacity: int | None = None
    unit: str = ""
    description: str = ""


@dataclass(frozen=True)
class ResourceRequest:
    resource_id: str
    units: int = 1


@dataclass(frozen=True)
class AcquireRequest:
    attempt_id: str
    generation: int
    requests: Sequence[ResourceRequest]
    job_id: str | None = None
    idempotency_key: str | None = None


def _identity_key(project_id: str, scope: str, key: str) -> str:
    # Workstation and environment resources are physical things several projects can
    # share: they are one resource by (scope, key), whichever project defined it first.
    if scope in SHARED_SCOPES:
        return f"{scope}:{key}"
    return f"{project_id}:{scope}:{key}"


@raises(NotFound, PermissionDenied, Conflict, ValidationFailed)
def define_resource(
    uow: UnitOfWork, actor: Actor, cmd: ResourceDefinition
) -> tuple[ResourceView, bool]:
    """Define a resource, or return the identical existing one (`False`: not created)."""
    require_full_credential(actor)
    scope = clean_choice("scope", cmd.scope, ResourceScope)
    mode = clean_choice("mode", cmd.mode, ResourceMode)
    key = clean_label("key", cmd.key, 300)
    unit = clean_label("unit", cmd.unit, 40, required=False)
    description = clean_text("description", cmd.description, 4000, required=False)
    if mode == ResourceMode.CAPACITY:
        if cmd.capacity is None:
            raise ValidationFailed("capacity", "a CAPACITY resource declares its capacity")
        capacity: int | None = bounded_int("capacity", cmd.capacity, 1, MAX_UNITS)
    elif cmd.capacity is not None:
        raise ValidationFailed("capacity", "an EXCLUSIVE resource has no capacity")
    else:
        capacity = None
    projects.ensure_project_exists(uow, cmd.project_id)
    identity_key = _identity_key(cmd.project_id, scope, key)
    uow.no_lock_needed("a definition: its identity key's unique index tells twins apart")
    existing = uow.session.scalar(select(Resource).where(Resource.identity_key == identity_key))
    if existing is not None:
        if (existing.mode, existing.capacity, existing.unit) != (mode, capacity, unit):
            raise ResourceDefinedDifferently(identity_key, existing.id)
        return _resource_view(existing), False
    row = Resource(
        id=new_id("res"),
        project_id=cmd.project_id,
        scope=scope,
        key=key,
        identity_key=identity_key,
        mode=mode,
        capacity=capacity,
        unit=unit,
        description=description,
        created_at=uow.now(),
        created_by=actor.principal_id,
    )
    uow.session.add(row)
    uow.session.flush()
    record_event(
        uow,
        ResourceEvent.DEFINED,
        About(cmd.project_id, row.id),
        by=actor,
        payload={"scope": row.scope, "key": key, "mode": row.mode, "capacity": capacity},
    )
    return _resource_view(row), True


@raises(*work.HOLDING, ValidationFailed, Blocked, *idempotency.KEYED)
def acquire_resources(uow: UnitOfWork, actor: Actor, cmd: AcquireRequest) -> Acquisition:
    """Reserve every requested resource for the attempt (or its job), or none of them."""
    return idempotency.run_keyed(
        uow,
        actor,
        "acquireResources",
        cmd.idempotency_key,
        idempotency.request_of(cmd),
        # Authority is checked again on a replay, which reports the reservations as they are.
        authorize=lambda: work.hold_attempt(
            uow, actor, attempt_id=cmd.attempt_id, generation=cmd.generation
        ),
        replay=lambda _, prior: Acquisition(
            tuple(_views(uow, _reservations(uow, prior["reservation_ids"]))), replay=True
        ),
        execute=lambda held: _acquire(uow, actor, cmd, held),
        receipt=lambda made: {"reservation_ids": [view.id for view in made.reservations]},
    ).value


def _acquire(
    uow: UnitOfWork, actor: Actor, cmd: AcquireRequest, held: work.AttemptResult
) -> Acquisition:
    wanted = _clean_requests(cmd.requests)
    attempt = held.attempt
    if cmd.job_id is not None:
        job = jobs.get_job(uow, cmd.job_id)
        if job.attempt_id != attempt.id:
            raise ValidationFailed("jobId", f"job {job.id} was not launched by this attempt")
        if job.terminal:
            raise ValidationFailed("jobId", f"job {job.id} is {job.status}")
    resources = _lock_resources(uow, sorted(wanted))
    now = uow.now()
    for index, resource_id in enumerate(wanted):
        resource = resources[resource_id]
        units = wanted[resource_id]
        where = f"requests[{index}]"
        if resource.scope not in SHARED_SCOPES and resource.project_id != attempt.project_id:
            raise ValidationFailed(
                f"{where}.resourceId",
                f"{resource.scope.lower()} resource {resource.id} belongs to another project",
            )
        if resource.mode == ResourceMode.EXCLUSIVE and units != 1:
            raise ValidationFailed(f"{where}.units", "an EXCLUSIVE resource is taken whole (1)")
        if resource.capacity is not None and units > resource.capacity:
            raise ValidationFailed(
                f"{where}.units",
                f"{units} exceeds the declared capacity of {resource.key} ({resource.capacity})",
            )
    active = _judged(uow, _active_reservations(uow, list(wanted)))
    blockers: list[str] = []
    held_ones: list[str] = []
    for resource_id in sorted(wanted):
        resource = resources[resource_id]
        blocking = [
            (row, state)
            for row, state, _ in active
            if row.resource_id == resource_id and state in BLOCKING
        ]
        if resource.capacity is None:
            taken = bool(blocking)
        else:
            taken = sum(row.units for row, _ in blocking) + wanted[resource_id] > resource.capacity
        if taken:
            blockers.append(resource_id)
            if any(state == ReservationState.HELD for _, state in blocking):
                held_ones.append(resource_id)
    if blockers:
        detail = f" ({', '.join(held_ones)} in a recovery hold)" if held_ones else ""
        raise ResourcesBusy(
            f"nothing was reserved: {', '.join(blockers)} is not available{detail}", blockers
        )
    rows = [
        Reservation(
            id=new_id("rsv"),
            resource_id=resource_id,
            project_id=attempt.project_id,
            task_id=attempt.task_id,
            attempt_id=attempt.id,
            job_id=cmd.job_id,
            units=wanted[resource_id],
            acquired_at=now,
            acquired_by=actor.principal_id,
        )
        for resource_id in wanted
    ]
    uow.session.add_all(rows)
    uow.session.flush()
    record_event(
        uow,
        ResourceEvent.ACQUIRED,
        task_of(attempt),
        by=actor,
        payload={
            "attempt": attempt.id,
            "job": cmd.job_id,
            "reservations": [row.id for row in rows],
            "resources": list(wanted),
        },
    )
    return Acquisition(tuple(_views(uow, rows)))


def require_reservations(
    uow: UnitOfWork,
    *,
    attempt_id: str,
    reservation_ids: Sequence[str],
    field: str = "reservationIds",
) -> list[ReservationView]:
    """The reservations an operation declares it depends on, checked in its transaction.

    Each must belong to the attempt's project (another project's id is `NotFound`), be
    held by the acting attempt, and be live now: not released, lapsed, or in a recovery
    hold. Otherwise `Blocked` names every one that is not. The rows stay locked until
    the operation commits, so none can be released under it.
    """
    if not reservation_ids:
        return []
    if len(reservation_ids) > MAX_REQUESTS:
        raise ValidationFailed(field, f"must have at most {MAX_REQUESTS} items")
    project_id = work.get_attempt(uow, attempt_id).project_id
    rows = _reservations(uow, list(dict.fromkeys(reservation_ids)), lock=True)
    for row in rows:
        if row.project_id != project_id:
            raise NotFound("reservation", row.id)
    blockers: list[str] = []
    reasons: list[str] = []
    for row, state, _ in _judged(uow, rows):
        if row.attempt_id != attempt_id:
            blockers.append(row.id)
            reasons.append(f"{row.id} is held by attempt {row.attempt_id}, not {attempt_id}")
        elif state != ReservationState.RESERVED:
            blockers.append(row.id)
            reasons.append(f"{row.id} is {state}")
        else:
            continue
    if blockers:
        raise ReservationsNotHeld("; ".join(reasons), blockers)
    return _views(uow, rows)


@raises(*work.HOLDING, ValidationFailed, Blocked, *idempotency.KEYED)
def register_job(uow: UnitOfWork, actor: Actor, cmd: jobs.JobRegistration) -> jobs.JobResult:
    """Register a job together with the reservations it declares it depends on: the job
    is recorded only if the acting attempt holds each of them, live, now."""
    registered = jobs.register_job(uow, actor, cmd)
    if not registered.replay:
        require_reservations(
            uow, attempt_id=registered.job.attempt_id, reservation_ids=cmd.reservation_ids
        )
    return registered


def _clean_requests(requests: Sequence[ResourceRequest]) -> dict[str, int]:
    if not requests:
        raise ValidationFailed("requests", "name at least one resource")
    if len(requests) > MAX_REQUESTS:
        raise ValidationFailed("requests", f"must have at most {MAX_REQUESTS} items")
    wanted: dict[str, int] = {}
    for index, item in enumerate(requests):
        if item.resource_id in wanted:
            raise ValidationFailed(f"requests[{index}].resourceId", "names a resource twice")
        wanted[item.resource_id] = bounded_int(f"requests[{index}].units", item.units, 1, MAX_UNITS)
    return wanted


@raises(*work.HOLDING, ValidationFailed)
def release_resources(
    uow: UnitOfWork,
    actor: Actor,
    *,
    attempt_id: str,
    generation: int,
    reservation_ids: Sequence[str],
    reason: str = "",
) -> list[ReservationView]:
    """The owning attempt gives reservations back (releasing twice changes nothing)."""
    reason = clean_text("reason", reason, 500, required=False)
    held = work.hold_attempt(uow, actor, attempt_id=attempt_id, generation=generation)
    rows = _reservations(uow, reservation_ids, lock=True)
    now = uow.now()
    for row in rows:
        if row.attempt_id != held.attempt.id:
            raise PermissionDenied(f"reservation {row.id} belongs to another attempt")
    released = [row for row in rows if row.released_at is None]
    for row in released:
        row.released_at = now
        row.release_reason = reason or "released by its attempt"
    uow.session.flush()
    if released:
        record_event(
            uow,
            ResourceEvent.RELEASED,
            task_of(held.attempt),
            by=actor,
            payload={
                "attempt": attempt_id,
                "reservations": [row.id for row in released],
                "resources": [row.resource_id for row in released],
                "reason": reason,
            },
        )
    return _views(uow, rows)


@raises(NotFound, PermissionDenied, InvalidTransition, ValidationFailed)
def clear_hold(
    uow: UnitOfWork, actor: Actor, *, reservation_id: str, reason: str
) -> ReservationView:
    """An operator ends a recovery hold, saying why: the third way a hold is cleared
    (docs/design.md, "Resources and recovery holds")."""
    reason = clean_text("reason", reason, 2000)
    if not actor.is_operator or actor.is_reporter:
        raise PermissionDenied("only an operator clears a recovery hold")
    [row] = _reservations(uow, [reservation_id], lock=True)
    [(_, state, open_jobs)] = _judged(uow, [row])
    if state != ReservationState.HELD:
        raise NotHeld(row.id, state)
    _clear(uow, actor, row, how=HoldClearance.OPERATOR, reason=reason, open_jobs=open_jobs)
    return _views(uow, [row])[0]


@raises(NotFound, PermissionDenied, InvalidTransition, ValidationFailed)
def observe_job(
    uow: UnitOfWork,
    actor: Actor,
    *,
    job_id: str,
    status: str,
    observed_at: datetime | None = None,
    note: str | None = None,
) -> JobReport:
    """A reporter's observation of a job (`jobs.service.observe_job`), and, when it saw
    the process exit, the holds that resolves, in the same transaction."""
    view = jobs.observe_job(
        uow, actor, job_id=job_id, status=status, observed_at=observed_at, note=note
    )
    return JobReport(view, False, tuple(release_after_job(uow, actor, view)))


@raises(NotFound, PermissionDenied, InvalidTransition, ValidationFailed)
def finish_job(
    uow: UnitOfWork,
    actor: Actor,
    *,
    job_id: str,
    exit_status: int,
    finished_at: datetime | None = None,
    note: str | None = None,
) -> JobReport:
    """The producer's terminal result (`jobs.service.finish_job`), with the reservations
    it ends and the holds it clears, in the same transaction."""
    result = jobs.finish_job(
        uow, actor, job_id=job_id, exit_status=exit_status, finished_at=finished_at, note=note
    )
    released = () if result.replay else tuple(release_after_job(uow, actor, result.job))
    return JobReport(result.job, result.replay, released)


def release_after_job(uow: UnitOfWork, actor: Actor, job: jobs.JobView) -> list[ReservationView]:
    """After a job's terminal result: end its own reservations, and clear the recovery
    holds of its attempt that nothing else keeps (the producer's result, or a reporter's
    observation that the process exited, is what resolves them; docs/design.md,
    "Resources and recovery holds")."""
    if not job.terminal:
        return []
    rows = uow.session.scalars(
        select(Reservation)
        .where(Reservation.attempt_id == job.attempt_id, Reservation.released_at.is_(None))
        .order_by(Reservation.id)
        .with_for_update()
    ).all()
    if not rows:
        return []
    live = _attempt_live(uow, [job.attempt_id])[job.attempt_id]
    still_open = jobs.open_jobs_by_attempt(uow, [job.attempt_id])[job.attempt_id]
    how = (
        HoldClearance.PRODUCER_RESULT
        if job.status == ProducerStatus.FINISHED
        else HoldClearance.REPORTED_EXIT
    )
    why = (
        f"job {job.id} finished with exit status {job.exit_status}"
        if job.status == ProducerStatus.FINISHED
        else f"job {job.id}'s process was observed to have exited"
    )
    changed: list[Reservation] = []
    for row in rows:
        if row.job_id == job.id and live:
            row.released_at = uow.now()
            row.release_reason = f"job {job.id} ended"
            changed.append(row)
        elif not live and (row.job_id == job.id or (row.job_id is None and not still_open)):
            _clear(uow, actor, row, how=how, reason=why, open_jobs=(job.id,))
            changed.append(row)
    uow.session.flush()
    return _views(uow, changed)


def _clear(
    uow: UnitOfWork,
    actor: Actor,
    row: Reservation,
    *,
    how: HoldClearance,
    reason: str,
    open_jobs: Sequence[str],
) -> None:
    row.released_at = uow.now()
    row.release_reason = f"recovery hold cleared ({how})"
    row.hold_cleared_by = actor.principal_id
    row.hold_clear_reason = reason
    record_event(
        uow,
        ResourceEvent.HOLD_CLEARED,
        About(row.project_id, row.resource_id),
        by=actor,
        payload={
            "reservation": row.id,
            "resource": row.resource_id,
            "task": row.task_id,
            "attempt": row.attempt_id,
            "how": how,
            "reason": reason,
            "jobs": list(open_jobs),
        },
    )


@raises(NotFound, PermissionDenied, ValidationFailed)
def record_capacity_observation(
    uow: UnitOfWork,
    actor: Actor,
    *,
    resource_id: str,
    available: int,
    total: int | None = None,
    source: str,
    observed_at: datetime | None = None,
    project_id: str | None = None,
) -> CapacityReading:
    """Store a dated reading of available units: evidence of a moment, not a promise."""
    require_full_credential(actor)
    available = bounded_int("available", available, 0, MAX_UNITS)
    if total is not None:
        total = bounded_int("total", total, 0, MAX_UNITS)
        if available > total:
            raise ValidationFailed("available", "must not exceed total")
    source = clean_label("source", source, 200)
    if observed_at is not None:
        observed_at = clean_moment("observedAt", observed_at)
    resource = uow.session.get(Resource, resource_id)
    if resource is None:
        raise NotFound("resource", resource_id)
    reporting_project = project_id or resource.project_id
    projects.ensure_project_exists(uow, reporting_project)
    if resource.scope not in SHARED_SCOPES and resource.project_id != reporting_project:
        # A project's own resource is reported in its own log only, as every id-taking
        # operation treats another project's ids: it does not exist here. Shared
        # resources (workstation, environment) may be reported from any project.
        raise NotFound(f"resource of project {reporting_project}", resource_id)
    uow.no_lock_needed("a dated reading, added beside the others: it decides nothing")
    now = uow.now()
    row = CapacityObservation(
        id=new_id("cap"),
        resource_id=resource.id,
        project_id=reporting_project,
        available=available,
        total=total,
        source=source,
        observed_at=observed_at or now,
        recorded_at=now,
        recorded_by=actor.principal_id,
    )
    uow.session.add(row)
    uow.session.flush()
    record_event(
        uow,
        ResourceEvent.CAPACITY_OBSERVED,
        About(reporting_project, resource.id),
        by=actor,
        payload={
            "available": available,
            "total": total,
            "source": source,
            "observedAt": row.observed_at.isoformat(),
        },
    )
    return capacity_reading(row)


# --- reading --------------------------------------------------------------------------


def get_resource(uow: UnitOfWork, resource_id: str) -> ResourceView:
    row = uow.session.get(Resource, resource_id)
    if row is None:
        raise NotFound("resource", resource_id)
    return _resource_view(row)


def get_reservation(uow: UnitOfWork, reservation_id: str) -> ReservationView:
    return _views(uow, _reservations(uow, [reservation_id]))[0]


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
    judged = _judged(uow, _active_reservations(uow, ids))
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
                resource=_resource_view(resource),
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
    return _views(uow, list(rows))


def task_holds(uow: UnitOfWork, task_id: str) -> list[ReservationView]:
    """The task's reservations in a recovery hold now (for the recovery packet)."""
    return [view for view in task_reservations(uow, task_id) if view.state == ReservationState.HELD]


# --- judging reservations -------------------------------------------------------------


def _attempt_live(uow: UnitOfWork, attempt_ids: Sequence[str]) -> dict[str, bool]:
    live: dict[str, bool] = {}
    for attempt_id in sorted(set(attempt_ids)):
        attempt = work.get_attempt(uow, attempt_id)
        live[attempt_id] = attempt.state == AttemptState.ACTIVE and not attempt.lease_expired
    return live


def _judged(
    uow: UnitOfWork, rows: Sequence[Reservation]
) -> list[tuple[Reservation, str, tuple[str, ...]]]:
    """Each reservation with its state at coordinator time, and the jobs that keep it."""
    active_attempts = [row.attempt_id for row in rows if row.released_at is None]
    live = _attempt_live(uow, active_attempts)
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


def _lock_resources(uow: UnitOfWork, resource_ids: Sequence[str]) -> dict[str, Resource]:
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


def _active_reservations(uow: UnitOfWork, resource_ids: Sequence[str]) -> list[Reservation]:
    if not resource_ids:
        return []
    return list(
        uow.session.scalars(
            select(Reservation)
            .where(Reservation.resource_id.in_(resource_ids), Reservation.released_at.is_(None))
            .order_by(Reservation.id)
        ).all()
    )


def _reservations(
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


def _views(uow: UnitOfWork, rows: Sequence[Reservation]) -> list[ReservationView]:
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
        for row, state, open_jobs in _judged(uow, rows)
    ]


def _resource_view(row: Resource) -> ResourceView:
    return resource_view(row, shared=row.scope in SHARED_SCOPES)


__all__ = [
    "AcquireRequest",
    "Acquisition",
    "CapacityReading",
    "JobReport",
    "ReservationView",
    "ResourceDefinition",
    "ResourceRequest",
    "ResourceStatus",
    "ResourceView",
    "acquire_resources",
    "clear_hold",
    "define_resource",
    "finish_job",
    "get_reservation",
    "get_resource",
    "observe_job",
    "project_resources",
    "record_capacity_observation",
    "register_job",
    "release_after_job",
    "release_resources",
    "require_reservations",
    "task_holds",
    "task_reservations",
]
