"""Many tasks of a project read, or locked, at once: what an import decides on.

Both read a few statements whatever the number of tasks (ids in IN lists of `CHUNK`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import String, select, type_coerce

from hub.errors import NotFound, ValidationFailed
from hub.storage.base import table_of
from hub.storage.unit_of_work import UnitOfWork
from hub.work.tables import Task
from hub.work.vocabulary import CloseReason, TaskKind, TaskState

# Ids per IN list when reading or locking many rows (well within both databases' limits).
CHUNK = 2000

_TASKS = table_of(Task)


@dataclass(frozen=True, slots=True)
class TaskBrief:
    """What deciding about a task at scale needs, read for many at once."""

    id: str
    kind: TaskKind
    state: TaskState
    revision: int
    current_attempt_id: str | None
    close_reason: CloseReason | None
    close_note: str | None
    reopen_condition: str | None
    parent_id: str | None
    source_id: str | None


def lock_existing(uow: UnitOfWork, project_id: str, task_ids: Iterable[str]) -> dict[str, Task]:
    """Existing tasks a plan names, locked in id order (their counts or states are
    decided on), each of the project."""
    wanted = sorted(set(task_ids))
    found: dict[str, Task] = {}
    for start in range(0, len(wanted), CHUNK):
        for row in uow.session.scalars(
            select(Task)
            .where(Task.id.in_(wanted[start : start + CHUNK]))
            .order_by(Task.id)
            .with_for_update()
            .execution_options(populate_existing=True)
        ):
            found[row.id] = row
    for task_id in wanted:
        locked = found.get(task_id)
        if locked is None:
            raise NotFound("task", task_id)
        if locked.project_id != project_id:
            raise ValidationFailed("taskId", f"task {task_id} belongs to another project")
    return found


def lock_tasks(uow: UnitOfWork, project_id: str, task_ids: Iterable[str]) -> dict[str, TaskBrief]:
    """Lock these tasks of the project (in id order) and read them after the lock: what
    is decided about them next holds until the commit."""
    return {
        task_id: TaskBrief(
            id=row.id,
            kind=row.kind,
            state=row.state,
            revision=row.revision,
            current_attempt_id=row.current_attempt_id,
            close_reason=row.close_reason,
            close_note=row.close_note,
            reopen_condition=row.reopen_condition,
            parent_id=row.parent_id,
            source_id=row.source_id,
        )
        for task_id, row in lock_existing(uow, project_id, task_ids).items()
    }


# The columns of a `TaskBrief`, read as plain text: at 100,000 rows the column types'
# conversions cost more than the query (the enums are made from the text instead).
_BRIEF = (
    _TASKS.c.id, type_coerce(_TASKS.c.kind, String), type_coerce(_TASKS.c.state, String),
    _TASKS.c.revision, _TASKS.c.current_attempt_id, type_coerce(_TASKS.c.close_reason, String),
    _TASKS.c.close_note, _TASKS.c.reopen_condition, _TASKS.c.parent_id, _TASKS.c.source_id,
)  # fmt: skip


def tasks_by_source(
    uow: UnitOfWork, project_id: str, source_system: str, source_ids: Iterable[str]
) -> dict[str, TaskBrief]:
    """The project's tasks carrying these source ids of `source_system`, by source id:
    a few statements whatever their number (past a few thousand, the source system's
    every task in one, kept if wanted)."""
    uow.session.flush()
    wanted = sorted(set(source_ids))
    of_system = (_TASKS.c.project_id == project_id) & (_TASKS.c.source_system == source_system)
    if len(wanted) > 2 * CHUNK:
        statements = [select(*_BRIEF).where(of_system)]
    else:
        statements = [
            select(*_BRIEF).where(of_system, _TASKS.c.source_id.in_(wanted[start : start + CHUNK]))
            for start in range(0, len(wanted), CHUNK)
        ]
    keep = set(wanted)
    found: dict[str, TaskBrief] = {}
    kinds, states, reasons = TaskKind, TaskState, CloseReason
    for statement in statements:
        for row in uow.session.execute(statement).tuples():
            if row[9] in keep:
                found[row[9]] = TaskBrief(
                    row[0], kinds(row[1]), states(row[2]), row[3], row[4],
                    None if row[5] is None else reasons(row[5]), row[6], row[7], row[8], row[9],
                )  # fmt: skip
    return found
