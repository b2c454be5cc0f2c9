"""Many existing tasks changed by one operation (an import).

`edit_tasks` changes existing tasks the way `editTask`, `closeTask` and the prerequisite
mutations do, each rule applied by the same code (criteria revisions, cycle checks under
the project's edge lock, `blocked_count`, events), with the rows locked together first.
An import changes few tasks at a time, so this stays row by row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, insert, select

from hub.errors import Conflict, InvalidTransition, NotFound, ValidationFailed
from hub.events.service import record_event
from hub.identity.views import Actor, require_full_credential
from hub.storage.base import table_of
from hub.storage.unit_of_work import UnitOfWork
from hub.work import _dependencies as dependencies
from hub.work import _similar as similar
from hub.work._briefs import lock_existing
from hub.work._bulk import Closure
from hub.work._closing import close
from hub.work._reading import current_criteria
from hub.work._rows import is_complete, lock_task
from hub.work._tasks import (
    KINDS_NEEDING_CRITERIA,
    SUBMITTED_STATES,
)
from hub.work.errors import CycleRefused
from hub.work.tables import Task, TaskCriteria, TaskLabel, TaskPrerequisite
from hub.work.vocabulary import TaskState, WorkEvent

_LABELS = table_of(TaskLabel)


@dataclass(frozen=True, slots=True)
class PlannedEdit:
    """A change of an existing task, under `expected_revision` as `editTask`'s: the
    fields given (None: unchanged) replace the task's, edges are added and removed, the
    parent moved (`move_parent`: to `parent`, None for none), and the task closed."""

    task_id: str
    expected_revision: int
    title: str | None = None
    outcome: str | None = None
    priority: int | None = None
    criteria: tuple[str, ...] | None = None
    labels: tuple[str, ...] | None = None
    add_prerequisites: tuple[str, ...] = ()
    remove_prerequisites: tuple[str, ...] = ()
    move_parent: bool = False
    parent: str | None = None
    closed: Closure | None = None


def edit_tasks(
    uow: UnitOfWork,
    actor: Actor,
    project_id: str,
    edits: Sequence[PlannedEdit],
    *,
    payload: Mapping[str, Any] | None = None,
) -> dict[str, int]:
    """Apply every edit (all or nothing); each task's revision afterwards. `payload` is
    added to each `task.edited` event's."""
    require_full_credential(actor)
    if not edits:
        return {}
    dependencies.serialize_edges(uow, project_id)
    rows = lock_existing(uow, project_id, (edit.task_id for edit in edits))
    extra = dict(payload or {})
    revisions: dict[str, int] = {}
    for edit in edits:
        task = rows[edit.task_id]
        _edit(uow, actor, task, edit, extra)
        revisions[task.id] = task.revision
    uow.session.flush()
    return revisions


def _edit(
    uow: UnitOfWork, actor: Actor, task: Task, edit: PlannedEdit, extra: dict[str, Any]
) -> None:
    if edit.expected_revision != task.revision:
        raise Conflict(
            f"task {task.id} is at revision {task.revision}, not {edit.expected_revision}"
        )
    if (
        task.current_attempt_id is not None
        or task.state in SUBMITTED_STATES
        or task.state in (TaskState.DONE, TaskState.CLOSED)
    ):
        raise InvalidTransition(f"task {task.id} is {task.state}: it is not changed in bulk")
    now = uow.now()
    changed: list[str] = []
    for name in ("title", "outcome", "priority"):
        value = getattr(edit, name)
        if value is not None and value != getattr(task, name):
            setattr(task, name, value)
            changed.append(name)
    if edit.criteria is not None and list(edit.criteria) != current_criteria(uow, task):
        if task.kind in KINDS_NEEDING_CRITERIA and not edit.criteria:
            raise ValidationFailed("acceptanceCriteria", f"a {task.kind} task needs at least one")
        task.criteria_revision += 1
        uow.session.add(
            TaskCriteria(
                task_id=task.id,
                revision=task.criteria_revision,
                project_id=task.project_id,
                criteria=list(edit.criteria),
                created_at=now,
                created_by=actor.principal_id,
            )
        )
        changed.append("acceptanceCriteria")
    if edit.labels is not None and _replace_labels(uow, task, edit.labels):
        changed.append("labels")
    for prerequisite_id in edit.remove_prerequisites:
        _remove_edge(uow, actor, task, prerequisite_id)
    for prerequisite_id in edit.add_prerequisites:
        dependencies.add_edge(uow, task, prerequisite_id, new_task=False)
        record_event(
            uow, WorkEvent.TASK_PREREQUISITE_ADDED, task, by=actor,
            payload={"prerequisite": prerequisite_id, "override": None},
        )  # fmt: skip
    if edit.move_parent and edit.parent != task.parent_id:
        _move(uow, task, edit.parent)
        changed.append("parent")
    if changed:
        task.revision += 1
        task.updated_at = now
        if {"title", "outcome", "acceptanceCriteria"} & set(changed):
            criteria = current_criteria(uow, task) if edit.criteria is None else edit.criteria
            task.search_text = similar.search_text_of(task.title, task.outcome, list(criteria))
        uow.session.flush()
        record_event(
            uow, WorkEvent.TASK_EDITED, task, by=actor,
            payload={"revision": task.revision, "criteriaRevision": task.criteria_revision,
                     "changed": changed, "reason": None, **extra},
        )  # fmt: skip
    if edit.closed is not None:
        related = edit.closed.related
        if isinstance(related, int):
            raise ValueError("an edit's closure names its related task by id")
        other = None if related is None else lock_existing(uow, task.project_id, [related])[related]
        close(
            uow, actor, task, edit.closed.reason, edit.closed.note,
            edit.closed.reopen_condition, other,
        )  # fmt: skip


def _replace_labels(uow: UnitOfWork, task: Task, labels: Sequence[str]) -> bool:
    current = set(uow.session.scalars(select(TaskLabel.label).where(TaskLabel.task_id == task.id)))
    wanted = set(labels)
    if current == wanted:
        return False
    gone = current - wanted
    if gone:
        uow.session.execute(
            delete(_LABELS).where(_LABELS.c.task_id == task.id, _LABELS.c.label.in_(gone))
        )
    added = wanted - current
    if added:
        uow.session.execute(
            insert(_LABELS),
            [{"task_id": task.id, "label": label, "project_id": task.project_id}
             for label in sorted(added)],
        )  # fmt: skip
    return True


def _remove_edge(uow: UnitOfWork, actor: Actor, task: Task, prerequisite_id: str) -> None:
    edge = uow.session.get(TaskPrerequisite, (task.id, prerequisite_id))
    if edge is None:
        raise NotFound("prerequisite edge", f"{task.id} -> {prerequisite_id}")
    prerequisite = lock_task(uow, prerequisite_id)
    uow.session.delete(edge)
    if not is_complete(prerequisite):
        task.blocked_count -= 1
    uow.session.flush()
    record_event(
        uow, WorkEvent.TASK_PREREQUISITE_REMOVED, task, by=actor,
        payload={"prerequisite": prerequisite_id, "override": None},
    )  # fmt: skip


def _move(uow: UnitOfWork, task: Task, parent_id: str | None) -> None:
    """Move a task (not complete, not under an attempt) to another parent, or to none."""
    if parent_id is not None:
        ancestor: str | None = parent_id
        while ancestor is not None:
            if ancestor == task.id:
                raise CycleRefused(parent_id, task.id)
            ancestor = uow.session.scalar(select(Task.parent_id).where(Task.id == ancestor))
    if task.parent_id is not None:
        old = lock_task(uow, task.parent_id)
        if old.current_attempt_id is not None:
            raise InvalidTransition(f"parent {old.id} has a current attempt")
        if task.required:
            old.blocked_count -= 1
        task.parent_id = None
    if parent_id is not None:
        dependencies.attach_to_parent(uow, task, parent_id)
    uow.session.flush()
