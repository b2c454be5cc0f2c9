"""Many tasks created or changed by one operation (an import), in bulk.

`create_tasks` writes a plan of new tasks with one executemany statement per table
(tasks, criteria, prerequisite edges, labels, links) and appends their events in one
call, rather than one ORM flush per task: an import of 100,000 tasks takes seconds. It
keeps what a single `createTask` keeps: the same checks of the fields (the caller cleans
them with `_tasks.clean_fields`), prerequisites and parents of the same project only (the
database's composite foreign keys agree), no cycle, `blocked_count` counted from the
start (a prerequisite or required child not complete counts; a task closed as COMPLETED
is complete), parents that take children, and an event for every task made, closed or
linked.

Changing many existing tasks is `_bulk_edits`; reading and locking many is `_briefs`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text

from hub.errors import InvalidTransition, ValidationFailed
from hub.events.service import About, record_events
from hub.identity.views import Actor, require_full_credential
from hub.ids import new_ids
from hub.projects import service as projects
from hub.storage.base import table_of
from hub.storage.bulk import Stored, insert_rows
from hub.storage.unit_of_work import UnitOfWork
from hub.work import _dependencies as dependencies
from hub.work import _similar as similar
from hub.work._briefs import lock_existing
from hub.work._rows import is_complete
from hub.work._tasks import (
    TaskFields,
)
from hub.work.tables import Task, TaskCriteria, TaskLabel, TaskLink, TaskPrerequisite
from hub.work.vocabulary import CloseReason, LinkKind, TaskKind, TaskState, WorkEvent

# A task of the plan (its position in it) or an existing task (its id).
Ref = int | str


_TASKS = table_of(Task)
_CRITERIA = table_of(TaskCriteria)
_EDGES = table_of(TaskPrerequisite)
_LABELS = table_of(TaskLabel)
_LINKS = table_of(TaskLink)


@dataclass(frozen=True, slots=True)
class Closure:
    """How a task is closed: `closeTask`'s reason, note, reopen condition and related
    task (a `Ref`)."""

    reason: CloseReason
    note: str = ""
    reopen_condition: str | None = None
    related: Ref | None = None


@dataclass(frozen=True, slots=True)
class PlannedTask:
    """A task to create; `parent`, `prerequisites` and `closed.related` name tasks of
    the same plan by position or existing tasks by id."""

    fields: TaskFields
    labels: tuple[str, ...] = ()
    source_system: str | None = None
    source_id: str | None = None
    parent: Ref | None = None
    prerequisites: tuple[Ref, ...] = ()
    closed: Closure | None = None


def find_cycle(waits: Callable[[int], Iterable[int]], roots: Iterable[int]) -> list[int] | None:
    """One cycle of the graph where node i waits for the nodes `waits(i)`, reachable
    from `roots`, as the nodes around it (each waiting for the next, the last for the
    first), or None. Iterative: a long chain does not reach the recursion limit; only
    what the roots reach is visited."""
    state: dict[int, bool] = {}  # True: on the current path; False: finished
    for root in roots:
        if root in state:
            continue
        state[root] = True
        path = [root]
        stack = [iter(waits(root))]
        while stack:
            for following in stack[-1]:
                seen = state.get(following)
                if seen:
                    return path[path.index(following) :]
                if seen is None:
                    state[following] = True
                    path.append(following)
                    stack.append(iter(waits(following)))
                    break
            else:
                state[path.pop()] = False
                stack.pop()
    return None


def create_tasks(
    uow: UnitOfWork,
    actor: Actor,
    project_id: str,
    planned: Sequence[PlannedTask],
    *,
    payload: Mapping[str, Any] | None = None,
) -> list[str]:
    """Create every planned task, its criteria, edges, labels, closure and links; the
    ids in the plan's order. `payload` is added to each `task.created` event's."""
    require_full_credential(actor)
    projects.ensure_project_exists(uow, project_id)
    if not planned:
        return []
    # Edges are decided under the project's edge lock, as every edge change is.
    dependencies.serialize_edges(uow, project_id)
    count = len(planned)
    existing = lock_existing(uow, project_id, _existing_refs(planned))
    for index, plan in enumerate(planned):
        for ref in (plan.parent, *plan.prerequisites, plan.closed and plan.closed.related):
            if isinstance(ref, int) and not 0 <= ref < count:
                raise ValueError(f"task {index} of the plan names task {ref}, not in it")
    # Every edge pointing at an earlier task of the plan (a parent waits for its children,
    # so a parent comes after them) is a plan in order: no cycle, no graph to search.
    in_order = all(
        (not isinstance(plan.parent, int) or plan.parent > index)
        and all(ref < index for ref in plan.prerequisites if isinstance(ref, int))
        for index, plan in enumerate(planned)
    )
    if not in_order:
        waits: list[list[int]] = [[] for _ in range(count)]
        for index, plan in enumerate(planned):
            if isinstance(plan.parent, int):
                waits[plan.parent].append(index)
            waits[index].extend(ref for ref in plan.prerequisites if isinstance(ref, int))
        cycle = find_cycle(waits.__getitem__, range(count))
        if cycle is not None:
            raise ValidationFailed(
                "prerequisiteIds",
                "the new tasks at positions "
                + ", ".join(str(i + 1) for i in cycle)
                + " would wait for each other in a cycle",
            )
        del waits
    ids = new_ids("tsk", count)
    complete = [
        plan.closed is not None and plan.closed.reason == CloseReason.COMPLETED for plan in planned
    ]
    blocked = [0] * count
    now = uow.now()
    stored = Stored(uow.dialect)
    at = stored.instant(now)
    for index, plan in enumerate(planned):
        parent = plan.parent
        if isinstance(parent, int):
            if planned[parent].fields.kind != TaskKind.OBJECTIVE:
                raise ValidationFailed(
                    "parentId",
                    f"task {parent + 1} of the plan is a {planned[parent].fields.kind}, "
                    "not an OBJECTIVE",
                )
            if not complete[index]:
                blocked[parent] += 1
        elif parent is not None:
            row = existing[parent]
            require_parent(row)
            if not complete[index]:
                row.blocked_count += 1
        for ref in dict.fromkeys(plan.prerequisites):
            if isinstance(ref, int):
                target, done = ids[ref], complete[ref]
            else:
                target, done = ref, is_complete(existing[ref])
            if target == ids[index]:
                raise ValidationFailed("prerequisiteId", "a task cannot be its own prerequisite")
            if not done:
                blocked[index] += 1
    by = actor.principal_id
    links: list[tuple[str, str, LinkKind]] = []
    closed: list[int] = []
    for index, plan in enumerate(planned):
        if plan.closed is not None:
            closed.append(index)
            links.extend(_closure_link(plan.closed, ids, index, existing))
    name, flag = stored.name, stored.flag
    yes = flag(True)
    insert_rows(uow, _TASKS, _TASK_COLUMNS, (
        (
            ids[index], project_id, name(plan.fields.kind), plan.fields.title,
            plan.fields.outcome, plan.fields.priority,
            name(TaskState.OPEN if plan.closed is None else TaskState.CLOSED),
            ids[plan.parent] if isinstance(plan.parent, int) else plan.parent,
            yes, plan.source_system, plan.source_id, 1, 1, 0, blocked[index],
            None if plan.closed is None else name(plan.closed.reason),
            None if plan.closed is None else plan.closed.note,
            None if plan.closed is None else plan.closed.reopen_condition,
            at, by, at,
            similar.search_text_of(
                plan.fields.title, plan.fields.outcome, list(plan.fields.criteria)
            ),
        )
        for index, plan in ((i, planned[i]) for i in _parents_first(planned))
    ), one_statement=True)  # fmt: skip
    if uow.dialect == "postgresql" and count >= _ANALYZE_PAST:
        # Every row below is checked against `tasks` by a foreign key, and PostgreSQL
        # plans those checks once per connection: a plan made while the table was small
        # scans it whole, once per row (100,000 rows: hours). New statistics, counting
        # the rows just written, make it plan them again, by index.
        uow.session.execute(_ANALYZE_TASKS)
    insert_rows(uow, _CRITERIA, _CRITERIA_COLUMNS, (
        (ids[index], 1, project_id, stored.json(list(plan.fields.criteria)), at, by)
        for index, plan in enumerate(planned)
    ))  # fmt: skip
    # Made as they are inserted: 100,000 edges are not held at once.
    insert_rows(uow, _EDGES, _EDGE_COLUMNS, (
        (ids[index], ids[ref] if isinstance(ref, int) else ref, project_id, at)
        for index, plan in enumerate(planned)
        for ref in dict.fromkeys(plan.prerequisites)
    ))  # fmt: skip
    insert_rows(uow, _LABELS, _LABEL_COLUMNS, (
        (ids[index], label, project_id)
        for index, plan in enumerate(planned)
        for label in plan.labels
    ))  # fmt: skip
    if links:
        insert_rows(uow, _LINKS, _LINK_COLUMNS, (
            (task, other, name(kind), project_id, at, by) for task, other, kind in links
        ))  # fmt: skip
    extra = dict(payload or {})
    record_events(
        uow,
        WorkEvent.TASK_CREATED,
        (About(project_id, task_id) for task_id in ids),
        by=actor,
        payloads=(
            {"kind": plan.fields.kind, "title": plan.fields.title, **extra} for plan in planned
        ),
    )
    if closed:
        record_events(
            uow,
            WorkEvent.TASK_CLOSED,
            (About(project_id, ids[index]) for index in closed),
            by=actor,
            payloads=({"reason": reason} for reason in _reasons(planned, closed)),
        )
    if links:
        record_events(
            uow,
            WorkEvent.TASK_LINKED,
            (About(project_id, task) for task, _, _ in links),
            by=actor,
            payloads=({"other": other, "kind": kind} for _, other, kind in links),
        )
    return ids


# Past this many new tasks, PostgreSQL's statistics of `tasks` are refreshed before the
# rows that point at them are written (`create_tasks`).
_ANALYZE_PAST = 1000
_ANALYZE_TASKS = text("ANALYZE tasks")

# The columns `create_tasks` writes; the others keep their defaults (NULL).
_TASK_COLUMNS = (
    "id", "project_id", "kind", "title", "outcome", "priority", "state", "parent_id",
    "required", "source_system", "source_id", "revision", "criteria_revision", "generation",
    "blocked_count", "close_reason", "close_note", "reopen_condition", "created_at",
    "created_by", "updated_at", "search_text",
)  # fmt: skip
_CRITERIA_COLUMNS = ("task_id", "revision", "project_id", "criteria", "created_at", "created_by")
_EDGE_COLUMNS = ("task_id", "prerequisite_id", "project_id", "created_at")
_LABEL_COLUMNS = ("task_id", "label", "project_id")
_LINK_COLUMNS = ("task_id", "other_id", "kind", "project_id", "created_at", "created_by")


def _reasons(planned: Sequence[PlannedTask], closed: Sequence[int]) -> Iterator[CloseReason]:
    for index in closed:
        closure = planned[index].closed
        assert closure is not None
        yield closure.reason


def _existing_refs(planned: Sequence[PlannedTask]) -> set[str]:
    refs: set[str] = set()
    for plan in planned:
        for ref in (plan.parent, *plan.prerequisites, plan.closed and plan.closed.related):
            if isinstance(ref, str):
                refs.add(ref)
    return refs


def require_parent(parent: Task) -> None:
    """What `attach_to_parent` asks of an existing parent."""
    if parent.kind != TaskKind.OBJECTIVE:
        raise ValidationFailed(
            "parentId", f"parent {parent.id} is a {parent.kind}, not an OBJECTIVE"
        )
    if parent.state in (TaskState.DONE, TaskState.CLOSED):
        raise InvalidTransition(f"parent {parent.id} is {parent.state}; it takes no new children")
    if parent.current_attempt_id is not None:
        raise InvalidTransition(
            f"parent {parent.id} has a current attempt; a new required child would change "
            "what it is being completed against"
        )


def _parents_first(planned: Sequence[PlannedTask]) -> list[int]:
    """The plan's positions with every parent before its children (a child's row names
    its parent, which must exist when the row is inserted)."""
    depth = [-1] * len(planned)
    for start in range(len(planned)):
        chain = []
        index: int | None = start
        while isinstance(index, int) and depth[index] < 0:
            chain.append(index)
            parent = planned[index].parent
            index = parent if isinstance(parent, int) else None
        base = depth[index] if isinstance(index, int) else -1
        for offset, member in enumerate(reversed(chain), start=1):
            depth[member] = base + offset
    return sorted(range(len(planned)), key=depth.__getitem__)


def _closure_link(
    closure: Closure, ids: Sequence[str], index: int, existing: Mapping[str, Task]
) -> list[tuple[str, str, LinkKind]]:
    """The link a closure records (as `closeTask`'s: task, other, kind), after checking
    what the closure needs."""
    reason = closure.reason
    if reason == CloseReason.DEFERRED and not (closure.reopen_condition or "").strip():
        raise ValidationFailed("reopenCondition", "a deferred task needs a reopen condition")
    related = closure.related
    if related is None:  # an imported closure may not name it (`imports._items`)
        return []
    other = ids[related] if isinstance(related, int) else existing[related].id
    task = ids[index]
    if other == task:
        raise ValidationFailed("relatedTaskId", "a task cannot be related to itself")
    if reason == CloseReason.SUPERSEDED:
        return [(other, task, LinkKind.SUPERSEDES)]
    if reason == CloseReason.DUPLICATE:
        return [(task, other, LinkKind.DUPLICATE_OF)]
    return [(task, other, LinkKind.RELATED)]
