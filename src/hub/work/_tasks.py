"""Tasks: creation, edits with lost-update protection, closure, links, and reading them.

Generic edits never touch `state`, `generation` or `current_attempt_id`: those move
only through claims, submissions and recovery (docs/design.md, "Tasks, attempts,
leases and generations").
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, bindparam, exists, select, text
from sqlalchemy.orm import aliased

from hub.errors import (
    Conflict,
    InvalidTransition,
    NotFound,
    PermissionDenied,
    ValidationFailed,
    raises,
)
from hub.events.service import (
    record_event,
)
from hub.idempotency import service as idempotency
from hub.idempotency.service import Keyed
from hub.identity.views import Actor, require_full_credential
from hub.ids import new_id
from hub.inputs import (
    bounded_int,
    clean_choice,
    clean_label,
    clean_list,
    clean_optional,
    clean_text,
)
from hub.mapping import view_of
from hub.projects import service as projects
from hub.storage.base import one_of, table_of
from hub.storage.fulltext import MAX_TERMS, query_terms
from hub.storage.unit_of_work import UnitOfWork
from hub.work import _dependencies as dependencies
from hub.work import _similar as similar
from hub.work._lifecycle import release_worktrees
from hub.work._rows import lock_task, require_task
from hub.work.tables import (
    Attempt,
    Task,
    TaskCriteria,
    TaskLabel,
    TaskLink,
    TaskPrerequisite,
)
from hub.work.views import CreatedTask, LinkView, SimilarTask, TaskView
from hub.work.vocabulary import (
    CLAIMABLE_STATES,
    FINISHED_STATES,
    CloseReason,
    EffectiveTaskState,
    LinkKind,
    TaskKind,
    TaskState,
    WorkEvent,
)

# Kinds whose completion is judged against their own acceptance criteria.
KINDS_NEEDING_CRITERIA = (TaskKind.IMPLEMENTATION, TaskKind.GENERAL, TaskKind.OBJECTIVE)
# A submission of the task is in review or integration.
SUBMITTED_STATES = (TaskState.AWAITING_REVIEW, TaskState.AWAITING_INTEGRATION)
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
# The close matches a created task is answered with (informational, docs/design.md,
# "Duplicate work"), and the most `similarTasks` answers.
SIMILAR_ON_CREATE = 5
MAX_SIMILAR = 50
MAX_SIMILAR_TEXT = 20_000
# createTask's limits (imports check every item against the same).
MAX_TITLE = 300
MAX_OUTCOME = 20_000
MAX_CRITERIA = 50
MAX_CRITERION = 2000
PRIORITY_RANGE = (-1000, 1000)
MAX_LABELS = 20
MAX_LABEL = 100
MAX_CLOSE_NOTE = 10_000
MAX_REOPEN_CONDITION = 2000


@dataclass(frozen=True)
class NewTask:
    project_id: str
    kind: str
    title: str
    outcome: str = ""
    acceptance_criteria: Sequence[str] = ()
    priority: int = 0
    parent_id: str | None = None
    required: bool = True
    prerequisite_ids: Sequence[str] = ()
    source_system: str | None = None
    source_id: str | None = None
    idempotency_key: str | None = None


@dataclass(frozen=True)
class TaskEdit:
    task_id: str
    expected_revision: int
    title: str | None = None
    outcome: str | None = None
    priority: int | None = None
    acceptance_criteria: Sequence[str] | None = None
    required: bool | None = None
    reason: str | None = None  # why; required when dropping a closed child's requirement


@dataclass(frozen=True)
class TaskFilter:
    project_id: str
    states: Sequence[str] = ()
    kinds: Sequence[str] = ()
    parent_id: str | None = None
    after: str | None = None
    limit: int = 50
    extra: dict[str, str] = field(default_factory=dict)


@raises(
    NotFound,
    PermissionDenied,
    Conflict,
    InvalidTransition,
    ValidationFailed,
    *idempotency.KEYED,
)
def create_task(uow: UnitOfWork, actor: Actor, cmd: NewTask) -> Keyed[CreatedTask]:
    """Create a task, answered with the project's tasks most like it (by its title: see
    `_similar`); a keyed retry replays the one created first, with the matches found
    then (each task as it is now)."""

    def execute() -> CreatedTask:
        task = _create(uow, actor, cmd)
        return CreatedTask(task, tuple(_similar_to(uow, task)))

    def replay(prior: dict[str, Any]) -> CreatedTask:
        found = [similar.Match(*match) for match in prior.get("similar", [])]
        return CreatedTask(get_task(uow, prior["task_id"]), tuple(_similar_views(uow, found)))

    return idempotency.run_keyed(
        uow,
        actor,
        "createTask",
        cmd.idempotency_key,
        idempotency.request_of(cmd),
        authorize=lambda: require_full_credential(actor),
        replay=lambda _, prior: replay(prior),
        execute=lambda _: execute(),
        receipt=lambda made: {
            "task_id": made.task.id,
            "similar": [
                [s.task.id, s.relevance, s.shared_words, s.query_words] for s in made.similar
            ],
        },
    )


@dataclass(frozen=True, slots=True)
class TaskFields:
    """A task's descriptive fields, checked (`clean_fields`)."""

    kind: TaskKind
    title: str
    outcome: str
    criteria: tuple[str, ...]
    priority: int


def clean_fields(
    kind: str, title: str, outcome: str, criteria: Sequence[str], priority: int
) -> TaskFields:
    """A new task's fields with createTask's limits, or refused naming the field."""
    cleaned_kind = clean_choice("kind", kind, TaskKind)
    cleaned_title = clean_label("title", title, MAX_TITLE)
    cleaned = clean_list(
        "acceptanceCriteria", criteria, max_items=MAX_CRITERIA, max_length=MAX_CRITERION
    )
    if cleaned_kind in KINDS_NEEDING_CRITERIA and not cleaned:
        raise ValidationFailed("acceptanceCriteria", f"a {cleaned_kind} task needs at least one")
    return TaskFields(
        kind=cleaned_kind,
        title=cleaned_title,
        outcome=clean_text("outcome", outcome, MAX_OUTCOME, required=False),
        criteria=_same(criteria, cleaned),
        priority=bounded_int("priority", priority, *PRIORITY_RANGE),
    )


def _same(given: Sequence[str], cleaned: Sequence[str]) -> tuple[str, ...]:
    """`cleaned` as a tuple: `given` itself when it is one and cleaning changed nothing
    (an import holds 100,000 of them at once; a copy each would be memory for nothing)."""
    if isinstance(given, tuple) and len(given) == len(cleaned) and all(
        a is b for a, b in zip(given, cleaned, strict=True)
    ):
        return given
    return tuple(cleaned)


def clean_labels(field: str, labels: Sequence[str]) -> tuple[str, ...]:
    """Labels: short one-line words, at most `MAX_LABELS`, each once, sorted."""
    if len(labels) > MAX_LABELS:
        raise ValidationFailed(field, f"must have at most {MAX_LABELS} items")
    try:
        cleaned = sorted({clean_label(field, label, MAX_LABEL) for label in labels})
    except ValidationFailed:
        # Named by its position (found again only now: an import checks 100,000 of them).
        cleaned = sorted({
            clean_label(f"{field}[{index}]", label, MAX_LABEL)
            for index, label in enumerate(labels)
        })
    return _same(labels, cleaned)


def _create(uow: UnitOfWork, actor: Actor, cmd: NewTask) -> TaskView:
    projects.ensure_project_exists(uow, cmd.project_id)
    fields = clean_fields(
        cmd.kind, cmd.title, cmd.outcome, cmd.acceptance_criteria, cmd.priority
    )
    kind, title, outcome, priority = fields.kind, fields.title, fields.outcome, fields.priority
    criteria = list(fields.criteria)
    source_system = clean_optional("sourceSystem", cmd.source_system, 100)
    source_id = clean_optional("sourceId", cmd.source_id, 200)
    if (source_system is None) != (source_id is None):
        raise ValidationFailed("sourceId", "sourceId and sourceSystem go together")
    if source_id is not None:
        existing = uow.session.scalar(
            select(Task.id).where(
                Task.project_id == cmd.project_id,
                Task.source_system == source_system,
                Task.source_id == source_id,
            )
        )
        if existing is not None:
            raise Conflict(f"{source_system} item {source_id!r} is already task {existing}")
    # A new task: the parent and prerequisites it joins are locked where they are decided on.
    uow.no_lock_needed("a new task, which no other operation can reach yet")
    now = uow.now()
    task = Task(
        id=new_id("tsk"),
        project_id=cmd.project_id,
        kind=kind,
        title=title,
        outcome=outcome,
        priority=priority,
        state=TaskState.OPEN,
        parent_id=None,
        required=cmd.required,
        source_system=source_system,
        source_id=source_id,
        revision=1,
        criteria_revision=1,
        generation=0,
        blocked_count=0,
        created_at=now,
        created_by=actor.principal_id,
        updated_at=now,
        search_text=similar.search_text_of(title, outcome, criteria),
    )
    uow.session.add(task)
    uow.session.flush()
    uow.session.add(
        TaskCriteria(
            task_id=task.id,
            revision=1,
            project_id=task.project_id,
            criteria=criteria,
            created_at=now,
            created_by=actor.principal_id,
        )
    )
    if cmd.parent_id is not None:
        dependencies.attach_to_parent(uow, task, cmd.parent_id)
    for prerequisite_id in dict.fromkeys(cmd.prerequisite_ids):
        dependencies.add_edge(uow, task, prerequisite_id, new_task=True)
    uow.session.flush()
    record_event(
        uow, WorkEvent.TASK_CREATED, task, by=actor, payload={"kind": task.kind, "title": title}
    )
    return task_view(uow, task)


@raises(NotFound, PermissionDenied, Conflict, InvalidTransition, ValidationFailed)
def edit_task(uow: UnitOfWork, actor: Actor, cmd: TaskEdit) -> TaskView:
    require_full_credential(actor)
    task = lock_task(uow, cmd.task_id)
    if cmd.expected_revision != task.revision:
        raise Conflict(
            f"task {task.id} is at revision {task.revision}, not {cmd.expected_revision}: "
            "re-read it and apply your edit again"
        )
    changed: list[str] = []
    if cmd.title is not None:
        task.title = clean_label("title", cmd.title, MAX_TITLE)
        changed.append("title")
    if cmd.outcome is not None:
        task.outcome = clean_text("outcome", cmd.outcome, MAX_OUTCOME, required=False)
        changed.append("outcome")
    if cmd.priority is not None:
        task.priority = bounded_int("priority", cmd.priority, *PRIORITY_RANGE)
        changed.append("priority")
    reason = clean_text("reason", cmd.reason or "", 2000, required=False) or None
    if cmd.required is not None and cmd.required != task.required:
        dependencies.change_requiredness(uow, actor, task, cmd.required, reason)
        changed.append("required")
    now = uow.now()
    criteria_now: list[str] | None = None  # the criteria after the edit, if it names them
    if cmd.acceptance_criteria is not None:
        criteria = criteria_now = clean_list(
            "acceptanceCriteria",
            cmd.acceptance_criteria,
            max_items=MAX_CRITERIA,
            max_length=MAX_CRITERION,
        )
        if task.kind in KINDS_NEEDING_CRITERIA and not criteria:
            raise ValidationFailed("acceptanceCriteria", f"a {task.kind} task needs at least one")
        if criteria != current_criteria(uow, task) and task.state in SUBMITTED_STATES:
            # Its submission was made against the current revision; new criteria would
            # let review and integration accept it against criteria it was not made for.
            raise InvalidTransition(
                f"task {task.id} is {task.state}: its submission is judged against criteria "
                f"revision {task.criteria_revision}; reject it in review (or let it finish) "
                "before changing the criteria"
            )
        if criteria != current_criteria(uow, task):
            # A new criteria revision: attempts keep the revision they acknowledged and
            # must reconcile explicitly before completing against the new one.
            task.criteria_revision += 1
            uow.session.add(
                TaskCriteria(
                    task_id=task.id,
                    revision=task.criteria_revision,
                    project_id=task.project_id,
                    criteria=criteria,
                    created_at=now,
                    created_by=actor.principal_id,
                )
            )
            changed.append("acceptanceCriteria")
    if not changed:
        raise ValidationFailed("input", "names nothing to change")
    task.revision += 1
    task.updated_at = now
    if task.subject_submission_id is None:
        task.search_text = similar.search_text_of(
            task.title,
            task.outcome,
            current_criteria(uow, task) if criteria_now is None else criteria_now,
        )
    uow.session.flush()
    record_event(
        uow,
        WorkEvent.TASK_EDITED,
        task,
        by=actor,
        payload={
            "revision": task.revision,
            "criteriaRevision": task.criteria_revision,
            "changed": changed,
            "reason": reason,
        },
    )
    return task_view(uow, task)


@raises(NotFound, PermissionDenied, InvalidTransition, ValidationFailed)
def close_task(
    uow: UnitOfWork,
    actor: Actor,
    *,
    task_id: str,
    reason: str,
    note: str = "",
    reopen_condition: str | None = None,
    related_task_id: str | None = None,
) -> TaskView:
    """Close with a durable reason; selection and imports consult it later."""
    require_full_credential(actor)
    cleaned = clean_choice("reason", reason, CloseReason)
    task = lock_task(uow, task_id)
    if task.state in (TaskState.DONE, TaskState.CLOSED):
        raise InvalidTransition(f"task {task.id} is already {task.state}")
    if task.current_attempt_id is not None:
        raise InvalidTransition(
            f"task {task.id} has a current attempt: relinquish or recover it before closing"
        )
    related = (
        None
        if related_task_id is None
        else require_task_in(uow, task.project_id, related_task_id, field="relatedTaskId")
    )
    close(uow, actor, task, cleaned, note, reopen_condition, related)
    return task_view(uow, task)


def close(
    uow: UnitOfWork,
    actor: Actor,
    task: Task,
    reason: CloseReason,
    note: str,
    reopen_condition: str | None,
    related: Task | None,
) -> None:
    """Close a locked task that is neither done, closed nor under an attempt: its reason
    checked, the link to the related task recorded, its worktrees freed, and, closed as
    COMPLETED, what waited for it released."""
    if reason == CloseReason.DEFERRED and not (reopen_condition or "").strip():
        raise ValidationFailed("reopenCondition", "a deferred task needs a reopen condition")
    if reason in (CloseReason.SUPERSEDED, CloseReason.DUPLICATE) and related is None:
        raise ValidationFailed("relatedTaskId", f"{reason} needs the task that replaces this one")
    if related is not None:
        if related.id == task.id:
            raise ValidationFailed("relatedTaskId", "a task cannot be related to itself")
        if reason == CloseReason.SUPERSEDED:
            _link(uow, actor, related, task, LinkKind.SUPERSEDES)
        else:
            _link(
                uow,
                actor,
                task,
                related,
                LinkKind.DUPLICATE_OF if reason == CloseReason.DUPLICATE else LinkKind.RELATED,
            )
    task.state = TaskState.CLOSED
    task.close_reason = reason
    task.close_note = clean_text("note", note, MAX_CLOSE_NOTE, required=False)
    task.reopen_condition = (
        clean_text("reopenCondition", reopen_condition or "", MAX_REOPEN_CONDITION, required=False)
        or None
    )
    task.updated_at = uow.now()
    uow.session.flush()
    release_worktrees(uow, task, reason=f"task closed: {reason}", actor_id=actor.principal_id)
    if reason == CloseReason.COMPLETED:
        # Done outside hub: what waited for it may go on, as after DONE.
        dependencies.on_task_completed(uow, task)
    record_event(
        uow, WorkEvent.TASK_CLOSED, task, by=actor,
        payload={"reason": reason, "note": task.close_note or ""},
    )


@raises(NotFound, PermissionDenied, InvalidTransition, ValidationFailed)
def reopen_task(uow: UnitOfWork, actor: Actor, *, task_id: str, reason: str) -> TaskView:
    """Reopen a closed task. The close reason and note go; a deferred task's reopen
    condition stays, so whoever picks the task up sees what it waited for (it goes with
    the next close, which sets its own); the event keeps all three and the reason."""
    require_full_credential(actor)
    task = lock_task(uow, task_id)
    if task.state != TaskState.CLOSED:
        raise InvalidTransition(f"only a closed task can be reopened; {task.id} is {task.state}")
    reason = clean_text("reason", reason, 2000)
    if task.close_reason == CloseReason.COMPLETED:
        dependencies.on_task_reopened(uow, task)
    task.state = TaskState.OPEN
    task.updated_at = uow.now()
    record_event(
        uow,
        WorkEvent.TASK_REOPENED,
        task,
        by=actor,
        payload={
            "reason": reason,
            "previousCloseReason": task.close_reason,
            "previousCloseNote": task.close_note,
            "reopenCondition": task.reopen_condition,
        },
    )
    task.close_reason = None
    task.close_note = None
    return task_view(uow, task)


@raises(NotFound, PermissionDenied, ValidationFailed)
def link_tasks(
    uow: UnitOfWork, actor: Actor, *, task_id: str, other_id: str, kind: str
) -> TaskView:
    require_full_credential(actor)
    link = clean_choice("kind", kind, LinkKind)
    task = lock_task(uow, task_id)
    other = require_task_in(uow, task.project_id, other_id, field="otherTaskId")
    if other.id == task.id:
        raise ValidationFailed("otherTaskId", "a task cannot be linked to itself")
    _link(uow, actor, task, other, link)
    return task_view(uow, task)


def _link(uow: UnitOfWork, actor: Actor, task: Task, other: Task, kind: LinkKind) -> None:
    if uow.session.get(TaskLink, (task.id, other.id, kind)) is not None:
        return
    uow.session.add(
        TaskLink(
            task_id=task.id,
            other_id=other.id,
            kind=kind,
            project_id=task.project_id,
            created_at=uow.now(),
            created_by=actor.principal_id,
        )
    )
    uow.session.flush()
    record_event(
        uow, WorkEvent.TASK_LINKED, task, by=actor, payload={"other": other.id, "kind": kind}
    )


# --- reading --------------------------------------------------------------------------


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
    return _similar_views(uow, similar.matches(uow, project_id, terms, limit=limit))


def _similar_to(uow: UnitOfWork, task: TaskView) -> list[SimilarTask]:
    """A new task's close matches: the project's tasks most like its title."""
    terms = query_terms(task.title)[:MAX_TERMS]
    found = similar.matches(uow, task.project_id, terms, limit=SIMILAR_ON_CREATE, exclude=task.id)
    return _similar_views(uow, found)


def _similar_views(uow: UnitOfWork, found: Sequence[similar.Match]) -> list[SimilarTask]:
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
