"""Claims: a named task, the next eligible one, or a recovery of an expired attempt.

A claim is one transaction (docs/design.md, "Tasks, attempts, leases and generations"):
the session row is locked (its claims are counted one at a time), then the task row
(next-eligible claimers skip each other's locked candidates on PostgreSQL), and only then
is the instant read; eligibility, the session's limit of live attempts and, for a review
task, the reviewer's independence are checked before the attempt is created, the
generation advanced and the lease set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from typing import cast

from sqlalchemy import Select, bindparam, func, select

from hub.errors import (
    Blocked,
    Conflict,
    DependencyNotMet,
    InvalidTransition,
    NotFound,
    PermissionDenied,
    ValidationFailed,
    raises,
)
from hub.events.service import record_event
from hub.idempotency import service as idempotency
from hub.identity import service as identity
from hub.identity.views import Actor
from hub.ids import new_id
from hub.projects import service as projects
from hub.projects.vocabulary import RecoveryMode
from hub.storage.base import table_of
from hub.storage.row_writes import insert_row, update_row
from hub.storage.unit_of_work import UnitOfWork
from hub.work._authority import view_of
from hub.work._independence import Reviewer, excluded_submissions, require_independent
from hub.work._lifecycle import end_attempt
from hub.work._reading import answered_task, ready_tasks, unfinished_original
from hub.work._recovery import recovery_packet
from hub.work._rows import COMPLETE, lock_task, require_attempt, require_task
from hub.work.errors import DuplicateOfUnfinished, NoEligibleTask, RecoveryRequired, TaskOwned
from hub.work.tables import Attempt, Task, TaskPrerequisite
from hub.work.views import ClaimResult, RecoveryClaim
from hub.work.vocabulary import AttemptKind, AttemptState, TaskKind, TaskState, WorkEvent


@dataclass(frozen=True)
class ClaimRequest:
    project_id: str
    task_id: str | None = None
    kinds: Sequence[str] = ()
    idempotency_key: str | None = None


@raises(
    NotFound, PermissionDenied, Conflict, InvalidTransition, DependencyNotMet,
    ValidationFailed, Blocked, *idempotency.KEYED,
)
def claim_task(uow: UnitOfWork, actor: Actor, cmd: ClaimRequest) -> ClaimResult:
    """Claim a named task, or the next eligible one in a project (optionally by kind)."""
    return idempotency.run_keyed(
        uow,
        actor,
        "claimTask",
        cmd.idempotency_key,
        idempotency.request_of(cmd),
        authorize=lambda: _claiming_session(uow, actor, "claimTask"),
        replay=lambda _, prior: _replayed_claim(uow, actor, prior["attempt_id"]),
        execute=lambda session: _claim(uow, actor, cmd, session),
        receipt=lambda claim: {"attempt_id": claim.attempt.id},
    ).value


def _claim(
    uow: UnitOfWork, actor: Actor, cmd: ClaimRequest, session: identity.SessionView
) -> ClaimResult:
    policy = projects.get_policy(uow, cmd.project_id)  # NotFound if there is no such project
    if cmd.task_id is not None:
        task = lock_task(uow, cmd.task_id)
        if task.project_id != cmd.project_id:
            raise ValidationFailed("taskId", f"task {task.id} belongs to another project")
        _check_claimable(uow, task, uow.now())
    else:
        found = uow.session.scalar(
            _next_eligible(tuple(sorted(set(cmd.kinds))), uow.dialect),
            {"project": cmd.project_id, "session": session.id},
        )
        if found is None:
            raise NoEligibleTask(cmd.project_id, sorted(set(cmd.kinds)))
        task = found
    now = uow.now()
    _check_session_limit(uow, session.id, policy.max_active_attempts_per_session, now)
    if task.kind == TaskKind.REVIEW and task.subject_submission_id is not None:
        require_independent(uow, task.subject_submission_id, Reviewer.agent(session.id))
    attempt = _start_attempt(uow, task, session, policy, now, kind=AttemptKind.FRESH, recovers=None)
    record_event(
        uow,
        WorkEvent.ATTEMPT_CLAIMED,
        task,
        by=actor,
        payload={"attempt": attempt.id, "generation": attempt.generation, "session": session.id},
    )
    return ClaimResult(answered_task(uow, task), view_of(uow, attempt, task), replay=False)


@raises(
    NotFound, PermissionDenied, Conflict, InvalidTransition, ValidationFailed, Blocked,
    *idempotency.KEYED,
)
def claim_recovery(
    uow: UnitOfWork, actor: Actor, *, task_id: str, idempotency_key: str | None = None
) -> RecoveryClaim:
    """Take over a task whose lease expired; the expired attempt stays as history."""

    def replay(_: identity.SessionView, prior: dict[str, str]) -> RecoveryClaim:
        claim = _replayed_claim(uow, actor, prior["attempt_id"])
        return RecoveryClaim(claim, recovery_packet(uow, claim.attempt.task_id))

    return idempotency.run_keyed(
        uow,
        actor,
        "claimRecovery",
        idempotency_key,
        {"task_id": task_id},
        authorize=lambda: _claiming_session(uow, actor, "claimRecovery"),
        replay=replay,
        execute=lambda session: _recover(uow, actor, task_id, session),
        receipt=lambda made: {"attempt_id": made.claim.attempt.id},
    ).value


def _recover(
    uow: UnitOfWork, actor: Actor, task_id: str, session: identity.SessionView
) -> RecoveryClaim:
    task = lock_task(uow, task_id)
    now = uow.now()
    current = uow.session.get(Attempt, task.current_attempt_id) if task.current_attempt_id else None
    if task.state != TaskState.IN_PROGRESS or current is None:
        raise InvalidTransition(f"task {task.id} is {task.state}, not a recovery candidate")
    if current.lease_valid_at(now):
        raise TaskOwned(task.id, current.id, current.expires_at)
    policy = projects.get_policy(uow, task.project_id)
    if (
        policy.recovery_mode == RecoveryMode.OPERATOR_RELEASE
        and task.recovery_released_generation != task.generation
    ):
        raise PermissionDenied(
            f"project {task.project_id} requires an operator to release task {task.id} "
            "before a recovery claim (releaseTask)"
        )
    _check_session_limit(uow, session.id, policy.max_active_attempts_per_session, now)
    end_attempt(
        current, AttemptState.SUPERSEDED, "lease ended; superseded by a recovery claim", now
    )
    uow.session.flush()  # free the one-active-attempt slot before the new attempt is inserted
    attempt = _start_attempt(
        uow, task, session, policy, now, kind=AttemptKind.RECOVERY, recovers=current.id
    )
    record_event(
        uow,
        WorkEvent.ATTEMPT_RECOVERY_CLAIMED,
        task,
        by=actor,
        payload={"attempt": attempt.id, "generation": attempt.generation, "expired": current.id},
    )
    claim = ClaimResult(answered_task(uow, task), view_of(uow, attempt, task), replay=False)
    return RecoveryClaim(claim, recovery_packet(uow, task.id))


def _claiming_session(uow: UnitOfWork, actor: Actor, operation: str) -> identity.SessionView:
    if actor.credential != "session":
        raise PermissionDenied(f"{operation} needs a session token (startSession)")
    return identity.lock_active_session(uow, actor)


def _replayed_claim(uow: UnitOfWork, actor: Actor, attempt_id: str) -> ClaimResult:
    """A replayed claim reports the attempt's *current* state, to its session only."""
    attempt = require_attempt(uow, attempt_id)
    if attempt.session_id != actor.session_id:
        raise PermissionDenied(f"attempt {attempt.id} was claimed by another session")
    task = require_task(uow, attempt.task_id)
    return ClaimResult(answered_task(uow, task), view_of(uow, attempt, task), replay=True)


def _check_claimable(uow: UnitOfWork, task: Task, now: datetime) -> None:
    if task.state == TaskState.IN_PROGRESS:
        current = require_attempt(uow, task.current_attempt_id or "")
        if not current.lease_valid_at(now):
            raise RecoveryRequired(task.id)
        raise TaskOwned(task.id, current.id, current.expires_at)
    if task.state in (TaskState.DONE, TaskState.CLOSED):
        raise InvalidTransition(f"task {task.id} is {task.state}")
    if task.state in (TaskState.AWAITING_REVIEW, TaskState.AWAITING_INTEGRATION):
        raise InvalidTransition(
            f"task {task.id} is {task.state}: its submission moves on through review "
            "and integration"
        )
    original = unfinished_original(uow, task.id)
    if original is not None:
        raise DuplicateOfUnfinished(task.id, *original)
    if task.blocked_count > 0:
        waiting = uow.session.scalars(
            select(Task.id)
            .join(TaskPrerequisite, TaskPrerequisite.prerequisite_id == Task.id)
            .where(TaskPrerequisite.task_id == task.id, ~COMPLETE)
            .order_by(Task.id)
        ).all()
        children = uow.session.scalars(
            select(Task.id)
            .where(
                Task.parent_id == task.id,
                Task.required.is_(True),
                ~COMPLETE,
            )
            .order_by(Task.id)
        ).all()
        raise DependencyNotMet(
            f"task {task.id} waits for " + ", ".join([*waiting, *(f"child {c}" for c in children)])
        )


@cache
def _next_eligible(kinds: tuple[str, ...], dialect: str) -> Select[Task]:
    """The next-eligible claim's statement, built once per kind filter (a handful)."""
    statement = (
        ready_tasks(bindparam("project"), kinds)
        .where(
            # Never offered a review it would be refused (`independence`).
            ~(
                (Task.kind == TaskKind.REVIEW)
                & func.coalesce(Task.subject_submission_id, "").in_(
                    excluded_submissions(bindparam("session"))
                )
            )
        )
        .limit(1)
        .execution_options(populate_existing=True)
    )
    if dialect == "postgresql":
        # Competing claimers skip each other's locked candidates instead of queueing.
        statement = statement.with_for_update(skip_locked=True)
    return statement


_ATTEMPTS = table_of(Attempt)
_LIVE_ATTEMPTS_OF_SESSION = select(_ATTEMPTS.c.id).where(
    _ATTEMPTS.c.session_id == bindparam("session"),
    _ATTEMPTS.c.state == AttemptState.ACTIVE,
    # The lease rule's SQL form, bound to the operation's instant.
    Attempt.lease_valid_at(cast(datetime, bindparam("now"))),
)


def _check_session_limit(uow: UnitOfWork, session_id: str, limit: int, now: datetime) -> None:
    uow.session.flush()  # a Core read: see this transaction's own changes
    held = uow.session.scalars(_LIVE_ATTEMPTS_OF_SESSION, {"session": session_id, "now": now}).all()
    if len(held) >= limit:
        raise Blocked(
            f"this session already holds {len(held)} active attempt(s); the project allows {limit}",
            blockers=list(held),
        )


def _start_attempt(
    uow: UnitOfWork,
    task: Task,
    session: identity.SessionView,
    policy: projects.PolicyView,
    now: datetime,
    *,
    kind: AttemptKind,
    recovers: str | None,
) -> Attempt:
    generation = task.generation + 1
    attempt = Attempt(
        id=new_id("att"),
        project_id=task.project_id,
        task_id=task.id,
        session_id=session.id,
        principal_id=session.principal_id,
        workstation=session.workstation,
        kind=kind,
        generation=generation,
        state=AttemptState.ACTIVE,
        lease_seconds=policy.lease_seconds,
        heartbeat_seconds=policy.heartbeat_seconds,
        expires_at=now + timedelta(seconds=policy.lease_seconds),
        criteria_revision=task.criteria_revision,
        recovers_attempt_id=recovers,
        started_at=now,
        last_progress_at=now,
    )
    insert_row(uow.session, attempt)
    # The state/current-attempt pair is written together (and a CHECK holds them so), and
    # with the new generation: one UPDATE of the (already locked) task row.
    update_row(
        uow.session,
        task,
        {
            "generation": generation,
            "state": TaskState.IN_PROGRESS,
            "current_attempt_id": attempt.id,
            "updated_at": now,
        },
    )
    return attempt
