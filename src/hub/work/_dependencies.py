"""Prerequisite edges and parent/child links, and the `blocked_count` they maintain.

Edges stay acyclic on both backends even when two clients add edges concurrently
that together would close a cycle: edge changes are serialized per project (a
transaction-scoped advisory lock on PostgreSQL; SQLite's single writer already does
it) and the cycle check runs under that lock.

`blocked_count` = incomplete prerequisites + (for a parent) incomplete required
children. It changes with every edge change and every completion, so finding ready
work is an index range scan, never a graph walk.
"""

from __future__ import annotations

from sqlalchemy import bindparam, select, text

from hub.errors import InvalidTransition, NotFound, PermissionDenied, ValidationFailed
from hub.events.service import (
    record_event,
)
from hub.identity.views import (
    Actor,
    require_full_credential,
)
from hub.inputs import clean_text
from hub.storage.unit_of_work import UnitOfWork
from hub.work._rows import is_complete, lock_task, require_task
from hub.work.errors import CycleRefused
from hub.work.tables import Task, TaskPrerequisite
from hub.work.vocabulary import TaskKind, TaskState, WorkEvent

_REACHES = text(
    """
    WITH RECURSIVE reach(id) AS (
        SELECT prerequisite_id FROM task_prerequisites WHERE task_id = :start
        UNION
        SELECT p.prerequisite_id FROM task_prerequisites p JOIN reach r ON p.task_id = r.id
    )
    SELECT 1 FROM reach WHERE id = :target LIMIT 1
    """
)


def add_prerequisite(
    uow: UnitOfWork,
    actor: Actor,
    *,
    task_id: str,
    prerequisite_id: str,
    override_reason: str | None = None,
) -> Task:
    task = require_task(uow, task_id)
    serialize_edges(uow, task.project_id)
    task = lock_task(uow, task.id)
    _guard_active_work(uow, actor, task, override_reason, "adding a prerequisite")
    add_edge(uow, task, prerequisite_id, new_task=False)
    record_event(
        uow,
        WorkEvent.TASK_PREREQUISITE_ADDED,
        task,
        by=actor,
        payload={"prerequisite": prerequisite_id, "override": override_reason},
    )
    return task


def remove_prerequisite(
    uow: UnitOfWork,
    actor: Actor,
    *,
    task_id: str,
    prerequisite_id: str,
    override_reason: str | None = None,
) -> Task:
    task = require_task(uow, task_id)
    serialize_edges(uow, task.project_id)
    task = lock_task(uow, task.id)
    edge = uow.session.get(TaskPrerequisite, (task.id, prerequisite_id))
    if edge is None:
        raise NotFound("prerequisite edge", f"{task.id} -> {prerequisite_id}")
    _guard_active_work(uow, actor, task, override_reason, "removing a prerequisite")
    prerequisite = lock_task(uow, prerequisite_id)
    uow.session.delete(edge)
    if not is_complete(prerequisite):
        task.blocked_count -= 1
    uow.session.flush()
    record_event(
        uow,
        WorkEvent.TASK_PREREQUISITE_REMOVED,
        task,
        by=actor,
        payload={"prerequisite": prerequisite_id, "override": override_reason},
    )
    return task


def add_edge(uow: UnitOfWork, task: Task, prerequisite_id: str, *, new_task: bool) -> None:
    """Record that `task` needs `prerequisite_id` complete first (same project, no cycle)."""
    prerequisite = uow.session.get(Task, prerequisite_id)
    if prerequisite is None:
        raise NotFound("task", prerequisite_id)
    if prerequisite.project_id != task.project_id:
        raise ValidationFailed(
            "prerequisiteIds", f"prerequisite {prerequisite_id} belongs to another project"
        )
    if prerequisite.id == task.id:
        raise ValidationFailed("prerequisiteId", "a task cannot be its own prerequisite")
    if uow.session.get(TaskPrerequisite, (task.id, prerequisite.id)) is not None:
        return
    if not new_task:
        serialize_edges(uow, task.project_id)
        cycle = uow.session.execute(_REACHES, {"start": prerequisite.id, "target": task.id}).first()
        if cycle is not None:
            raise CycleRefused(task.id, prerequisite.id)
    uow.session.add(
        TaskPrerequisite(
            task_id=task.id,
            prerequisite_id=prerequisite.id,
            project_id=task.project_id,
            created_at=uow.now(),
        )
    )
    if not is_complete(prerequisite):
        task.blocked_count += 1
    uow.session.flush()


def attach_to_parent(uow: UnitOfWork, child: Task, parent_id: str) -> None:
    parent = uow.session.get(Task, parent_id)
    if parent is None:
        raise NotFound("task", parent_id)
    if parent.project_id != child.project_id:
        raise ValidationFailed("parentId", f"parent {parent_id} belongs to another project")
    if parent.kind != TaskKind.OBJECTIVE:
        raise ValidationFailed(
            "parentId", f"parent {parent_id} is a {parent.kind}, not an OBJECTIVE"
        )
    parent = lock_task(uow, parent.id)
    if parent.state in (TaskState.DONE, TaskState.CLOSED):
        raise InvalidTransition(f"parent {parent.id} is {parent.state}; it takes no new children")
    if parent.current_attempt_id is not None:
        raise InvalidTransition(
            f"parent {parent.id} has a current attempt; a new required child would change "
            "what it is being completed against"
        )
    child.parent_id = parent.id
    if child.required:
        parent.blocked_count += 1
    uow.session.flush()


def change_requiredness(
    uow: UnitOfWork, actor: Actor, child: Task, required: bool, reason: str | None
) -> None:
    """Whether a child is required for its parent. A closed child that was never done
    keeps a parent blocked; only an operator, saying why, lets the parent go without it."""
    if child.parent_id is not None and not is_complete(child):
        if child.state == TaskState.CLOSED and not required:
            if not actor.is_operator:
                raise PermissionDenied(
                    f"child {child.id} was closed without being done: only an operator may "
                    "drop it from its parent's requirements"
                )
            if not (reason or "").strip():
                raise ValidationFailed(
                    "reason", "dropping a closed child's requirement needs a reason"
                )
        parent = lock_task(uow, child.parent_id)
        if parent.current_attempt_id is not None:
            raise InvalidTransition(f"parent {parent.id} has a current attempt")
        if parent.state in (TaskState.DONE, TaskState.CLOSED):
            raise InvalidTransition(f"parent {parent.id} is {parent.state}")
        parent.blocked_count += 1 if required else -1
    child.required = required


_DEPENDENTS = (
    select(Task)
    .join(TaskPrerequisite, TaskPrerequisite.task_id == Task.id)
    .where(TaskPrerequisite.prerequisite_id == bindparam("task_id"))
    .order_by(Task.id)
    .with_for_update()
)


def on_task_completed(uow: UnitOfWork, task: Task) -> None:
    """A completed task unblocks its dependents and counts toward its parent."""
    dependents = uow.session.scalars(_DEPENDENTS, {"task_id": task.id}).all()
    for dependent in dependents:
        dependent.blocked_count -= 1
    _release_parent(uow, task)


def on_task_reopened(uow: UnitOfWork, task: Task) -> None:
    """A task that was complete (closed as COMPLETED) and is open again keeps its
    dependents and its parent waiting again: `on_task_completed` undone."""
    dependents = uow.session.scalars(_DEPENDENTS, {"task_id": task.id}).all()
    for dependent in dependents:
        dependent.blocked_count += 1
    if task.parent_id is not None and task.required:
        parent = lock_task(uow, task.parent_id)
        parent.blocked_count += 1


def _release_parent(uow: UnitOfWork, task: Task) -> None:
    # Only completion counts toward the parent (done, or closed as COMPLETED). A required
    # child closed without being done (rejected, deferred, duplicate, superseded) keeps
    # its parent blocked, as a closed prerequisite keeps its dependents blocked: what
    # they needed did not happen. Re-plan explicitly: reopen it, or an operator drops the
    # requirement with a reason.
    if task.parent_id is not None and task.required:
        parent = lock_task(uow, task.parent_id)
        parent.blocked_count -= 1


def _guard_active_work(
    uow: UnitOfWork, actor: Actor, task: Task, override_reason: str | None, change: str
) -> None:
    """Refuse to change what an active attempt was made eligible under, unless an operator
    overrides it explicitly (the override is recorded in the event)."""
    require_full_credential(actor)
    if task.current_attempt_id is None:
        return
    if override_reason is None:
        raise InvalidTransition(
            f"{change} of task {task.id} would change the prerequisites its active attempt "
            "was made eligible under; an operator may override with a reason"
        )
    if not actor.is_operator:
        raise PermissionDenied("only an operator may override the prerequisites of active work")
    clean_text("overrideReason", override_reason, 2000)


def serialize_edges(uow: UnitOfWork, project_id: str) -> None:
    if uow.dialect == "postgresql" and not uow.pending.get(f"edges-locked:{project_id}"):
        uow.session.execute(
            text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))"),
            {"key": f"hub:edges:{project_id}"},
        )
        uow.pending[f"edges-locked:{project_id}"] = True
