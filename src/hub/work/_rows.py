"""Loading and locking the work module's rows.

The statements are built once: every ownership-dependent mutation runs them, and
building a statement costs more than executing it.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, and_, bindparam, func, or_, select

from hub.errors import NotFound
from hub.storage.base import table_of
from hub.storage.unit_of_work import UnitOfWork
from hub.work.tables import Attempt, Submission, Task
from hub.work.vocabulary import CANDIDATE_OUTCOMES, CloseReason, TaskState

# Complete: what a dependent or a parent waited for happened. DONE in hub, or closed as
# COMPLETED (done outside hub); any other closure still keeps them waiting.
COMPLETE: ColumnElement[bool] = or_(
    Task.state == TaskState.DONE,
    and_(Task.state == TaskState.CLOSED, Task.close_reason == CloseReason.COMPLETED),
)


def is_complete(task: Task) -> bool:
    """`COMPLETE`, of a row at hand."""
    return task.state == TaskState.DONE or (
        task.state == TaskState.CLOSED and task.close_reason == CloseReason.COMPLETED
    )

_LOCK_TASK = (
    select(Task)
    .where(Task.id == bindparam("task_id"))
    .with_for_update()
    .execution_options(populate_existing=True)
)
# What `lock_held` runs. SQLite: `BEGIN IMMEDIATE` already holds the database, so the
# attempt and its task come in one statement. PostgreSQL: the task found through the
# attempt is locked, then the attempt is read in a new statement. One statement with
# `FOR UPDATE OF tasks` would not do: after waiting for the lock, PostgreSQL re-reads
# only the locked row, and the attempt would be as it was before the wait (a renewal
# that held the task meanwhile changed the attempt, not the task).
_ATTEMPT_AND_TASK = (
    select(Attempt, Task)
    .join(Task, Task.id == Attempt.task_id)
    .where(Attempt.id == bindparam("attempt_id"))
    .execution_options(populate_existing=True)
)
_RELOAD_ATTEMPT = (
    select(Attempt)
    .where(Attempt.id == bindparam("attempt_id"))
    .execution_options(populate_existing=True)
)
_ATTEMPTS = table_of(Attempt)
_TASK_OF_ATTEMPT = select(_ATTEMPTS.c.task_id).where(_ATTEMPTS.c.id == bindparam("attempt_id"))
_LOCK_TASK_OF_ATTEMPT = (
    select(Task)
    .where(Task.id == _TASK_OF_ATTEMPT.scalar_subquery())
    .with_for_update()
    .execution_options(populate_existing=True)
)
_SESSION_OF_ATTEMPT = select(_ATTEMPTS.c.session_id).where(
    _ATTEMPTS.c.id == bindparam("attempt_id")
)


def require_task(uow: UnitOfWork, task_id: str) -> Task:
    row = uow.session.get(Task, task_id)
    if row is None:
        raise NotFound("task", task_id)
    return row


def lock_task(uow: UnitOfWork, task_id: str) -> Task:
    """The task row, locked for this transaction and re-read after the lock.

    On PostgreSQL this is `SELECT … FOR UPDATE`; on SQLite the whole database is
    already locked by `BEGIN IMMEDIATE`. Ownership state lives on the task row, so
    every ownership decision about a task is made while holding this lock.
    """
    row = uow.session.scalar(_LOCK_TASK, {"task_id": task_id})
    if row is None:
        raise NotFound("task", task_id)
    return row


def lock_held(uow: UnitOfWork, attempt_id: str) -> tuple[Task, Attempt]:
    """An attempt and its task, the task row locked for this transaction, both read
    after the lock (`lock_task`)."""
    if uow.dialect == "sqlite":
        found = uow.session.execute(_ATTEMPT_AND_TASK, {"attempt_id": attempt_id}).first()
        if found is None:
            raise NotFound("attempt", attempt_id)
        return found[1], found[0]
    task = uow.session.scalar(_LOCK_TASK_OF_ATTEMPT, {"attempt_id": attempt_id})
    if task is None:  # an attempt always has its task: there is no such attempt
        raise NotFound("attempt", attempt_id)
    return task, reload_attempt(uow, attempt_id)


def session_of_attempt(uow: UnitOfWork, attempt_id: str) -> str:
    """The session that owns (or owned) an attempt: who may report on what it launched."""
    session_id = uow.session.scalar(_SESSION_OF_ATTEMPT, {"attempt_id": attempt_id})
    if session_id is None:
        raise NotFound("attempt", attempt_id)
    return str(session_id)


def require_attempt(uow: UnitOfWork, attempt_id: str) -> Attempt:
    row = uow.session.get(Attempt, attempt_id)
    if row is None:
        raise NotFound("attempt", attempt_id)
    return row


def reload_attempt(uow: UnitOfWork, attempt_id: str) -> Attempt:
    row = uow.session.scalar(_RELOAD_ATTEMPT, {"attempt_id": attempt_id})
    if row is None:
        raise NotFound("attempt", attempt_id)
    return row


def has_delivery(uow: UnitOfWork, task_id: str) -> bool:
    """Whether the task was ever delivered (or found already satisfied): returned work
    goes back to revision, not to open work."""
    found = uow.session.scalar(
        select(func.count())
        .select_from(Submission)
        .where(Submission.task_id == task_id, Submission.outcome.in_(CANDIDATE_OUTCOMES))
    )
    return bool(found)
