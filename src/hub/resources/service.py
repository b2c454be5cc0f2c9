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

from collections.abc import Iterator, Sequence
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
from hub.inputs import bounded_int, clean_choice, clean_label, clean_text
from hub.jobs import service as jobs
from hub.jobs.vocabulary import ProducerStatus
from hub.projects import service as projects
from hub.resources import tables
from hub.resources._capacity import (
    record_capacity_observation as record_capacity_observation,
)
from hub.resources._reservations import (
    active_reservations,
    attempts_live,
    judge,
    lock_resources,
    reservation_views,
    reservations_by_id,
    shown_resource,
)
from hub.resources._reservations import (
    count_holds as count_holds,
)
from hub.resources._reservations import (
    get_reservation as get_reservation,
)
from hub.resources._reservations import (
    get_resource as get_resource,
)
from hub.resources._reservations import (
    holds as holds,
)
from hub.resources._reservations import (
    project_resources as project_resources,
)
from hub.resources._reservations import (
    task_holds as task_holds,
)
from hub.resources._reservations import (
    task_reservations as task_reservations,
)
from hub.resources.errors import (
    NotHeld,
    ReservationsNotHeld,
    ResourceDefinedDifferently,
    ResourcesBusy,
)
from hub.resources.tables import (
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
)
from hub.resources.vocabulary import (
    MAX_UNITS,
    SHARED_SCOPES,
    HoldClearance,
    ReservationState,
    ResourceEvent,
    ResourceMode,
    ResourceScope,
)
from hub.storage.export import ExportRecord, export_tables, project_tables
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work

MAX_REQUESTS = 50


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
        return shown_resource(existing), False
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
    return shown_resource(row), True


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
            tuple(reservation_views(uow, reservations_by_id(uow, prior["reservation_ids"]))),
            replay=True,
        ),
        execute=lambda held: _acquire(uow, actor, cmd, held),
        receipt=lambda made: {"reservation_ids": [view.id for view in made.reservations]},
    ).value


def _acquire(
    uow: UnitOfWork, actor: Actor, cmd: AcquireRequest, held: work.HeldAttempt
) -> Acquisition:
    wanted = _clean_requests(cmd.requests)
    attempt = held.attempt
    if cmd.job_id is not None:
        job = jobs.get_job(uow, cmd.job_id)
        if job.attempt_id != attempt.id:
            raise ValidationFailed("jobId", f"job {job.id} was not launched by this attempt")
        if job.terminal:
            raise ValidationFailed("jobId", f"job {job.id} is {job.status}")
    resources = lock_resources(uow, sorted(wanted))
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
    active = judge(uow, active_reservations(uow, list(wanted)))
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
    return Acquisition(tuple(reservation_views(uow, rows)))


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
    rows = reservations_by_id(uow, list(dict.fromkeys(reservation_ids)), lock=True)
    for row in rows:
        if row.project_id != project_id:
            raise NotFound("reservation", row.id)
    blockers: list[str] = []
    reasons: list[str] = []
    for row, state, _ in judge(uow, rows):
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
    return reservation_views(uow, rows)


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
    rows = reservations_by_id(uow, reservation_ids, lock=True)
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
    return reservation_views(uow, rows)


@raises(NotFound, PermissionDenied, InvalidTransition, ValidationFailed)
def clear_hold(
    uow: UnitOfWork, actor: Actor, *, reservation_id: str, reason: str
) -> ReservationView:
    """An operator ends a recovery hold, saying why: the third way a hold is cleared
    (docs/design.md, "Resources and recovery holds")."""
    reason = clean_text("reason", reason, 2000)
    if not actor.is_operator or actor.is_reporter:
        raise PermissionDenied("only an operator clears a recovery hold")
    [row] = reservations_by_id(uow, [reservation_id], lock=True)
    [(_, state, open_jobs)] = judge(uow, [row])
    if state != ReservationState.HELD:
        raise NotHeld(row.id, state)
    _clear(uow, actor, row, how=HoldClearance.OPERATOR, reason=reason, open_jobs=open_jobs)
    return reservation_views(uow, [row])[0]


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
    live = attempts_live(uow, [job.attempt_id])[job.attempt_id]
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
    return reservation_views(uow, changed)


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






























def export_rows(uow: UnitOfWork, project_id: str) -> Iterator[ExportRecord]:
    """The project's resources, reservations and capacity observations, for an export
    (docs/exports.md)."""
    return export_tables(uow, project_id, project_tables(tables))


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
    "count_holds",
    "define_resource",
    "export_rows",
    "finish_job",
    "get_reservation",
    "get_resource",
    "holds",
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
