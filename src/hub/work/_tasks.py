"""Tasks: creation and edits with lost-update protection.

Generic edits never touch `state`, `generation` or `current_attempt_id`: those move
only through claims, submissions and recovery (docs/design.md, "Tasks, attempts,
leases and generations"). Closing, reopening and linking live in `_closing`, reading
tasks in `_reading`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

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
from hub.projects import service as projects
from hub.storage.fulltext import MAX_TERMS, query_terms
from hub.storage.unit_of_work import UnitOfWork
from hub.work import _dependencies as dependencies
from hub.work import _similar as similar
from hub.work._reading import current_criteria, get_task, similar_views, task_view
from hub.work._rows import lock_task
from hub.work.tables import Task, TaskCriteria
from hub.work.views import CreatedTask, SimilarTask, TaskView
from hub.work.vocabulary import TaskKind, TaskState, WorkEvent

# Kinds whose completion is judged against their own acceptance criteria.
KINDS_NEEDING_CRITERIA = (TaskKind.IMPLEMENTATION, TaskKind.GENERAL, TaskKind.OBJECTIVE)
# A submission of the task is in review or integration.
SUBMITTED_STATES = (TaskState.AWAITING_REVIEW, TaskState.AWAITING_INTEGRATION)
# The close matches a created task is answered with (informational, docs/design.md,
# "Duplicate work").
SIMILAR_ON_CREATE = 5
# createTask's limits (imports check every item against the same).
MAX_TITLE = 300
MAX_OUTCOME = 20_000
MAX_CRITERIA = 50
MAX_CRITERION = 2000
PRIORITY_RANGE = (-1000, 1000)
MAX_LABELS = 20
MAX_LABEL = 100


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
        return CreatedTask(get_task(uow, prior["task_id"]), tuple(similar_views(uow, found)))

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


def _similar_to(uow: UnitOfWork, task: TaskView) -> list[SimilarTask]:
    """A new task's close matches: the project's tasks most like its title."""
    terms = query_terms(task.title)[:MAX_TERMS]
    found = similar.matches(uow, task.project_id, terms, limit=SIMILAR_ON_CREATE, exclude=task.id)
    return similar_views(uow, found)
