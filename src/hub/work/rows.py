"""Loading and locking the work module's rows."""

from __future__ import annotations

from sqlalchemy import select

from hub.errors import NotFound
from hub.storage.unit_of_work import UnitOfWork
from hub.work.tables import Attempt, Task


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
    row = uow.session.scalar(
        select(Task)
        .where(Task.id == task_id)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    if row is None:
        raise NotFound("task", task_id)
    return row


def require_attempt(uow: UnitOfWork, attempt_id: str) -> Attempt:
    row = uow.session.get(Attempt, attempt_id)
    if row is None:
        raise NotFound("attempt", attempt_id)
    return row


def reload_attempt(uow: UnitOfWork, attempt_id: str) -> Attempt:
    row = uow.session.get(Attempt, attempt_id, populate_existing=True)
    if row is None:
        raise NotFound("attempt", attempt_id)
    return row
