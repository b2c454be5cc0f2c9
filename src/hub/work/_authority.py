"""Who holds an attempt: finding and locking it, and checking its authority.

Every ownership-dependent mutation, here and in other modules (`hold_attempt`), locks
the attempt's task row, then reads the operation's instant, and checks together with
the change: the caller's session owns the attempt, the generation is current, the
attempt is not terminal, and its lease is valid (`Attempt.lease_valid_at`: `now <
expires_at`, equality is expired). See docs/design.md, "Tasks, attempts, leases and
generations".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from sqlalchemy import select

from hub.errors import InvalidTransition, LeaseExpired, NotFound, PermissionDenied, StaleGeneration
from hub.identity.views import Actor
from hub.storage.row_writes import update_row
from hub.storage.unit_of_work import UnitOfWork
from hub.work._lifecycle import attempt_ended
from hub.work._reading import answered_task, task_view
from hub.work._rows import (
    lock_held,
    require_attempt,
    require_task,
    session_of_attempt,
)
from hub.work.errors import AttemptLeaseExpired, AttemptSuperseded, DispositionRequired
from hub.work.tables import Attempt, Task
from hub.work.views import AttemptResult, AttemptView, HeldAttempt, attempt_view
from hub.work.vocabulary import AttemptKind, AttemptState


@dataclass
class Held:
    """An attempt and its task, the task row locked, at the operation's instant."""

    task: Task
    attempt: Attempt
    now: datetime

# What acting with an attempt's authority can raise (`hold`, `hold_attempt`): no such
# attempt, not the caller's, superseded, ended, lease expired. For the declarations of
# the operations that act with it (`hub.errors.raises`).
HOLDING: Final = (NotFound, PermissionDenied, StaleGeneration, LeaseExpired, InvalidTransition)


def find_attempt(uow: UnitOfWork, actor: Actor, attempt_id: str, *, reporter_ok: bool) -> Held:
    """Lock the attempt's task, read the instant after the lock, and check who is asking:
    the session that claimed the attempt (or, where `reporter_ok`, its reporter)."""
    task, attempt = lock_held(uow, attempt_id)
    now = uow.now()
    if actor.is_reporter:
        if not reporter_ok or actor.scope.get("attempt_id") != attempt.id:
            raise PermissionDenied(
                "a reporter token can only renew its own attempt and report that attempt's jobs"
            )
    elif actor.session_id is None:
        raise PermissionDenied("ownership-dependent changes need the session token that claimed")
    elif actor.session_id != attempt.session_id:
        raise PermissionDenied(f"attempt {attempt.id} belongs to another session")
    return Held(task, attempt, now)


def check_authority(held: Held, generation: int, *, needs_disposition: bool = True) -> None:
    """The held attempt may change things: current generation, live, lease valid, and
    (a recovery attempt) its disposition recorded."""
    task, attempt, now = held.task, held.attempt, held.now
    if generation != attempt.generation:
        raise StaleGeneration(
            f"attempt {attempt.id} is generation {attempt.generation}, not {generation}"
        )
    if task.generation != attempt.generation:
        raise AttemptSuperseded(attempt.id, attempt.generation, task.generation)
    if attempt.state != AttemptState.ACTIVE or task.current_attempt_id != attempt.id:
        raise InvalidTransition(
            f"attempt {attempt.id} is {attempt.state}: a terminal attempt takes no changes "
            "(addRecoveryNote is the one exception)"
        )
    if not attempt.lease_valid_at(now):
        raise AttemptLeaseExpired(attempt.id, attempt.expires_at.isoformat())
    if needs_disposition and attempt.kind == AttemptKind.RECOVERY and attempt.disposition is None:
        raise DispositionRequired(attempt.id)


def hold(
    uow: UnitOfWork,
    actor: Actor,
    attempt_id: str,
    generation: int,
    *,
    reporter_ok: bool = False,
    needs_disposition: bool = True,
) -> Held:
    held = find_attempt(uow, actor, attempt_id, reporter_ok=reporter_ok)
    check_authority(held, generation, needs_disposition=needs_disposition)
    return held


def hold_attempt(
    uow: UnitOfWork,
    actor: Actor,
    *,
    attempt_id: str,
    generation: int,
    reporter_ok: bool = False,
) -> HeldAttempt:
    """For other modules' ownership-dependent operations (jobs, reviews, integration):
    lock the attempt's task and check, at the instant read after the lock, that the
    caller holds the current, live attempt. Raises the same typed problems."""
    held = hold(uow, actor, attempt_id, generation, reporter_ok=reporter_ok)
    return HeldAttempt(task_view(uow, held.task), view_of(uow, held.attempt, held.task))


def require_own_attempt(uow: UnitOfWork, actor: Actor, attempt_id: str) -> None:
    """Refuse unless the caller's session is the one that ran the attempt (live or ended):
    who may receive the replay of a keyed change made under it."""
    if actor.session_id is None or session_of_attempt(uow, attempt_id) != actor.session_id:
        raise PermissionDenied(f"attempt {attempt_id} belongs to another session")


def own_live_attempt(uow: UnitOfWork, actor: Actor, task_id: str) -> AttemptView | None:
    """The caller's session's live, current attempt on the task, if it holds one."""
    task = require_task(uow, task_id)
    if task.current_attempt_id is None or actor.session_id is None:
        return None
    attempt = get_attempt(uow, task.current_attempt_id)
    if attempt.session_id != actor.session_id or not attempt.holds_authority:
        return None
    return attempt


def end_held_attempt(uow: UnitOfWork, held: Held, state: AttemptState, reason: str) -> None:
    """End the held attempt; the task keeps no current attempt (the caller sets its next
    state in the same flush: the CHECK on tasks holds state and current attempt together)."""
    # Written now: the attempt is no longer the active one before the task moves.
    update_row(uow.session, held.attempt, attempt_ended(held.attempt, state, reason, held.now))
    held.task.current_attempt_id = None
    held.task.updated_at = held.now


def attempt_result(uow: UnitOfWork, held: Held, **extra: Any) -> AttemptResult:
    return AttemptResult(
        task=answered_task(uow, held.task), attempt=view_of(uow, held.attempt, held.task), **extra
    )


def get_attempt(uow: UnitOfWork, attempt_id: str) -> AttemptView:
    attempt = require_attempt(uow, attempt_id)
    return view_of(uow, attempt, require_task(uow, attempt.task_id))


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
    return [view_of(uow, rows[i], tasks[rows[i].task_id]) for i in attempt_ids]


def view_of(uow: UnitOfWork, row: Attempt, task: Task) -> AttemptView:
    """The attempt as its holders see it, at the operation's instant."""
    return attempt_view(
        row, task, uow.now(), stale_progress_seconds=uow.settings.stale_progress_seconds
    )
