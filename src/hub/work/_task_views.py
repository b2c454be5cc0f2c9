"""Task views read in one statement: the columns a `TaskView` shows and what it adds
(the current lease's end, the current criteria, the prerequisites, the labels), each
row made straight into its view.

The reads that only show tasks (`task`, `tasks`, `candidates`, the loaders' batches)
select from `VIEW_COLUMNS`, narrowed and ordered as each needs (`work._reading`): one
round trip and no ORM entity, whatever the number of tasks. A mutation's answer
(`work._reading.task_view`) is read the same way, after the session's changes are
flushed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import Select, and_, select

from hub.mapping import row_reader
from hub.storage.aggregates import json_list, listed
from hub.storage.base import table_of
from hub.storage.unit_of_work import UnitOfWork
from hub.work.tables import (
    Attempt,
    Task,
    TaskCriteria,
    TaskLabel,
    TaskPrerequisite,
    lease_valid,
)
from hub.work.views import TaskView
from hub.work.vocabulary import CLAIMABLE_STATES, EffectiveTaskState, TaskState

TASKS = table_of(Task)
_ATTEMPTS = table_of(Attempt)
_CRITERIA = table_of(TaskCriteria)
_LABELS = table_of(TaskLabel)
_EDGES = table_of(TaskPrerequisite)

# What a view adds to its task's own columns, read beside them.
_ADDED = ("effective_state", "criteria", "prerequisite_ids", "labels")
_OWN = tuple(f.name for f in dataclasses.fields(TaskView) if f.name not in _ADDED)

# The current attempt is the only one whose lease the effective state depends on, and
# only an in-progress task has one (a CHECK constraint says so).
_FROM = TASKS.outerjoin(_ATTEMPTS, _ATTEMPTS.c.id == TASKS.c.current_attempt_id).outerjoin(
    _CRITERIA,
    and_(_CRITERIA.c.task_id == TASKS.c.id, _CRITERIA.c.revision == TASKS.c.criteria_revision),
)
# Each side a scalar subquery, looked up by its primary key `(task_id, …)` for each row
# returned: when an index gives the order (every read here), only the rows the limit
# keeps, never every task the filter passes, and no join multiplying the rows.
_PREREQUISITES = (
    select(json_list(_EDGES.c.prerequisite_id)).where(_EDGES.c.task_id == TASKS.c.id)
).scalar_subquery()
_LABELS_OF = (
    select(json_list(_LABELS.c.label)).where(_LABELS.c.task_id == TASKS.c.id)
).scalar_subquery()
VIEW_COLUMNS: Select[Any] = select(
    *(TASKS.c[name] for name in _OWN),
    _ATTEMPTS.c.expires_at.label("lease_expires_at"),
    _CRITERIA.c.criteria,
    _PREREQUISITES.label("prerequisite_ids"),
    _LABELS_OF.label("labels"),
).select_from(_FROM)


_read_view = row_reader(TaskView, _OWN)


def effective_state(
    state: TaskState, blocked_count: int, lease_expires_at: datetime | None, now: datetime
) -> EffectiveTaskState:
    """Expiry is judged at read time: no background job has to run for it to be true.
    `lease_expires_at` is the current attempt's (None: the task has none)."""
    if (
        state == TaskState.IN_PROGRESS
        and lease_expires_at is not None
        and not lease_valid(lease_expires_at, now)
    ):
        return EffectiveTaskState.RECOVERY_CANDIDATE
    if state in CLAIMABLE_STATES and blocked_count > 0:
        return EffectiveTaskState.BLOCKED
    return EffectiveTaskState(state)


def read_views(uow: UnitOfWork, statement: Select[Any], values: dict[str, Any]) -> list[TaskView]:
    """The views of the rows `statement` (from `VIEW_COLUMNS`) finds, in its order."""
    uow.session.flush()  # a Core read: see this transaction's own changes
    rows = uow.session.execute(statement, values)
    return views_of(uow, rows)


def views_of(uow: UnitOfWork, rows: Iterable[Any]) -> list[TaskView]:
    now = uow.now()
    dialect = uow.dialect
    return [
        _read_view(
            row,
            effective_state=effective_state(
                row.state, row.blocked_count, row.lease_expires_at, now
            ),
            criteria=tuple(row.criteria or ()),
            prerequisite_ids=listed(row.prerequisite_ids, dialect),
            labels=listed(row.labels, dialect),
        )
        for row in rows
    ]
