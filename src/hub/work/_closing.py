"""Closing a task with a durable reason, reopening it, and linking tasks.

A close as superseded or duplicate records its link to the task that replaces this one,
so the links between tasks are made here too (`link_tasks`).
"""

from __future__ import annotations

from hub.errors import InvalidTransition, NotFound, PermissionDenied, ValidationFailed, raises
from hub.events.service import record_event
from hub.identity.views import Actor, require_full_credential
from hub.inputs import clean_choice, clean_text
from hub.storage.unit_of_work import UnitOfWork
from hub.work import _dependencies as dependencies
from hub.work._lifecycle import release_worktrees
from hub.work._reading import require_task_in, task_view
from hub.work._rows import lock_task
from hub.work.tables import Task, TaskLink
from hub.work.views import TaskView
from hub.work.vocabulary import CloseReason, LinkKind, TaskState, WorkEvent

# closeTask's limits (imports check every closed item against the same).
MAX_CLOSE_NOTE = 10_000
MAX_REOPEN_CONDITION = 2000


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
