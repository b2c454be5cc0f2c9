"""Where tasks and attempts leave active work: the one way to end an attempt, the one way
a task becomes done, and releasing what active work held.

Every path that reaches DONE (a non-code acceptance, a validated integration, a
recorded review or integration decision) goes through `mark_done`, so every one of
them unblocks dependents, counts toward the parent and releases worktrees. Every
path that ends an attempt goes through `end_attempt`, so an ended attempt's lease
ends with it (its `expires_at` is never later than its end): a replayed claim of a
relinquished attempt cannot look alive. See docs/workflow.md.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, select

from hub.events.service import record_event
from hub.storage.row_writes import update_row
from hub.storage.unit_of_work import UnitOfWork
from hub.work import _dependencies as dependencies
from hub.work.errors import CriteriaChanged
from hub.work.tables import Attempt, Task, Worktree
from hub.work.vocabulary import AttemptState, TaskState, WorkEvent

_HELD_WORKTREES = (
    select(Worktree)
    .where(Worktree.task_id == bindparam("task_id"), Worktree.released_at.is_(None))
    .order_by(Worktree.id)
)


def end_attempt(attempt: Attempt, state: AttemptState, reason: str, now: datetime) -> None:
    """End an attempt: terminal state, end time, reason, and its lease ends now."""
    for name, value in attempt_ended(attempt, state, reason, now).items():
        setattr(attempt, name, value)


def attempt_ended(
    attempt: Attempt, state: AttemptState, reason: str, now: datetime
) -> dict[str, Any]:
    """What ending the attempt changes (`end_attempt`), for a caller that writes it
    itself (`hub.storage.row_writes`)."""
    return {
        "state": state,
        "ended_at": now,
        "end_reason": reason,
        "expires_at": min(attempt.expires_at, now),
    }


def release_worktrees(uow: UnitOfWork, task: Task, *, reason: str, actor_id: str | None) -> None:
    """A task that leaves active work (done, closed, restarted) frees its worktrees for
    other tasks; each release is an event."""
    now = uow.now()
    for worktree in uow.session.scalars(_HELD_WORKTREES, {"task_id": task.id}).all():
        worktree.released_at = now
        record_event(
            uow,
            WorkEvent.WORKTREE_RELEASED,
            task,
            by=actor_id,
            payload={"worktree": worktree.identity, "reason": reason},
        )
    uow.session.flush()


def mark_done(uow: UnitOfWork, task: Task, *, actor_id: str | None, reason: str) -> None:
    """The task's required outcome is complete: the only way any task becomes DONE.

    The caller holds the task row lock and has already ended its attempt (state and
    current attempt change together: the CHECK on tasks holds them so).
    """
    update_row(
        uow.session,
        task,
        {"state": TaskState.DONE, "current_attempt_id": None, "updated_at": uow.now()},
    )
    release_worktrees(uow, task, reason="task done", actor_id=actor_id)
    dependencies.on_task_completed(uow, task)
    record_event(
        uow, WorkEvent.TASK_DONE, task, by=actor_id, payload={"kind": task.kind, "reason": reason}
    )


def require_current_criteria(used: int, task: Task) -> None:
    """Completion is judged against the criteria revision the work was done for: if the
    criteria changed since, an explicit reconciliation comes first (`reconcileCriteria`
    while the attempt is live). Every path to completion calls this."""
    if used != task.criteria_revision:
        raise CriteriaChanged(used, task.criteria_revision)
