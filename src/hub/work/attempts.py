"""Attempts and leases: claims, recovery, and every ownership-dependent mutation.

Each ownership-dependent mutation goes through `_hold`, which locks the task row,
samples coordinator time *after* the lock, and checks together with the change:
the caller's session owns the attempt, the generation is current, the attempt is
not terminal, and `now < expires_at` (equality is expired).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from functools import cache
from typing import Any, cast

from sqlalchemy import Select, bindparam, func, select

from hub.errors import (
    Blocked,
    Conflict,
    DependencyNotMet,
    InvalidTransition,
    NotFound,
    PermissionDenied,
    StaleGeneration,
    ValidationFailed,
)
from hub.events.service import append_event
from hub.idempotency import service as idempotency
from hub.identity import service as identity
from hub.identity.actor import Actor
from hub.ids import new_id
from hub.inputs import clean_branch, clean_label, clean_list, clean_revision, clean_text
from hub.projects import service as projects
from hub.storage.base import table_of
from hub.storage.unit_of_work import UnitOfWork
from hub.work import workflow
from hub.work.errors import (
    AttemptLeaseExpired,
    AttemptSuperseded,
    DispositionRequired,
    NoEligibleTask,
    RecoveryRequired,
    TaskOwned,
)
from hub.work.lifecycle import (
    end_attempt,
    mark_done,
    release_worktrees,
    require_current_criteria,
)
from hub.work.rows import (
    lock_task,
    reload_attempt,
    require_attempt,
    require_task,
    session_of_attempt,
    task_id_of_attempt,
)
from hub.work.tables import (
    Attempt,
    AttemptNote,
    Checkpoint,
    Submission,
    Task,
    TaskPrerequisite,
    Worktree,
)
from hub.work.tasks import ready_tasks, task_view
from hub.work.views import (
    AttemptResult,
    AttemptView,
    ClaimResult,
    NoteView,
    RecoveryPacket,
    attempt_view,
    checkpoint_view,
    submission_view,
    worktree_view,
)

DISPOSITIONS = ("RESUME_SAVED_WORK", "RECONCILE_DELIVERED", "RESTART", "BLOCKED")
OUTCOMES = ("DELIVERED", "PARTIAL")
ADAPTER_EVENTS = ("TURN_ENDED", "COMPACTED", "DISCONNECTED", "RESUMED", "RELINQUISHED", "COMPLETED")
NON_CODE_KINDS = ("GENERAL", "OBJECTIVE")


@dataclass(frozen=True)
class ClaimRequest:
    project_id: str
    task_id: str | None = None
    kinds: Sequence[str] = ()
    idempotency_key: str | None = None


@dataclass(frozen=True)
class SubmitRequest:
    attempt_id: str
    generation: int
    outcome: str
    result: str
    handoff: str = ""
    candidate_revision: str | None = None
    referenced_lessons: Sequence[str] = ()
    new_lessons: Sequence[dict[str, Any]] = ()
    idempotency_key: str | None = None


@dataclass(frozen=True)
class WorktreeRequest:
    attempt_id: str
    generation: int
    repository_id: str
    worktree_id: str
    path: str
    branch: str
    base_revision: str
    workstation: str


@dataclass(frozen=True)
class AdapterEventResult:
    session: identity.SessionView
    attempts: tuple[AttemptView, ...]


# --- claims ---------------------------------------------------------------------------


def claim_task(uow: UnitOfWork, actor: Actor, cmd: ClaimRequest) -> ClaimResult:
    """Claim a named task, or the next eligible one in a project (optionally by kind)."""
    session = _claiming_session(uow, actor, "claimTask", cmd.idempotency_key)
    request = {**asdict(cmd), "kinds": list(cmd.kinds), "idempotency_key": None}
    prior = idempotency.recall(uow, actor, "claimTask", cmd.idempotency_key, request)
    if prior is not None:
        return _replayed_claim(uow, actor, prior["attempt_id"])
    policy = projects.get_policy(uow, cmd.project_id)  # NotFound if there is no such project
    if cmd.task_id is not None:
        task = lock_task(uow, cmd.task_id)
        if task.project_id != cmd.project_id:
            raise ValidationFailed("taskId", f"task {task.id} belongs to another project")
        now = uow.now()
        _check_claimable(uow, task, now)
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
    workflow.check_independent_reviewer(uow, task, session.id)
    attempt = _start_attempt(uow, task, session, policy, now, kind="FRESH", recovers=None)
    append_event(
        uow,
        project_id=task.project_id,
        kind="attempt.claimed",
        subject_id=task.id,
        actor_id=actor.principal_id,
        payload={"attempt": attempt.id, "generation": attempt.generation, "session": session.id},
    )
    idempotency.remember(
        uow, actor, "claimTask", cmd.idempotency_key, request, {"attempt_id": attempt.id}
    )
    return ClaimResult(task_view(uow, task), _attempt_view(uow, attempt, task, now), replay=False)


def claim_recovery(
    uow: UnitOfWork, actor: Actor, *, task_id: str, idempotency_key: str | None = None
) -> tuple[ClaimResult, RecoveryPacket]:
    """Take over a task whose lease expired; the expired attempt stays as history."""
    session = _claiming_session(uow, actor, "claimRecovery", idempotency_key)
    request = {"task_id": task_id}
    prior = idempotency.recall(uow, actor, "claimRecovery", idempotency_key, request)
    if prior is not None:
        claim = _replayed_claim(uow, actor, prior["attempt_id"])
        return claim, recovery_packet(uow, claim.task.id)
    task = lock_task(uow, task_id)
    now = uow.now()
    current = uow.session.get(Attempt, task.current_attempt_id) if task.current_attempt_id else None
    if task.state != "IN_PROGRESS" or current is None:
        raise InvalidTransition(f"task {task.id} is {task.state}, not a recovery candidate")
    if current.lease_valid_at(now):
        raise TaskOwned(task.id, current.id, current.expires_at)
    policy = projects.get_policy(uow, task.project_id)
    if (
        policy.recovery_mode == "OPERATOR_RELEASE"
        and task.recovery_released_generation != task.generation
    ):
        raise PermissionDenied(
            f"project {task.project_id} requires an operator to release task {task.id} "
            "before a recovery claim (releaseTask)"
        )
    _check_session_limit(uow, session.id, policy.max_active_attempts_per_session, now)
    end_attempt(current, "SUPERSEDED", "lease ended; superseded by a recovery claim", now)
    uow.session.flush()  # free the one-active-attempt slot before the new attempt is inserted
    attempt = _start_attempt(uow, task, session, policy, now, kind="RECOVERY", recovers=current.id)
    append_event(
        uow,
        project_id=task.project_id,
        kind="attempt.recovery_claimed",
        subject_id=task.id,
        actor_id=actor.principal_id,
        payload={"attempt": attempt.id, "generation": attempt.generation, "expired": current.id},
    )
    idempotency.remember(
        uow, actor, "claimRecovery", idempotency_key, request, {"attempt_id": attempt.id}
    )
    claim = ClaimResult(task_view(uow, task), _attempt_view(uow, attempt, task, now), replay=False)
    return claim, recovery_packet(uow, task.id)


def release_task(uow: UnitOfWork, actor: Actor, *, task_id: str, reason: str) -> Task:
    """An operator releases an expired task for recovery (recovery mode OPERATOR_RELEASE)."""
    if not actor.is_operator or actor.is_reporter:
        raise PermissionDenied("only an operator releases a task for recovery")
    reason = clean_text("reason", reason, 2000)
    task = lock_task(uow, task_id)
    now = uow.now()
    current = uow.session.get(Attempt, task.current_attempt_id) if task.current_attempt_id else None
    if current is None or task.state != "IN_PROGRESS":
        raise InvalidTransition(f"task {task.id} is {task.state}, nothing to release")
    if current.lease_valid_at(now):
        raise InvalidTransition(
            f"attempt {current.id} still holds a valid lease until {current.expires_at.isoformat()}"
        )
    task.recovery_released_generation = task.generation
    append_event(
        uow,
        project_id=task.project_id,
        kind="task.released_for_recovery",
        subject_id=task.id,
        actor_id=actor.principal_id,
        payload={"reason": reason, "generation": task.generation},
    )
    return task


def revoke_attempt(uow: UnitOfWork, actor: Actor, *, attempt_id: str, reason: str) -> Task:
    """An operator ends a live lease now: the attempt's generation is fenced (every later
    change by it is refused as stale) and the task becomes a recovery candidate, released
    for a recovery claim even where the project requires an operator's release."""
    if not actor.is_operator or actor.is_reporter:
        raise PermissionDenied("only an operator revokes an attempt's lease")
    reason = clean_text("reason", reason, 2000)
    task = lock_task(uow, task_id_of_attempt(uow, attempt_id))
    now = uow.now()
    attempt = reload_attempt(uow, attempt_id)
    if attempt.state != "ACTIVE" or task.current_attempt_id != attempt.id:
        raise InvalidTransition(f"attempt {attempt.id} is {attempt.state}, not the live attempt")
    if not attempt.lease_valid_at(now):
        raise InvalidTransition(
            f"the lease of attempt {attempt.id} already ended at "
            f"{attempt.expires_at.isoformat()}: the task is a recovery candidate"
        )
    attempt.expires_at = now
    attempt.revoked_at = now
    attempt.revoked_by = actor.principal_id
    attempt.revoke_reason = reason
    # A new generation fences the revoked attempt even if its clock or ours were wrong.
    task.generation += 1
    task.recovery_released_generation = task.generation
    task.updated_at = now
    uow.session.flush()
    append_event(
        uow,
        project_id=task.project_id,
        kind="attempt.revoked",
        subject_id=task.id,
        actor_id=actor.principal_id,
        payload={"attempt": attempt.id, "generation": task.generation, "reason": reason},
    )
    return task


def _claiming_session(
    uow: UnitOfWork, actor: Actor, operation: str, key: str | None
) -> identity.SessionView:
    if actor.credential != "session":
        raise PermissionDenied(f"{operation} needs a session token (startSession)")
    idempotency.require_key(actor, key, operation)
    return identity.lock_active_session(uow, actor)


def _replayed_claim(uow: UnitOfWork, actor: Actor, attempt_id: str) -> ClaimResult:
    """A replayed claim reports the attempt's *current* state, after re-checking authority."""
    attempt = require_attempt(uow, attempt_id)
    if attempt.session_id != actor.session_id:
        raise PermissionDenied(f"attempt {attempt.id} was claimed by another session")
    task = require_task(uow, attempt.task_id)
    view = _attempt_view(uow, attempt, task, uow.now())
    return ClaimResult(task_view(uow, task), view, replay=True)


def _check_claimable(uow: UnitOfWork, task: Task, now: datetime) -> None:
    if task.state == "IN_PROGRESS":
        current = require_attempt(uow, task.current_attempt_id or "")
        if not current.lease_valid_at(now):
            raise RecoveryRequired(task.id)
        raise TaskOwned(task.id, current.id, current.expires_at)
    if task.state in ("DONE", "CLOSED"):
        raise InvalidTransition(f"task {task.id} is {task.state}")
    if task.state in ("AWAITING_REVIEW", "AWAITING_INTEGRATION"):
        raise InvalidTransition(
            f"task {task.id} is {task.state}: its submission moves on through review "
            "and integration"
        )
    if task.blocked_count > 0:
        waiting = uow.session.scalars(
            select(Task.id)
            .join(TaskPrerequisite, TaskPrerequisite.prerequisite_id == Task.id)
            .where(TaskPrerequisite.task_id == task.id, Task.state != "DONE")
            .order_by(Task.id)
        ).all()
        children = uow.session.scalars(
            select(Task.id)
            .where(
                Task.parent_id == task.id,
                Task.required.is_(True),
                Task.state != "DONE",
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
            ~(
                (Task.kind == "REVIEW")
                & func.coalesce(Task.subject_submission_id, "").in_(
                    workflow.not_reviewable_by(bindparam("session"))
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
    _ATTEMPTS.c.state == "ACTIVE",
    # The lease rule's SQL form, bound to the coordinator time sampled by the caller.
    Attempt.lease_valid_at(cast(datetime, bindparam("now"))),
)


def _check_session_limit(uow: UnitOfWork, session_id: str, limit: int, now: datetime) -> None:
    uow.session.flush()  # a Core read: see this transaction's own changes
    held = uow.session.scalars(
        _LIVE_ATTEMPTS_OF_SESSION, {"session": session_id, "now": now}
    ).all()
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
    kind: str,
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
        state="ACTIVE",
        lease_seconds=policy.lease_seconds,
        heartbeat_seconds=policy.heartbeat_seconds,
        expires_at=now + timedelta(seconds=policy.lease_seconds),
        criteria_revision=task.criteria_revision,
        recovers_attempt_id=recovers,
        started_at=now,
        last_progress_at=now,
    )
    uow.session.add(attempt)
    uow.session.flush()
    # The state/current-attempt pair is written together (and a CHECK holds them so), and
    # with the new generation: one UPDATE of the (already locked) task row.
    task.generation = generation
    task.state = "IN_PROGRESS"
    task.current_attempt_id = attempt.id
    task.updated_at = now
    uow.session.flush()
    return attempt


# --- holding an attempt -----------------------------------------------------------------


@dataclass
class _Held:
    task: Task
    attempt: Attempt
    now: datetime


def _find(uow: UnitOfWork, actor: Actor, attempt_id: str, *, reporter_ok: bool) -> _Held:
    """Lock the attempt's task, sample time after the lock, and check who is asking."""
    task = lock_task(uow, task_id_of_attempt(uow, attempt_id))
    now = uow.now()
    attempt = reload_attempt(uow, attempt_id)
    if actor.is_reporter:
        if not reporter_ok or actor.scope.get("attempt_id") != attempt.id:
            raise PermissionDenied(
                "a reporter token can only renew its own attempt and report that attempt's jobs"
            )
    elif actor.session_id is None:
        raise PermissionDenied("ownership-dependent changes need the session token that claimed")
    elif actor.session_id != attempt.session_id:
        raise PermissionDenied(f"attempt {attempt.id} belongs to another session")
    return _Held(task, attempt, now)


def _check_authority(held: _Held, generation: int, *, needs_disposition: bool = True) -> None:
    task, attempt, now = held.task, held.attempt, held.now
    if generation != attempt.generation:
        raise StaleGeneration(
            f"attempt {attempt.id} is generation {attempt.generation}, not {generation}"
        )
    if task.generation != attempt.generation:
        raise AttemptSuperseded(attempt.id, attempt.generation, task.generation)
    if attempt.state != "ACTIVE" or task.current_attempt_id != attempt.id:
        raise InvalidTransition(
            f"attempt {attempt.id} is {attempt.state}: a terminal attempt takes no changes "
            "(addRecoveryNote is the one exception)"
        )
    if not attempt.lease_valid_at(now):
        raise AttemptLeaseExpired(attempt.id, attempt.expires_at.isoformat())
    if needs_disposition and attempt.kind == "RECOVERY" and attempt.disposition is None:
        raise DispositionRequired(attempt.id)


def _hold(
    uow: UnitOfWork,
    actor: Actor,
    attempt_id: str,
    generation: int,
    *,
    reporter_ok: bool = False,
    needs_disposition: bool = True,
) -> _Held:
    held = _find(uow, actor, attempt_id, reporter_ok=reporter_ok)
    _check_authority(held, generation, needs_disposition=needs_disposition)
    return held


def hold_attempt(
    uow: UnitOfWork,
    actor: Actor,
    *,
    attempt_id: str,
    generation: int,
    reporter_ok: bool = False,
) -> AttemptResult:
    """For other modules' ownership-dependent operations (jobs, reviews, integration):
    lock the attempt's task and check, at coordinator time sampled after the lock, that
    the caller holds the current, live attempt. Raises the same typed problems."""
    held = _hold(uow, actor, attempt_id, generation, reporter_ok=reporter_ok)
    return _result(uow, held)


def require_own_attempt(uow: UnitOfWork, actor: Actor, attempt_id: str) -> AttemptView:
    """The attempt, if the caller's session is the one that ran it (live or ended): who
    may receive the replay of a keyed change made under it."""
    if actor.session_id is None or session_of_attempt(uow, attempt_id) != actor.session_id:
        raise PermissionDenied(f"attempt {attempt_id} belongs to another session")
    return get_attempt(uow, attempt_id)


def own_live_attempt(uow: UnitOfWork, actor: Actor, task_id: str) -> AttemptView | None:
    """The caller's session's live, current attempt on the task, if it holds one."""
    task = require_task(uow, task_id)
    if task.current_attempt_id is None or actor.session_id is None:
        return None
    attempt = get_attempt(uow, task.current_attempt_id)
    if attempt.session_id != actor.session_id or not attempt.holds_authority:
        return None
    return attempt


def _result(uow: UnitOfWork, held: _Held, **extra: Any) -> AttemptResult:
    return AttemptResult(
        task=task_view(uow, held.task),
        attempt=_attempt_view(uow, held.attempt, held.task, held.now),
        **extra,
    )


# --- ownership-dependent mutations ----------------------------------------------------


def renew_lease(
    uow: UnitOfWork,
    actor: Actor,
    *,
    attempt_id: str,
    generation: int,
    idempotency_key: str | None = None,
) -> AttemptResult:
    """Extend the lease to now + lease. Never resurrects an expired attempt, and a retry
    under the same key reports the lease without extending it a second time."""
    idempotency.require_key(actor, idempotency_key, "renewLease")
    held = _find(uow, actor, attempt_id, reporter_ok=True)
    request = {"attempt_id": attempt_id, "generation": generation}
    if idempotency.recall(uow, actor, "renewLease", idempotency_key, request) is not None:
        return _result(uow, held, replay=True)
    _check_authority(held, generation, needs_disposition=False)
    expires_at = held.now + timedelta(seconds=held.attempt.lease_seconds)
    window_end = actor.scope.get("window_ends_at") if actor.is_reporter else None
    if window_end is not None:
        # A reporter renews within its watch window, never past it (docs/design.md,
        # "Health, progress and recovery").
        expires_at = min(expires_at, datetime.fromisoformat(window_end))
    held.attempt.expires_at = max(expires_at, held.attempt.expires_at)
    if actor.credential == "session":
        # The agent itself heartbeating is progress; a reporter renewing on its behalf
        # proves only that the helper is alive, so it never hides stale progress.
        held.attempt.last_progress_at = held.now
    uow.session.flush()
    append_event(
        uow,
        project_id=held.task.project_id,
        kind="lease.renewed",
        subject_id=held.task.id,
        actor_id=actor.principal_id,
        payload={"attempt": attempt_id, "expiresAt": held.attempt.expires_at.isoformat()},
    )
    idempotency.remember(
        uow, actor, "renewLease", idempotency_key, request, {"attempt_id": attempt_id}
    )
    return _result(uow, held)


def register_worktree(uow: UnitOfWork, actor: Actor, cmd: WorktreeRequest) -> AttemptResult:
    """Record the implementation attempt's worktree before code changes."""
    held = _hold(uow, actor, cmd.attempt_id, cmd.generation)
    task = held.task
    if task.kind != "IMPLEMENTATION":
        raise InvalidTransition(
            f"only implementation tasks have worktrees; {task.id} is {task.kind}"
        )
    repository = projects.get_repository(
        uow, project_id=task.project_id, repository_id=cmd.repository_id
    )
    identity_key = clean_label("worktreeId", cmd.worktree_id, 300)
    path = clean_label("path", cmd.path, 1000)
    branch = clean_branch("branch", cmd.branch)
    base = clean_revision("baseRevision", cmd.base_revision)
    workstation = clean_label("workstation", cmd.workstation, 200)
    in_use = uow.session.scalar(
        select(Worktree).where(Worktree.identity == identity_key, Worktree.released_at.is_(None))
    )
    if in_use is not None and in_use.task_id != task.id:
        raise Conflict(
            f"worktree {identity_key!r} is registered to task {in_use.task_id}, which is not "
            "finished: use a separate worktree per implementation task"
        )
    row = in_use or Worktree(id=new_id("wt"), project_id=task.project_id, task_id=task.id)
    row.attempt_id = held.attempt.id
    row.repository_id = repository.id
    row.identity = identity_key
    row.path = path
    row.branch = branch
    row.base_revision = base
    row.workstation = workstation
    row.registered_at = held.now
    uow.session.add(row)
    uow.session.flush()
    append_event(
        uow,
        project_id=task.project_id,
        kind="worktree.registered",
        subject_id=task.id,
        actor_id=actor.principal_id,
        payload={"attempt": held.attempt.id, "worktree": identity_key, "branch": branch},
    )
    return _result(uow, held, worktree=worktree_view(row))


def record_checkpoint(
    uow: UnitOfWork,
    actor: Actor,
    *,
    attempt_id: str,
    generation: int,
    summary: str,
    revision: str | None = None,
    branch: str | None = None,
    published: bool = False,
    idempotency_key: str | None = None,
) -> AttemptResult:
    held = _find(uow, actor, attempt_id, reporter_ok=False)
    request = {
        "attempt_id": attempt_id,
        "generation": generation,
        "summary": summary,
        "revision": revision,
        "branch": branch,
        "published": published,
    }
    prior = idempotency.recall(uow, actor, "recordCheckpoint", idempotency_key, request)
    if prior is not None:
        checkpoint = uow.session.get(Checkpoint, prior["checkpoint_id"])
        return _result(
            uow, held, replay=True, checkpoint=checkpoint_view(checkpoint) if checkpoint else None
        )
    _check_authority(held, generation)
    summary = clean_text("summary", summary, 10_000)
    clean_rev = clean_revision("revision", revision) if revision else None
    if published and clean_rev is None:
        raise ValidationFailed("revision", "a published checkpoint names its revision")
    row = Checkpoint(
        id=new_id("chk"),
        project_id=held.task.project_id,
        task_id=held.task.id,
        attempt_id=held.attempt.id,
        summary=summary,
        revision=clean_rev,
        branch=clean_branch("branch", branch) if branch else None,
        published=published,
        created_at=held.now,
    )
    uow.session.add(row)
    held.attempt.last_progress_at = held.now
    uow.session.flush()
    append_event(
        uow,
        project_id=held.task.project_id,
        kind="checkpoint.recorded",
        subject_id=held.task.id,
        actor_id=actor.principal_id,
        payload={"attempt": attempt_id, "checkpoint": row.id, "published": published},
    )
    idempotency.remember(
        uow, actor, "recordCheckpoint", idempotency_key, request, {"checkpoint_id": row.id}
    )
    return _result(uow, held, checkpoint=checkpoint_view(row))


def relinquish_attempt(
    uow: UnitOfWork,
    actor: Actor,
    *,
    attempt_id: str,
    generation: int,
    reason: str,
    idempotency_key: str | None = None,
) -> AttemptResult:
    """Give the task back; the attempt and its checkpoints stay as history. A retry under
    the same key acknowledges the original without touching the task again."""
    idempotency.require_key(actor, idempotency_key, "relinquishAttempt")
    held = _find(uow, actor, attempt_id, reporter_ok=False)
    request = {"attempt_id": attempt_id, "generation": generation, "reason": reason}
    if idempotency.recall(uow, actor, "relinquishAttempt", idempotency_key, request) is not None:
        return _result(uow, held, replay=True)
    _check_authority(held, generation, needs_disposition=False)
    _give_back(uow, actor, held, clean_text("reason", reason, 2000))
    idempotency.remember(
        uow, actor, "relinquishAttempt", idempotency_key, request, {"attempt_id": attempt_id}
    )
    return _result(uow, held)


def _give_back(uow: UnitOfWork, actor: Actor, held: _Held, reason: str) -> None:
    next_state = _state_on_return(uow, held.task)
    _end_attempt(uow, held, "RELINQUISHED", reason)
    held.task.state = next_state
    append_event(
        uow,
        project_id=held.task.project_id,
        kind="attempt.relinquished",
        subject_id=held.task.id,
        actor_id=actor.principal_id,
        payload={"attempt": held.attempt.id, "reason": reason},
    )


def submit_attempt(uow: UnitOfWork, actor: Actor, cmd: SubmitRequest) -> AttemptResult:
    """Save result, handoff, lessons, outcome and the task's transition in one transaction.

    An implementation submission moves the task to review or integration (per the
    policy pinned now); it never marks code done. A non-code task completes here when
    acceptance was recorded against its current criteria.
    """
    idempotency.require_key(actor, cmd.idempotency_key, "submitAttempt")
    held = _find(uow, actor, cmd.attempt_id, reporter_ok=False)
    request = {
        **asdict(cmd),
        "referenced_lessons": list(cmd.referenced_lessons),
        "new_lessons": list(cmd.new_lessons),
        "idempotency_key": None,
    }
    prior = idempotency.recall(uow, actor, "submitAttempt", cmd.idempotency_key, request)
    if prior is not None:
        # Acknowledge the original; reopen nothing, move nothing.
        original = uow.session.get(Submission, prior["submission_id"])
        return _result(
            uow, held, replay=True, submission=submission_view(original) if original else None
        )
    _check_authority(held, cmd.generation)
    task, attempt = held.task, held.attempt
    if cmd.outcome not in OUTCOMES:
        raise ValidationFailed("outcome", f"must be one of {', '.join(OUTCOMES)}")
    result = clean_text("result", cmd.result, 50_000)
    handoff = clean_text("handoff", cmd.handoff, 50_000, required=cmd.outcome == "PARTIAL")
    referenced = clean_list(
        "referencedLessons", cmd.referenced_lessons, max_items=50, max_length=60
    )
    new_lessons = _clean_new_lessons(cmd.new_lessons)
    candidate = (
        clean_revision("candidateRevision", cmd.candidate_revision)
        if cmd.candidate_revision
        else None
    )
    policy = projects.get_policy(uow, task.project_id)
    next_state = _state_after_submission(
        uow, task, attempt, cmd.outcome, candidate, policy.review_policy
    )
    submission = Submission(
        id=new_id("sub"),
        project_id=task.project_id,
        task_id=task.id,
        attempt_id=attempt.id,
        session_id=attempt.session_id,
        principal_id=attempt.principal_id,
        generation=attempt.generation,
        outcome=cmd.outcome,
        result=result,
        handoff=handoff,
        candidate_revision=candidate,
        criteria_revision=attempt.criteria_revision,
        policy_revision=policy.revision,
        referenced_lessons=referenced,
        new_lessons=new_lessons,
        created_at=held.now,
    )
    uow.session.add(submission)
    uow.session.flush()
    _end_attempt(uow, held, "SUBMITTED", f"submitted {cmd.outcome}")
    task.state = next_state  # with the attempt ended, in the same flush (CHECK current_attempt)
    if task.kind == "IMPLEMENTATION" and cmd.outcome == "DELIVERED":
        # A new candidate: reviews and integrations of earlier ones no longer apply.
        workflow.close_superseded(uow, task.id, submission.id)
        next_state = task.state = workflow.open_after_submission(uow, task, submission, policy)
    if next_state == "DONE":
        mark_done(uow, task, actor_id=actor.principal_id, reason=f"submission {submission.id}")
    uow.session.flush()
    append_event(
        uow,
        project_id=task.project_id,
        kind="attempt.submitted",
        subject_id=task.id,
        actor_id=actor.principal_id,
        payload={
            "attempt": attempt.id,
            "submission": submission.id,
            "outcome": cmd.outcome,
            "state": next_state,
        },
    )
    idempotency.remember(
        uow, actor, "submitAttempt", cmd.idempotency_key, request, {"submission_id": submission.id}
    )
    return _result(uow, held, submission=submission_view(submission))


def _state_after_submission(
    uow: UnitOfWork,
    task: Task,
    attempt: Attempt,
    outcome: str,
    candidate: str | None,
    review_policy: str,
) -> str:
    if outcome == "PARTIAL":
        return "REVISION_NEEDED" if _has_delivery(uow, task.id) else "OPEN"
    # A delivery is judged against the criteria it was made for; changed criteria are
    # reconciled explicitly first, whatever the task's kind.
    require_current_criteria(attempt.criteria_revision, task)
    if task.kind == "IMPLEMENTATION":
        if candidate is None:
            raise ValidationFailed(
                "candidateRevision", "an implementation delivery names its commit"
            )
        worktree = uow.session.scalar(
            select(Worktree.id).where(Worktree.task_id == task.id, Worktree.released_at.is_(None))
        )
        if worktree is None:
            raise InvalidTransition(
                f"task {task.id} has no registered worktree: "
                "registerWorktree before delivering code"
            )
        return "AWAITING_INTEGRATION" if review_policy == "NONE" else "AWAITING_REVIEW"
    if task.kind in NON_CODE_KINDS:
        acceptance = attempt.acceptance or {}
        if acceptance.get("criteria_revision") != task.criteria_revision:
            raise InvalidTransition(
                f"record acceptance against criteria revision {task.criteria_revision} "
                "(recordAcceptance) before delivering a non-code task"
            )
        if task.blocked_count > 0:
            raise DependencyNotMet(f"task {task.id} still has incomplete required work")
        return "DONE"
    raise InvalidTransition(
        f"a {task.kind} task completes through its workflow (review or integration), "
        "not by submitAttempt DELIVERED"
    )


def _has_delivery(uow: UnitOfWork, task_id: str) -> bool:
    found = uow.session.scalar(
        select(func.count())
        .select_from(Submission)
        .where(Submission.task_id == task_id, Submission.outcome == "DELIVERED")
    )
    return bool(found)


def _clean_new_lessons(lessons: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    if len(lessons) > 20:
        raise ValidationFailed("newLessons", "must have at most 20 items")
    cleaned: list[dict[str, Any]] = []
    for index, lesson in enumerate(lessons):
        field = f"newLessons[{index}]"
        cleaned.append(
            {
                "statement": clean_text(
                    f"{field}.statement", str(lesson.get("statement", "")), 500
                ),
                "explanation": clean_text(
                    f"{field}.explanation",
                    str(lesson.get("explanation", "")),
                    10_000,
                    required=False,
                ),
                "tags": clean_list(
                    f"{field}.tags", list(lesson.get("tags") or []), max_items=20, max_length=60
                ),
            }
        )
    return cleaned


def record_acceptance(
    uow: UnitOfWork,
    actor: Actor,
    *,
    attempt_id: str,
    generation: int,
    criteria_revision: int,
    evidence: Sequence[str],
    note: str = "",
) -> AttemptResult:
    """The owner records that a non-code task meets its current criteria, with evidence."""
    held = _hold(uow, actor, attempt_id, generation)
    task, attempt = held.task, held.attempt
    if task.kind not in NON_CODE_KINDS:
        raise InvalidTransition(
            f"a {task.kind} task completes through review, integration and validation"
        )
    require_current_criteria(attempt.criteria_revision, task)
    if criteria_revision != task.criteria_revision:
        raise Conflict(
            f"criteria are at revision {task.criteria_revision}, not {criteria_revision}"
        )
    if task.blocked_count > 0:
        raise DependencyNotMet(f"task {task.id} has incomplete required children or prerequisites")
    attempt.acceptance = {
        "criteria_revision": criteria_revision,
        "evidence": clean_list("evidence", evidence, max_items=50, max_length=2000),
        "note": clean_text("note", note, 10_000, required=False),
        "recorded_at": held.now.isoformat(),
    }
    attempt.last_progress_at = held.now
    uow.session.flush()
    append_event(
        uow,
        project_id=task.project_id,
        kind="acceptance.recorded",
        subject_id=task.id,
        actor_id=actor.principal_id,
        payload={"attempt": attempt.id, "criteriaRevision": criteria_revision},
    )
    return _result(uow, held)


def reconcile_criteria(
    uow: UnitOfWork,
    actor: Actor,
    *,
    attempt_id: str,
    generation: int,
    criteria_revision: int,
    note: str,
) -> AttemptResult:
    """Explicitly move an attempt onto the task's current criteria revision."""
    held = _hold(uow, actor, attempt_id, generation)
    task, attempt = held.task, held.attempt
    if criteria_revision != task.criteria_revision:
        raise Conflict(
            f"criteria are at revision {task.criteria_revision}, not {criteria_revision}"
        )
    note = clean_text("note", note, 10_000)
    previous = attempt.criteria_revision
    attempt.criteria_revision = criteria_revision
    if attempt.acceptance and attempt.acceptance.get("criteria_revision") != criteria_revision:
        attempt.acceptance = None  # acceptance against old criteria no longer applies
    uow.session.add(
        AttemptNote(
            id=new_id("note"),
            project_id=task.project_id,
            attempt_id=attempt.id,
            kind="CRITERIA_RECONCILED",
            body=note,
            detail={"from": previous, "to": criteria_revision},
            author_id=actor.principal_id,
            created_at=held.now,
        )
    )
    uow.session.flush()
    append_event(
        uow,
        project_id=task.project_id,
        kind="criteria.reconciled",
        subject_id=task.id,
        actor_id=actor.principal_id,
        payload={"attempt": attempt.id, "from": previous, "to": criteria_revision},
    )
    return _result(uow, held)


def record_recovery_disposition(
    uow: UnitOfWork,
    actor: Actor,
    *,
    attempt_id: str,
    generation: int,
    disposition: str,
    reason: str = "",
) -> AttemptResult:
    held = _hold(uow, actor, attempt_id, generation, needs_disposition=False)
    attempt = held.attempt
    if attempt.kind != "RECOVERY":
        raise InvalidTransition(f"attempt {attempt.id} is not a recovery attempt")
    if disposition not in DISPOSITIONS:
        raise ValidationFailed("disposition", f"must be one of {', '.join(DISPOSITIONS)}")
    if attempt.disposition not in (None, "BLOCKED"):
        raise InvalidTransition(
            f"attempt {attempt.id} already recorded disposition {attempt.disposition}"
        )
    attempt.disposition = disposition
    attempt.disposition_reason = clean_text(
        "reason", reason, 10_000, required=disposition in ("RESTART", "BLOCKED")
    )
    attempt.last_progress_at = held.now
    uow.session.flush()
    if disposition == "RESTART":
        # Starting over leaves the saved worktree behind: it is free for other work, and
        # this attempt registers the worktree it restarts in.
        release_worktrees(
            uow, held.task, reason=f"recovery restart: {attempt.disposition_reason}",
            actor_id=actor.principal_id,
        )
    append_event(
        uow,
        project_id=held.task.project_id,
        kind="recovery.disposition",
        subject_id=held.task.id,
        actor_id=actor.principal_id,
        payload={"attempt": attempt.id, "disposition": disposition},
    )
    return _result(uow, held)


def add_recovery_note(uow: UnitOfWork, actor: Actor, *, attempt_id: str, note: str) -> NoteView:
    """A late agent's note on its own finished attempt. It completes nothing, extends no
    lease and unblocks nothing: it is history for whoever recovers the task."""
    attempt = require_attempt(uow, attempt_id)
    if (
        actor.is_reporter
        or attempt.principal_id != actor.principal_id
        or (actor.session_id is not None and actor.session_id != attempt.session_id)
    ):
        raise PermissionDenied(f"only the session that ran attempt {attempt.id} may add its note")
    now = uow.now()
    if attempt.state == "ACTIVE" and attempt.lease_valid_at(now):
        raise InvalidTransition(
            f"attempt {attempt.id} still holds its lease: record a checkpoint instead"
        )
    row = AttemptNote(
        id=new_id("note"),
        project_id=attempt.project_id,
        attempt_id=attempt.id,
        kind="RECOVERY_NOTE",
        body=clean_text("note", note, 10_000),
        detail={},
        author_id=actor.principal_id,
        created_at=now,
    )
    uow.session.add(row)
    uow.session.flush()
    append_event(
        uow,
        project_id=attempt.project_id,
        kind="attempt.recovery_note",
        subject_id=attempt.task_id,
        actor_id=actor.principal_id,
        payload={"attempt": attempt.id, "note": row.id},
    )
    return _note_view(row)


def record_adapter_event(
    uow: UnitOfWork,
    actor: Actor,
    *,
    session_id: str,
    event: str,
    attempt_id: str | None = None,
    generation: int | None = None,
    detail: str = "",
) -> AdapterEventResult:
    """What the harness saw happen. A resume reconciles the session's existing attempts
    and never claims; a relinquish gives the named attempt back."""
    if event not in ADAPTER_EVENTS:
        raise ValidationFailed("event", f"must be one of {', '.join(ADAPTER_EVENTS)}")
    if actor.is_reporter:
        raise PermissionDenied("a reporter token cannot record adapter events")
    if event == "RELINQUISHED":
        if attempt_id is None or generation is None:
            raise ValidationFailed("attemptId", "RELINQUISHED names the attempt and its generation")
        held = _find(uow, actor, attempt_id, reporter_ok=False)
        # A harness hook may fire twice: an attempt this session already gave back is
        # acknowledged, not refused.
        if held.attempt.state != "RELINQUISHED":
            _check_authority(held, generation, needs_disposition=False)
            reason = clean_text("detail", detail, 2000, required=False)
            _give_back(uow, actor, held, reason or "relinquished by the harness")
    session = identity.record_session_adapter_event(uow, actor, session_id=session_id, event=event)
    if attempt_id is not None and event != "RELINQUISHED":
        attempt = require_attempt(uow, attempt_id)
        if attempt.session_id != session.id:
            raise PermissionDenied(f"attempt {attempt_id} belongs to another session")
        uow.session.add(
            AttemptNote(
                id=new_id("note"),
                project_id=attempt.project_id,
                attempt_id=attempt.id,
                kind="ADAPTER_EVENT",
                body=clean_text("detail", detail, 2000, required=False),
                detail={"event": event},
                author_id=actor.principal_id,
                created_at=uow.now(),
            )
        )
    return AdapterEventResult(session=session, attempts=tuple(session_attempts(uow, session.id)))


def session_attempts(uow: UnitOfWork, session_id: str) -> list[AttemptView]:
    """The session's attempts that are still current, with their lease state now."""
    now = uow.now()
    rows = uow.session.scalars(
        select(Attempt)
        .where(Attempt.session_id == session_id, Attempt.state == "ACTIVE")
        .order_by(Attempt.id)
    ).all()
    return [_attempt_view(uow, row, require_task(uow, row.task_id), now) for row in rows]


def _end_attempt(uow: UnitOfWork, held: _Held, state: str, reason: str) -> None:
    end_attempt(held.attempt, state, reason, held.now)
    uow.session.flush()  # the attempt is no longer the active one before the task moves
    held.task.current_attempt_id = None
    held.task.updated_at = held.now


def _state_on_return(uow: UnitOfWork, task: Task) -> str:
    """Where a task goes when its attempt gives it back (read before the attempt ends:
    state and current attempt must change in the same flush)."""
    return "REVISION_NEEDED" if _has_delivery(uow, task.id) else "OPEN"


# --- reading --------------------------------------------------------------------------


def get_attempt(uow: UnitOfWork, attempt_id: str) -> AttemptView:
    attempt = require_attempt(uow, attempt_id)
    return _attempt_view(uow, attempt, require_task(uow, attempt.task_id), uow.now())


def get_attempts(uow: UnitOfWork, attempt_ids: Sequence[str]) -> list[AttemptView]:
    """Many attempts, in the order asked, in two statements whatever their number (the
    API reads each listed task's current attempt this way)."""
    wanted = select(Attempt).where(Attempt.id.in_(sorted(set(attempt_ids))))
    rows = {row.id: row for row in uow.session.scalars(wanted)}
    for attempt_id in attempt_ids:
        if attempt_id not in rows:
            raise NotFound("attempt", attempt_id)
    of_tasks = select(Task).where(Task.id.in_(sorted({row.task_id for row in rows.values()})))
    tasks = {row.id: row for row in uow.session.scalars(of_tasks)}
    now = uow.now()
    return [_attempt_view(uow, rows[i], tasks[rows[i].task_id], now) for i in attempt_ids]


def recovery_packet(uow: UnitOfWork, task_id: str) -> RecoveryPacket:
    """What a recovering agent needs to decide: what was delivered, what is saved where."""
    task = require_task(uow, task_id)
    now = uow.now()
    attempts = uow.session.scalars(
        select(Attempt).where(Attempt.task_id == task.id).order_by(Attempt.generation)
    ).all()
    checkpoints = uow.session.scalars(
        select(Checkpoint).where(Checkpoint.task_id == task.id).order_by(Checkpoint.id)
    ).all()
    submissions = uow.session.scalars(
        select(Submission).where(Submission.task_id == task.id).order_by(Submission.id)
    ).all()
    worktrees = uow.session.scalars(
        select(Worktree).where(Worktree.task_id == task.id).order_by(Worktree.id)
    ).all()
    notes = (
        uow.session.scalars(
            select(AttemptNote)
            .where(AttemptNote.attempt_id.in_([a.id for a in attempts]))
            .order_by(AttemptNote.id)
        ).all()
        if attempts
        else []
    )
    published = [c.revision for c in checkpoints if c.published and c.revision]
    published += [s.candidate_revision for s in submissions if s.candidate_revision]
    return RecoveryPacket(
        task=task_view(uow, task),
        attempts=tuple(_attempt_view(uow, a, task, now) for a in attempts),
        checkpoints=tuple(checkpoint_view(c) for c in checkpoints),
        submissions=tuple(submission_view(s) for s in submissions),
        worktrees=tuple(worktree_view(w) for w in worktrees),
        published_revisions=tuple(dict.fromkeys(published)),
        notes=tuple(_note_view(n) for n in notes),
    )


def _attempt_view(uow: UnitOfWork, row: Attempt, task: Task, now: datetime) -> AttemptView:
    return attempt_view(
        row, task, now, stale_progress_seconds=uow.settings.stale_progress_seconds
    )


def _note_view(row: AttemptNote) -> NoteView:
    return NoteView(
        id=row.id,
        attempt_id=row.attempt_id,
        kind=row.kind,
        body=row.body,
        author_id=row.author_id,
        created_at=row.created_at,
    )
