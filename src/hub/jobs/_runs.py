"""Jobs: registered before launch, observed while they run, finished by their producer.

Producer status and observation freshness are separate: `status` is what the producer
last reported, freshness is how recently the coordinator heard anything (judged at
read time, `hub.jobs.views`). Nothing here collects environment values, credentials
or command output; an invocation is a description the client chose to give.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, func, select

from hub.errors import IdempotencyConflict, NotFound, ValidationFailed
from hub.events.service import record_event
from hub.idempotency import service as idempotency
from hub.identity.views import Actor
from hub.ids import new_id
from hub.inputs import (
    bounded_int,
    clean_choice,
    clean_label,
    clean_moment,
    clean_optional,
    clean_text,
)
from hub.jobs.errors import JobAlreadyTerminal, NotYourJob
from hub.jobs.tables import Job
from hub.jobs.views import JobResult, JobView, job_view
from hub.jobs.vocabulary import (
    OPEN_STATUSES,
    TERMINAL_STATUSES,
    JobEvent,
    ObservedStatus,
    ProducerStatus,
)
from hub.mapping import Shortlist
from hub.projects import service as projects
from hub.storage.row_writes import update_row
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work

# Heard from at least once per three heartbeats, unless the job declares otherwise.
FRESHNESS_HEARTBEATS = 3
MIN_FRESHNESS_SECONDS, MAX_FRESHNESS_SECONDS = 5, 24 * 3600


@dataclass(frozen=True)
class JobRegistration:
    attempt_id: str
    generation: int
    client_job_id: str
    producer: str
    runner_host: str
    checkout: str
    operation: str
    invocation: str
    snapshot: str | None = None
    expected_deadline: datetime | None = None
    freshness_seconds: int | None = None
    # Reservations the job depends on; checked with the registration (hub.resources).
    reservation_ids: Sequence[str] = ()
    idempotency_key: str | None = None


def register_job(uow: UnitOfWork, actor: Actor, cmd: JobRegistration) -> JobResult:
    """Record a job before it launches, owned by the caller's current attempt.

    The client's job id is the job's natural key: registering it again with the same
    data is a replay, with different data an `IdempotencyConflict`.
    """
    # The reservations a job depends on are a set: listed twice they are one request.
    request = idempotency.request_of(cmd, reservation_ids=list(dict.fromkeys(cmd.reservation_ids)))
    return idempotency.run_keyed(
        uow,
        actor,
        "registerJob",
        cmd.idempotency_key,
        request,
        # A replay needs the attempt's authority too: the job is registered under it.
        authorize=lambda: work.hold_attempt(
            uow, actor, attempt_id=cmd.attempt_id, generation=cmd.generation
        ),
        replay=lambda _, prior: JobResult(
            _view(uow, _require(uow, prior["job_id"]), uow.now()), replay=True
        ),
        execute=lambda held: _register(uow, actor, cmd, request, held),
        receipt=lambda made: {"job_id": made.job.id},
    ).value


def _register(
    uow: UnitOfWork,
    actor: Actor,
    cmd: JobRegistration,
    request: dict[str, Any],
    held: work.HeldAttempt,
) -> JobResult:
    fields = _clean_registration(cmd)
    now = uow.now()
    fingerprint = idempotency.fingerprint({**request, "generation": None})
    existing = uow.session.scalar(
        select(Job).where(
            Job.project_id == held.attempt.project_id,
            Job.client_job_id == fields["client_job_id"],
        )
    )
    if existing is not None:
        if existing.fingerprint != fingerprint or existing.attempt_id != cmd.attempt_id:
            raise IdempotencyConflict(
                f"job id {fields['client_job_id']!r} was registered before with different data"
            )
        return JobResult(_view(uow, existing, now), replay=True)
    deadline = cmd.expected_deadline
    if deadline is not None:
        deadline = clean_moment("expectedDeadline", deadline)
    if deadline is not None and deadline <= now:
        raise ValidationFailed("expectedDeadline", "must be in the future")
    freshness = cmd.freshness_seconds
    if freshness is None:
        freshness = held.attempt.heartbeat_seconds * FRESHNESS_HEARTBEATS
    freshness = bounded_int(
        "freshnessSeconds", freshness, MIN_FRESHNESS_SECONDS, MAX_FRESHNESS_SECONDS
    )
    row = Job(
        id=new_id("job"),
        project_id=held.attempt.project_id,
        task_id=held.attempt.task_id,
        attempt_id=held.attempt.id,
        fingerprint=fingerprint,
        expected_deadline=deadline,
        freshness_seconds=freshness,
        status=ProducerStatus.REGISTERED,
        observation_count=0,
        registered_at=now,
        registered_by=actor.principal_id,
        reservation_ids=request["reservation_ids"],
        **fields,
    )
    uow.session.add(row)
    uow.session.flush()
    record_event(
        uow,
        JobEvent.JOB_REGISTERED,
        row,
        by=actor,
        payload={
            "job": row.id,
            "task": row.task_id,
            "attempt": row.attempt_id,
            "clientJobId": row.client_job_id,
            "operation": row.operation,
            "status": row.status,
            "expectedDeadline": deadline.isoformat() if deadline else None,
        },
    )
    return JobResult(_view(uow, row, now))


def _clean_registration(cmd: JobRegistration) -> dict[str, str | None]:
    return {
        "client_job_id": clean_label("jobId", cmd.client_job_id, 200),
        "producer": clean_label("producer", cmd.producer, 200),
        "runner_host": clean_label("runnerHost", cmd.runner_host, 200),
        "checkout": clean_label("checkout", cmd.checkout, 1000),
        "snapshot": clean_optional("snapshot", cmd.snapshot, 200),
        "operation": clean_label("operation", cmd.operation, 200),
        "invocation": clean_text("invocation", cmd.invocation, 4000),
    }


def observe_job(
    uow: UnitOfWork,
    actor: Actor,
    *,
    job_id: str,
    status: str,
    observed_at: datetime | None = None,
    note: str | None = None,
) -> JobView:
    """Attach an observation: the producer is RUNNING, or its process has EXITED.

    Allowed after the attempt's lease has ended: an observer reconnecting to a job it
    was authorised for resumes observing (docs/design.md, "Jobs and evidence"), but
    observing never renews.
    """
    observed = clean_choice("status", status, ObservedStatus)
    note = clean_optional("note", note, 500)
    if observed_at is not None:
        observed_at = clean_moment("observedAt", observed_at)
    row = _lock_reportable(uow, actor, job_id)
    now = uow.now()
    if row.status in TERMINAL_STATUSES:
        raise JobAlreadyTerminal(row.id, row.status)
    observed_at = observed_at or now
    changed: dict[str, object] = {
        "status": ProducerStatus(observed),
        "status_note": note,
        "observed_at": observed_at,
        "last_heard_at": now,
        "observation_count": row.observation_count + 1,
    }
    if row.started_at is None:
        changed["started_at"] = now
    if observed == ObservedStatus.EXITED:
        changed["finished_at"] = now
    update_row(uow.session, row, changed)
    record_event(
        uow,
        JobEvent.JOB_EXITED if observed == ObservedStatus.EXITED else JobEvent.JOB_OBSERVED,
        row,
        by=actor,
        payload={
            "job": row.id,
            "status": row.status,
            "observedAt": observed_at.isoformat(),
            "credential": actor.credential,
        },
    )
    return _view(uow, row, now)


def finish_job(
    uow: UnitOfWork,
    actor: Actor,
    *,
    job_id: str,
    exit_status: int,
    finished_at: datetime | None = None,
    note: str | None = None,
) -> JobResult:
    """Record the producer's exit status: its own, never a wrapper's or a parsed banner.

    Sending the same result again is a replay; a different one is refused, because a
    terminal result is history other records (evidence, holds) already rely on.
    """
    exit_status = bounded_int("exitStatus", exit_status, -(2**31), 2**31 - 1)
    note = clean_optional("note", note, 500)
    if finished_at is not None:
        finished_at = clean_moment("finishedAt", finished_at)
    row = _lock_reportable(uow, actor, job_id)
    now = uow.now()
    if row.status == ProducerStatus.FINISHED:
        if row.exit_status == exit_status:
            return JobResult(_view(uow, row, now), replay=True)
        raise JobAlreadyTerminal(row.id, f"FINISHED with exit status {row.exit_status}")
    observed_at = finished_at or now
    update_row(
        uow.session,
        row,
        {
            "status": ProducerStatus.FINISHED,
            "exit_status": exit_status,
            "status_note": note,
            "last_heard_at": now,
            "observed_at": observed_at,
            "finished_at": row.finished_at or now,
        },
    )
    record_event(
        uow,
        JobEvent.JOB_FINISHED,
        row,
        by=actor,
        payload={
            "job": row.id,
            "status": row.status,
            "exitStatus": exit_status,
            "observedAt": observed_at.isoformat(),
            "credential": actor.credential,
        },
    )
    return JobResult(_view(uow, row, now))


# Prebuilt: every observation runs it.
_LOCK_JOB = (
    select(Job)
    .where(Job.id == bindparam("job_id"))
    .with_for_update()
    .execution_options(populate_existing=True)
)


def _lock_reportable(uow: UnitOfWork, actor: Actor, job_id: str) -> Job:
    """The job row, locked, if this actor may report on it (else `NotYourJob`)."""
    row = uow.session.scalar(_LOCK_JOB, {"job_id": job_id})
    if row is None:
        raise NotYourJob(job_id)
    if actor.is_reporter:
        # A reporter token reports only the jobs of the one attempt it was issued for.
        if actor.scope.get("attempt_id") != row.attempt_id:
            raise NotYourJob(job_id)
        return row
    if actor.session_id is None or actor.credential != "session":
        raise NotYourJob(job_id)
    if work.session_of_attempt(uow, row.attempt_id) != actor.session_id:
        raise NotYourJob(job_id)
    return row


# --- reading --------------------------------------------------------------------------


def get_job(uow: UnitOfWork, job_id: str) -> JobView:
    return _view(uow, _require(uow, job_id), uow.now())


def project_job(uow: UnitOfWork, project_id: str, job_id: str) -> JobView:
    """A job of this project: another project's job is not found here."""
    view = get_job(uow, job_id)
    if view.project_id != project_id:
        raise NotFound(f"job of project {project_id}", job_id)
    return view


def list_jobs(
    uow: UnitOfWork,
    *,
    project_id: str,
    task_id: str | None = None,
    open_only: bool = False,
    after: str | None = None,
    limit: int = 100,
) -> list[JobView]:
    """A project's (or one task's) jobs, newest registration last, in id order."""
    projects.ensure_project_exists(uow, project_id)
    statement = select(Job).where(Job.project_id == project_id)
    if task_id is not None:
        statement = statement.where(Job.task_id == task_id)
    if open_only:
        statement = statement.where(Job.status.not_in(TERMINAL_STATUSES))
    if after is not None:
        statement = statement.where(Job.id > after)
    rows = uow.session.scalars(statement.order_by(Job.id).limit(limit)).all()
    now = uow.now()
    return [_view(uow, row, now) for row in rows]


def jobs_past_deadline(uow: UnitOfWork, *, limit: int) -> Shortlist[JobView]:
    """Jobs still open after the deadline they declared, in every project, the most
    overdue first (`ix_jobs_open_deadline`). Past its deadline a job is only flagged:
    nothing fails, restarts or releases it (docs/design.md, "Jobs and evidence")."""
    now = uow.now()
    overdue = (
        select(Job)
        .where(Job.expected_deadline.is_not(None), Job.expected_deadline <= now)
        # As the partial index says it, so the index serves the query.
        .where(Job.status.in_(OPEN_STATUSES))
    )
    rows = uow.session.scalars(
        overdue.order_by(Job.expected_deadline, Job.id).limit(max(limit, 0))
    ).all()
    total = uow.session.scalar(select(func.count()).select_from(overdue.subquery())) or 0
    return Shortlist([_view(uow, row, now) for row in rows], total)


def attempts_with_open_jobs(uow: UnitOfWork) -> list[str]:
    """Every attempt, in any project, that launched a job still open
    (`ix_jobs_open_attempt_id`): the only attempts whose reservations can be held."""
    return list(
        uow.session.scalars(
            select(Job.attempt_id)
            .where(Job.status.in_(OPEN_STATUSES))
            .distinct()
            .order_by(Job.attempt_id)
        ).all()
    )


def jobs_for_task(uow: UnitOfWork, task_id: str) -> list[JobView]:
    rows = uow.session.scalars(select(Job).where(Job.task_id == task_id).order_by(Job.id)).all()
    now = uow.now()
    return [_view(uow, row, now) for row in rows]


def open_jobs_by_attempt(uow: UnitOfWork, attempt_ids: Sequence[str]) -> dict[str, list[str]]:
    """The non-terminal jobs each attempt launched: jobs that may still interfere."""
    found: dict[str, list[str]] = {attempt_id: [] for attempt_id in attempt_ids}
    if not attempt_ids:
        return found
    rows = uow.session.execute(
        select(Job.attempt_id, Job.id)
        .where(Job.attempt_id.in_(sorted(set(attempt_ids))))
        .where(Job.status.not_in(TERMINAL_STATUSES))
        .order_by(Job.id)
    ).all()
    for attempt_id, job_id in rows:
        found[attempt_id].append(job_id)
    return found


def _require(uow: UnitOfWork, job_id: str) -> Job:
    row = uow.session.get(Job, job_id)
    if row is None:
        raise NotFound("job", job_id)
    return row


def _view(uow: UnitOfWork, row: Job, now: datetime) -> JobView:
    return job_view(row, now, uow.settings.stale_progress_seconds)
