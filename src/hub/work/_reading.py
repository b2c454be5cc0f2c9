"""Reading tasks: lookups, lists, the ready queue and the tasks most like a text, each
shown by its view read in the same statement (`work._task_views`); the current criteria.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import ColumnElement, Integer, Select, bindparam, exists, select, text

from hub.errors import NotFound, ValidationFailed, raises
from hub.inputs import bounded_int, clean_text
from hub.mapping import view_of
from hub.projects import service as projects
from hub.storage.base import one_of, table_of
from hub.storage.fulltext import MAX_TERMS, query_terms
from hub.storage.unit_of_work import UnitOfWork
from hub.work import _similar as similar
from hub.work._rows import require_task
from hub.work._task_views import TASKS, VIEW_COLUMNS, read_views
from hub.work.tables import Task, TaskCriteria, TaskLink
from hub.work.views import LinkView, SimilarTask, TaskView
from hub.work.vocabulary import (
    CLAIMABLE_STATES,
    FINISHED_STATES,
    LinkKind,
    TaskKind,
    TaskState,
)

READY = text(f"{one_of('tasks.state', CLAIMABLE_STATES)} AND tasks.blocked_count = 0")
_LINKS = table_of(TaskLink)
_ORIGINAL = TASKS.alias("original")
# Linked DUPLICATE_OF a task that is neither done nor closed: the original is where the
# work happens, so this one is never offered or claimed (`_claims`). Core, so the
# candidates' Core read and the claim's ORM query share it.
DUPLICATE_OF_UNFINISHED = (
    exists()
    .where(
        _LINKS.c.task_id == TASKS.c.id,
        _LINKS.c.kind == LinkKind.DUPLICATE_OF,
        _ORIGINAL.c.id == _LINKS.c.other_id,
        _ORIGINAL.c.state.not_in(FINISHED_STATES),
    )
    .correlate(TASKS)
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


# The statements of the reads that only show tasks, built once: building one costs more
# than running it (docs/benchmarks.md, section 2).
_BY_IDS = VIEW_COLUMNS.where(TASKS.c.id.in_(bindparam("task_ids", expanding=True)))
READY_VIEWS = (
    VIEW_COLUMNS.where(TASKS.c.project_id == bindparam("project_id"), READY,
                       ~DUPLICATE_OF_UNFINISHED)
    .order_by(TASKS.c.priority.desc(), TASKS.c.id)
    .limit(bindparam("limit", type_=Integer))
)  # fmt: skip
READY_VIEWS_OF_KINDS = READY_VIEWS.where(TASKS.c.kind.in_(bindparam("kinds", expanding=True)))


def get_task(uow: UnitOfWork, task_id: str) -> TaskView:
    found = read_views(uow, _BY_IDS, {"task_ids": [task_id]})
    if not found:
        raise NotFound("task", task_id)
    return found[0]


def get_tasks(uow: UnitOfWork, task_ids: Sequence[str]) -> list[TaskView]:
    """Many tasks, in the order asked, in one statement whatever their number."""
    if not task_ids:
        return []
    found = read_views(uow, _BY_IDS, {"task_ids": sorted(set(task_ids))})
    views = {view.id: view for view in found}
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
    statement = VIEW_COLUMNS.where(TASKS.c.project_id == query.project_id)
    if query.states:
        statement = statement.where(TASKS.c.state.in_(list(query.states)))
    if query.kinds:
        statement = statement.where(TASKS.c.kind.in_(list(query.kinds)))
    if query.parent_id:
        statement = statement.where(TASKS.c.parent_id == query.parent_id)
    if query.after:
        statement = statement.where(TASKS.c.id > query.after)
    found = read_views(uow, statement.order_by(TASKS.c.id).limit(query.limit), {})
    if not found:
        # Only now: a task found is of a project that exists (a foreign key says so).
        projects.ensure_project_exists(uow, query.project_id)
    return found


def candidates(
    uow: UnitOfWork, *, project_id: str, kinds: Sequence[str] = (), limit: int = 20
) -> list[TaskView]:
    """Ready work by priority then age, in one statement. Informational: it may be stale
    at once."""
    if not _known_kinds(kinds):
        projects.ensure_project_exists(uow, project_id)  # an unknown project comes first
        _require_kinds(kinds)
    values: dict[str, object] = {"project_id": project_id, "limit": limit}
    if kinds:
        values["kinds"] = list(kinds)
    found = read_views(uow, READY_VIEWS_OF_KINDS if kinds else READY_VIEWS, values)
    if not found:
        # Only now: a task found is of a project that exists (a foreign key says so).
        projects.ensure_project_exists(uow, project_id)
    return found


def _known_kinds(kinds: Sequence[str]) -> bool:
    return all(kind in tuple(TaskKind) for kind in kinds)


def _require_kinds(kinds: Sequence[str]) -> None:
    for kind in kinds:
        if kind not in tuple(TaskKind):
            raise ValidationFailed("kinds", f"{kind!r} is not a task kind")


def ready_tasks(project_id: str | ColumnElement[str], kinds: Sequence[str]) -> Select[Task]:
    """Ready work in offer order; the predicate matches the partial index `ix_tasks_ready`."""
    _require_kinds(kinds)
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


def task_view(uow: UnitOfWork, task: Task) -> TaskView:
    """The view of a task a mutation holds, as this transaction has it."""
    return get_task(uow, task.id)


def answered_task(uow: UnitOfWork, task: Task) -> TaskView | None:
    """The held task's view for a mutation's answer, unless the caller will not read it
    (`UnitOfWork.reads`): the view is a statement of its own."""
    return task_view(uow, task) if uow.reads("task") else None


def task_views(uow: UnitOfWork, tasks: Sequence[Task]) -> list[TaskView]:
    """Views of many tasks held, in their order, in one statement."""
    return get_tasks(uow, [task.id for task in tasks])
