"""The work module's invariants, checked against its rows (`hub maintenance check`;
docs/ops/maintenance.md). The operations keep them; a breach means a row was changed
outside them (by hand, a restore gone wrong, a bug). Each is one statement: read as of
one instant on both databases (`hub.storage.invariants`). Beside them, what `hub
maintenance stats` reads of attempts: the oldest still ACTIVE."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import FromClause, Select, and_, func, or_, select
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.util import ClauseAdapter

from hub.storage.base import table_of
from hub.storage.invariants import Breach
from hub.storage.unit_of_work import UnitOfWork
from hub.work._rows import COMPLETE
from hub.work.tables import Attempt, Task, TaskPrerequisite
from hub.work.vocabulary import AttemptState, TaskState, WorkInvariant

_TASKS = table_of(Task)
_ATTEMPTS = table_of(Attempt)
_EDGES = table_of(TaskPrerequisite)


def _incomplete(task: FromClause) -> ColumnElement[bool]:
    """Not `_rows.COMPLETE` (the one statement of what a dependent waits for), of
    `task`, an alias of the tasks table."""
    return ~ClauseAdapter(task).traverse(COMPLETE)


def _two_current_attempts(uow: UnitOfWork) -> list[Breach]:
    rows = uow.session.execute(
        select(_ATTEMPTS.c.task_id, func.count().label("active"))
        .where(_ATTEMPTS.c.state == AttemptState.ACTIVE)
        .group_by(_ATTEMPTS.c.task_id)
        .having(func.count() > 1)
        .order_by(_ATTEMPTS.c.task_id)
    ).all()
    return [
        Breach(
            WorkInvariant.ONE_CURRENT_ATTEMPT,
            f"task {row.task_id}",
            f"{row.active} ACTIVE attempts (at most one)",
        )
        for row in rows
    ]


def _current_attempt(uow: UnitOfWork) -> list[Breach]:
    current = _ATTEMPTS.alias("current")
    in_progress = _TASKS.c.state == TaskState.IN_PROGRESS
    names_one = _TASKS.c.current_attempt_id.is_not(None)
    rows = uow.session.execute(
        select(
            _TASKS.c.id,
            _TASKS.c.state,
            _TASKS.c.current_attempt_id,
            current.c.id.label("found"),
            current.c.task_id.label("found_task"),
            current.c.state.label("found_state"),
        )
        .select_from(_TASKS.outerjoin(current, current.c.id == _TASKS.c.current_attempt_id))
        .where(
            or_(
                in_progress != names_one,
                and_(
                    names_one,
                    or_(
                        current.c.id.is_(None),
                        current.c.task_id != _TASKS.c.id,
                        current.c.state != AttemptState.ACTIVE,
                    ),
                ),
            )
        )
        .order_by(_TASKS.c.id)
    ).all()
    breaches = []
    for row in rows:
        if (row.state == TaskState.IN_PROGRESS) != (row.current_attempt_id is not None):
            detail = (
                f"state {row.state} with current attempt {row.current_attempt_id}"
                if row.current_attempt_id
                else f"state {row.state} without a current attempt"
            )
        elif row.found is None:
            detail = f"its current attempt {row.current_attempt_id} does not exist"
        elif row.found_task != row.id:
            detail = f"its current attempt {row.found} is task {row.found_task}'s"
        else:
            detail = f"its current attempt {row.found} is {row.found_state}, not ACTIVE"
        breaches.append(Breach(WorkInvariant.CURRENT_ATTEMPT, f"task {row.id}", detail))
    return breaches


def _active_attempt_is_current(uow: UnitOfWork) -> list[Breach]:
    rows = uow.session.execute(
        select(_ATTEMPTS.c.id, _ATTEMPTS.c.task_id, _TASKS.c.current_attempt_id)
        .select_from(_ATTEMPTS.join(_TASKS, _TASKS.c.id == _ATTEMPTS.c.task_id))
        .where(
            _ATTEMPTS.c.state == AttemptState.ACTIVE,
            or_(
                _TASKS.c.current_attempt_id.is_(None),
                _TASKS.c.current_attempt_id != _ATTEMPTS.c.id,
            ),
        )
        .order_by(_ATTEMPTS.c.id)
    ).all()
    return [
        Breach(
            WorkInvariant.ACTIVE_ATTEMPT_IS_CURRENT,
            f"attempt {row.id}",
            f"ACTIVE, but task {row.task_id}'s current attempt is "
            f"{row.current_attempt_id or 'none'}",
        )
        for row in rows
    ]


def _generation(uow: UnitOfWork) -> list[Breach]:
    rows = uow.session.execute(
        select(_ATTEMPTS.c.id, _ATTEMPTS.c.generation, _TASKS.c.id.label("task"),
               _TASKS.c.generation.label("task_generation"))
        .select_from(_ATTEMPTS.join(_TASKS, _TASKS.c.id == _ATTEMPTS.c.task_id))
        .where(_ATTEMPTS.c.generation > _TASKS.c.generation)
        .order_by(_ATTEMPTS.c.id)
    ).all()
    return [
        Breach(
            WorkInvariant.GENERATION,
            f"attempt {row.id}",
            f"generation {row.generation}, past task {row.task}'s {row.task_generation}",
        )
        for row in rows
    ]


def _blocked_count(uow: UnitOfWork) -> list[Breach]:
    prerequisite = _TASKS.alias("prerequisite")
    child = _TASKS.alias("child")
    waiting_on_prerequisites: Select[int] = (
        select(func.count())
        .select_from(_EDGES.join(prerequisite, prerequisite.c.id == _EDGES.c.prerequisite_id))
        .where(_EDGES.c.task_id == _TASKS.c.id, _incomplete(prerequisite))
    )
    waiting_on_children: Select[int] = select(func.count()).where(
        child.c.parent_id == _TASKS.c.id, child.c.required.is_(True), _incomplete(child)
    )
    expected = (
        waiting_on_prerequisites.scalar_subquery() + waiting_on_children.scalar_subquery()
    ).label("expected")
    counted = select(_TASKS.c.id, _TASKS.c.blocked_count, expected).subquery()
    rows = uow.session.execute(
        select(counted).where(counted.c.blocked_count != counted.c.expected)
        .order_by(counted.c.id)
    ).all()
    return [
        Breach(
            WorkInvariant.BLOCKED_COUNT,
            f"task {row.id}",
            f"blocked_count {row.blocked_count}, but {row.expected} incomplete "
            "prerequisites and required children",
        )
        for row in rows
    ]


_CHECKS: tuple[Callable[[UnitOfWork], list[Breach]], ...] = (
    _two_current_attempts,
    _current_attempt,
    _active_attempt_is_current,
    _generation,
    _blocked_count,
)


def find_invariant_breaches(uow: UnitOfWork) -> list[Breach]:
    """Every breach of `WorkInvariant` in the work module's rows (none: consistent)."""
    return [breach for check in _CHECKS for breach in check(uow)]


@dataclass(frozen=True)
class OpenAttempt:
    """An ACTIVE attempt, by when it started (its lease may have run out since)."""

    attempt_id: str
    task_id: str
    started_at: datetime
    expires_at: datetime


def oldest_active_attempt(uow: UnitOfWork) -> OpenAttempt | None:
    """The ACTIVE attempt that started first (None: no attempt is ACTIVE)."""
    row = uow.session.execute(
        select(_ATTEMPTS.c.id, _ATTEMPTS.c.task_id, _ATTEMPTS.c.started_at, _ATTEMPTS.c.expires_at)
        .where(_ATTEMPTS.c.state == AttemptState.ACTIVE)
        .order_by(_ATTEMPTS.c.started_at, _ATTEMPTS.c.id)
        .limit(1)
    ).first()
    return None if row is None else OpenAttempt(row.id, row.task_id, row.started_at, row.expires_at)
