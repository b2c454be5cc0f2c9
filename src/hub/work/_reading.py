"""Reading tasks: their views (the effective state judged at read time, the current
criteria), lookups, lists, the ready queue and the tasks most like a text.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import ColumnElement, Select, bindparam, exists, select, text
from sqlalchemy.orm import aliased

from hub.errors import NotFound, ValidationFailed, raises
from hub.inputs import bounded_int, clean_text
from hub.mapping import view_of
from hub.projects import service as projects
from hub.storage.base import one_of, table_of
from hub.storage.fulltext import MAX_TERMS, query_terms
from hub.storage.unit_of_work import UnitOfWork
from hub.work import _similar as similar
from hub.work._rows import require_task
from hub.work.tables import Attempt, Task, TaskCriteria, TaskLabel, TaskLink, TaskPrerequisite
from hub.work.views import LinkView, SimilarTask, TaskView
from hub.work.vocabulary import (
    CLAIMABLE_STATES,
    FINISHED_STATES,
    EffectiveTaskState,
    LinkKind,
    TaskKind,
    TaskState,
)

READY = text(f"{one_of('tasks.state', CLAIMABLE_STATES)} AND tasks.blocked_count = 0")
_ORIGINAL = aliased(Task, name="original")
# Linked DUPLICATE_OF a task that is neither done nor closed: the original is where the
# work happens, so this one is never offered or claimed (`_claims`).
DUPLICATE_OF_UNFINISHED = (
    exists()
    .where(
        TaskLink.task_id == Task.id,
        TaskLink.kind == LinkKind.DUPLICATE_OF,
        _ORIGINAL.id == TaskLink.other_id,
        _ORIGINAL.state.not_in(FINISHED_STATES),
    )
    .correlate(Task)
)
# The most `similarTasks` answers.
MAX_SIMILAR = 50
MAX_SIMILAR_TEXT = 20_000


@dataclass(frozen=True)
class TaskFilter:
    project_id: str
    states: Sequence[str] = ()
    kinds: Sequence[str] = ()
    parent_id: str | None = None
    after: str | None = None
    limit: int = 50
    extra: dict[str, str] = field(default_factory=dict)


def get_task(uow: UnitOfWork, task_id: str) -> TaskView:
    return task_view(uow, require_task(uow, task_id))


def get_tasks(uow: UnitOfWork, task_ids: Sequence[str]) -> list[TaskView]:
    """Many tasks, in the order asked, in a few statements whatever their number."""
    rows = uow.session.scalars(select(Task).where(Task.id.in_(sorted(set(task_ids))))).all()
    views = {view.id: view for view in task_views(uow, rows)}
    for task_id in task_ids:
        if task_id not in views:
            raise NotFound("task", task_id)
    return [views[task_id] for task_id in task_ids]


def task_links(uow: UnitOfWork, task_id: str) -> list[LinkView]:
    """The links recorded from or to a task, oldest first; each as it was recorded
    (`task_id KIND other_id`), so a link to this task names it as `other_id`."""
    rows = uow.session.scalars(
        select(TaskLink)
        .where((TaskLink.task_id == task_id) | (TaskLink.other_id == task_id))
        .order_by(TaskLink.created_at, TaskLink.task_id, TaskLink.other_id, TaskLink.kind)
    ).all()
    return [view_of(LinkView, row) for row in rows]


@raises(NotFound, ValidationFailed)
def similar_tasks(
    uow: UnitOfWork, *, project_id: str, text: str, first: int = 10
) -> list[SimilarTask]:
    """The project's tasks most like `text` (its first `MAX_TERMS` distinct words), open
    and closed, best first (`_similar`): what to look at before creating a task."""
    projects.ensure_project_exists(uow, project_id)
    limit = bounded_int("first", first, 1, MAX_SIMILAR)
    wanted = clean_text("text", text, MAX_SIMILAR_TEXT)
    terms = query_terms(wanted)[:MAX_TERMS]
    if not terms:
        raise ValidationFailed(
            "text",
            f"{wanted!r} has no words to search for: stop words ('the', 'not', …) and "
            "punctuation are not searched",
        )
    return similar_views(uow, similar.matches(uow, project_id, terms, limit=limit))


def similar_views(uow: UnitOfWork, found: Sequence[similar.Match]) -> list[SimilarTask]:
    tasks = {view.id: view for view in get_tasks(uow, [match.task_id for match in found])}
    return [
        SimilarTask(
            task=tasks[match.task_id],
            rank=place,
            relevance=match.relevance,
            shared_words=match.shared_words,
            query_words=match.query_words,
            likely_duplicate=match.likely_duplicate,
        )
        for place, match in enumerate(found, start=1)
    ]


def list_tasks(uow: UnitOfWork, query: TaskFilter) -> list[TaskView]:
    projects.ensure_project_exists(uow, query.project_id)
    statement = select(Task).where(Task.project_id == query.project_id)
    if query.states:
        statement = statement.where(Task.state.in_(list(query.states)))
    if query.kinds:
        statement = statement.where(Task.kind.in_(list(query.kinds)))
    if query.parent_id:
        statement = statement.where(Task.parent_id == query.parent_id)
    if query.after:
        statement = statement.where(Task.id > query.after)
    rows = uow.session.scalars(statement.order_by(Task.id).limit(query.limit)).all()
    return task_views(uow, rows)


def candidates(
    uow: UnitOfWork, *, project_id: str, kinds: Sequence[str] = (), limit: int = 20
) -> list[TaskView]:
    """Ready work by priority then age. Informational: it may be stale at once."""
    projects.ensure_project_exists(uow, project_id)
    rows = uow.session.scalars(ready_tasks(project_id, kinds).limit(limit)).all()
    return task_views(uow, rows)


def ready_tasks(project_id: str | ColumnElement[str], kinds: Sequence[str]) -> Select[Task]:
    """Ready work in offer order; the predicate matches the partial index `ix_tasks_ready`."""
    for kind in kinds:
        if kind not in tuple(TaskKind):
            raise ValidationFailed("kinds", f"{kind!r} is not a task kind")
    statement = select(Task).where(Task.project_id == project_id, READY, ~DUPLICATE_OF_UNFINISHED)
    if kinds:
        statement = statement.where(Task.kind.in_(list(kinds)))
    return statement.order_by(Task.priority.desc(), Task.id)


def unfinished_original(uow: UnitOfWork, task_id: str) -> tuple[str, TaskState] | None:
    """The task `task_id` is linked DUPLICATE_OF that is neither done nor closed (the
    oldest such link's), if any."""
    found = uow.session.execute(
        select(Task.id, Task.state)
        .join(TaskLink, TaskLink.other_id == Task.id)
        .where(
            TaskLink.task_id == task_id,
            TaskLink.kind == LinkKind.DUPLICATE_OF,
            Task.state.not_in(FINISHED_STATES),
        )
        .order_by(TaskLink.created_at, Task.id)
        .limit(1)
    ).first()
    return None if found is None else (str(found[0]), TaskState(found[1]))


def require_task_in(
    uow: UnitOfWork, project_id: str, task_id: str, *, field: str = "taskId"
) -> Task:
    row = require_task(uow, task_id)
    if row.project_id != project_id:
        raise ValidationFailed(field, f"task {task_id} belongs to another project")
    return row


class _CriteriaCache:
    """Criteria revisions are immutable once committed, so every view need not re-read
    them. Filled only after commit: a rolled-back revision number can be reused."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[tuple[str, int], tuple[str, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, int]) -> tuple[str, ...] | None:
        with self._lock:
            return self._entries.get(key)

    def put(self, key: tuple[str, int], criteria: tuple[str, ...]) -> None:
        with self._lock:
            self._entries[key] = criteria
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)


_criteria_cache = _CriteriaCache(size=20_000)


def current_criteria(uow: UnitOfWork, task: Task, revision: int | None = None) -> list[str]:
    key = (task.id, revision or task.criteria_revision)
    cached = _criteria_cache.get(key)
    if cached is not None:
        return list(cached)
    row = uow.session.get(TaskCriteria, key)
    if row is None:
        return []
    criteria = tuple(row.criteria)
    uow.after_commit(lambda: _criteria_cache.put(key, criteria))
    return list(criteria)


def effective_state(task: Task, current: Attempt | None, now: datetime) -> EffectiveTaskState:
    """Expiry is judged at read time: no background job has to run for it to be true."""
    if (
        task.state == TaskState.IN_PROGRESS
        and current is not None
        and not current.lease_valid_at(now)
    ):
        return EffectiveTaskState.RECOVERY_CANDIDATE
    if task.state in CLAIMABLE_STATES and task.blocked_count > 0:
        return EffectiveTaskState.BLOCKED
    return EffectiveTaskState(task.state)


_PREREQUISITE_EDGES = table_of(TaskPrerequisite)
_PREREQUISITES_OF = (
    select(_PREREQUISITE_EDGES.c.prerequisite_id)
    .where(_PREREQUISITE_EDGES.c.task_id == bindparam("task_id"))
    .order_by(_PREREQUISITE_EDGES.c.prerequisite_id)
)
_LABELS = table_of(TaskLabel)
_LABELS_OF = (
    select(_LABELS.c.label)
    .where(_LABELS.c.task_id == bindparam("task_id"))
    .order_by(_LABELS.c.label)
)


def task_view(uow: UnitOfWork, task: Task) -> TaskView:
    current = uow.session.get(Attempt, task.current_attempt_id) if task.current_attempt_id else None
    uow.session.flush()  # a Core read: see this transaction's own edges
    prerequisites = uow.session.scalars(_PREREQUISITES_OF, {"task_id": task.id}).all()
    labels = uow.session.scalars(_LABELS_OF, {"task_id": task.id}).all()
    return _view(task, current, prerequisites, labels, current_criteria(uow, task), uow.now())


def task_views(uow: UnitOfWork, tasks: Sequence[Task]) -> list[TaskView]:
    """Views of many tasks in four queries, whatever their number (lists, candidates)."""
    if not tasks:
        return []
    ids = [task.id for task in tasks]
    attempt_ids = [task.current_attempt_id for task in tasks if task.current_attempt_id]
    currents = {
        row.id: row
        for row in (
            uow.session.scalars(select(Attempt).where(Attempt.id.in_(attempt_ids)))
            if attempt_ids
            else ()
        )
    }
    prerequisites: dict[str, list[str]] = {task_id: [] for task_id in ids}
    for task_id, prerequisite_id in uow.session.execute(
        select(TaskPrerequisite.task_id, TaskPrerequisite.prerequisite_id)
        .where(TaskPrerequisite.task_id.in_(ids))
        .order_by(TaskPrerequisite.task_id, TaskPrerequisite.prerequisite_id)
    ):
        prerequisites[task_id].append(prerequisite_id)
    labels: dict[str, list[str]] = {task_id: [] for task_id in ids}
    for task_id, label in uow.session.execute(
        select(TaskLabel.task_id, TaskLabel.label)
        .where(TaskLabel.task_id.in_(ids))
        .order_by(TaskLabel.task_id, TaskLabel.label)
    ):
        labels[task_id].append(label)
    wanted = {(task.id, task.criteria_revision) for task in tasks}
    criteria = {
        (row.task_id, row.revision): list(row.criteria)
        for row in uow.session.scalars(select(TaskCriteria).where(TaskCriteria.task_id.in_(ids)))
        if (row.task_id, row.revision) in wanted
    }
    now = uow.now()
    return [
        _view(
            task,
            currents.get(task.current_attempt_id) if task.current_attempt_id else None,
            prerequisites[task.id],
            labels[task.id],
            criteria.get((task.id, task.criteria_revision), []),
            now,
        )
        for task in tasks
    ]


def _view(
    task: Task,
    current: Attempt | None,
    prerequisites: Sequence[str],
    labels: Sequence[str],
    criteria: Sequence[str],
    now: datetime,
) -> TaskView:
    return view_of(
        TaskView,
        task,
        effective_state=effective_state(task, current, now),
        criteria=tuple(criteria),
        prerequisite_ids=tuple(prerequisites),
        labels=tuple(labels),
    )
