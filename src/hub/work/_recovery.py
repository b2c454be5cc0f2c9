"""Recovery and revocation: what happens to a task whose attempt's lease ended.

An expired attempt's task is a recovery candidate (`claims.claim_recovery` takes it
over); where the project's recovery mode is OPERATOR_RELEASE an operator releases it
first (`release_task`). An operator may also end a live lease at once
(`revoke_attempt`). A recovery attempt records its disposition before anything else;
the late agent may still leave a note on its finished attempt. See docs/workflow.md.
"""

from __future__ import annotations

from sqlalchemy import select

from hub.errors import (
    InvalidTransition,
    NotFound,
    PermissionDenied,
    ValidationFailed,
    raises,
)
from hub.events.service import (
    record_event,
    task_of,
)
from hub.identity.views import (
    Actor,
)
from hub.ids import new_id
from hub.inputs import clean_choice, clean_text
from hub.storage.unit_of_work import UnitOfWork
from hub.work._authority import HOLDING, attempt_result, hold, view_of
from hub.work._lifecycle import release_worktrees
from hub.work._reading import task_view
from hub.work._rows import lock_held, lock_task, require_attempt, require_task
from hub.work.tables import Attempt, AttemptNote, Checkpoint, Submission, Task, Worktree
from hub.work.views import (
    AttemptResult,
    NoteView,
    RecoveryPacket,
    checkpoint_view,
    submission_view,
    worktree_view,
)
from hub.work.vocabulary import (
    AttemptKind,
    AttemptNoteKind,
    AttemptState,
    RecoveryDisposition,
    TaskState,
    WorkEvent,
)


def release_task(uow: UnitOfWork, actor: Actor, *, task_id: str, reason: str) -> Task:
    """An operator releases an expired task for recovery (recovery mode OPERATOR_RELEASE)."""
    if not actor.is_operator or actor.is_reporter:
        raise PermissionDenied("only an operator releases a task for recovery")
    reason = clean_text("reason", reason, 2000)
    task = lock_task(uow, task_id)
    now = uow.now()
    current = uow.session.get(Attempt, task.current_attempt_id) if task.current_attempt_id else None
    if current is None or task.state != TaskState.IN_PROGRESS:
        raise InvalidTransition(f"task {task.id} is {task.state}, nothing to release")
    if current.lease_valid_at(now):
        raise InvalidTransition(
            f"attempt {current.id} still holds a valid lease until {current.expires_at.isoformat()}"
        )
    if task.recovery_released_generation == task.generation:
        # Already released at this generation (a form posted twice, a retry): the
        # release stands, and it is recorded once.
        return task
    task.recovery_released_generation = task.generation
    record_event(
        uow,
        WorkEvent.TASK_RELEASED_FOR_RECOVERY,
        task,
        by=actor,
        payload={"reason": reason, "generation": task.generation},
    )
    return task


def revoke_attempt(uow: UnitOfWork, actor: Actor, *, attempt_id: str, reason: str) -> Task:
    """An operator ends a live lease now: the attempt's generation is fenced (every later
    change by it is refused as stale) and the task becomes a recovery candidate, released
    for a recovery claim even where the project requires an operator's release."""
    if not actor.is_operator or actor.is_reporter:
        raise PermissionDenied("only an operator revokes an attempt's lease")
    reason = clean_text("reason", reason, 2000)
    task, attempt = lock_held(uow, attempt_id)
    now = uow.now()
    if attempt.state != AttemptState.ACTIVE or task.current_attempt_id != attempt.id:
        raise InvalidTransition(f"attempt {attempt.id} is {attempt.state}, not the live attempt")
    if not attempt.lease_valid_at(now):
        raise InvalidTransition(
            f"the lease of attempt {attempt.id} already ended at "
            f"{attempt.expires_at.isoformat()}: the task is a recovery candidate"
        )
    attempt.expires_at = now
    attempt.revoked_at = now
    attempt.revoked_by = actor.principal_id
    attempt.revoke_reason = reason
    # A new generation fences the revoked attempt even if its clock or ours were wrong.
    task.generation += 1
    task.recovery_released_generation = task.generation
    task.updated_at = now
    uow.session.flush()
    record_event(
        uow,
        WorkEvent.ATTEMPT_REVOKED,
        task,
        by=actor,
        payload={"attempt": attempt.id, "generation": task.generation, "reason": reason},
    )
    return task


@raises(*HOLDING, ValidationFailed)
def record_recovery_disposition(
    uow: UnitOfWork,
    actor: Actor,
    *,
    attempt_id: str,
    generation: int,
    disposition: str,
    reason: str = "",
) -> AttemptResult:
    held = hold(uow, actor, attempt_id, generation, needs_disposition=False)
    attempt = held.attempt
    if attempt.kind != AttemptKind.RECOVERY:
        raise InvalidTransition(f"attempt {attempt.id} is not a recovery attempt")
    chosen = clean_choice("disposition", disposition, RecoveryDisposition)
    if attempt.disposition not in (None, RecoveryDisposition.BLOCKED):
        raise InvalidTransition(
            f"attempt {attempt.id} already recorded disposition {attempt.disposition}"
        )
    attempt.disposition = chosen
    attempt.disposition_reason = clean_text(
        "reason",
        reason,
        10_000,
        required=chosen in (RecoveryDisposition.RESTART, RecoveryDisposition.BLOCKED),
    )
    attempt.last_progress_at = held.now
    uow.session.flush()
    if chosen == RecoveryDisposition.RESTART:
        # Starting over leaves the saved worktree behind: it is free for other work, and
        # this attempt registers the worktree it restarts in.
        release_worktrees(
            uow,
            held.task,
            reason=f"recovery restart: {attempt.disposition_reason}",
            actor_id=actor.principal_id,
        )
    record_event(
        uow,
        WorkEvent.RECOVERY_DISPOSITION,
        held.task,
        by=actor,
        payload={"attempt": attempt.id, "disposition": chosen},
    )
    return attempt_result(uow, held)


@raises(NotFound, PermissionDenied, InvalidTransition, ValidationFailed)
def add_recovery_note(uow: UnitOfWork, actor: Actor, *, attempt_id: str, note: str) -> NoteView:
    """A late agent's note on its own finished attempt. It completes nothing, extends no
    lease and unblocks nothing: it is history for whoever recovers the task."""
    attempt = require_attempt(uow, attempt_id)
    if (
        actor.is_reporter
        or attempt.principal_id != actor.principal_id
        or (actor.session_id is not None and actor.session_id != attempt.session_id)
    ):
        raise PermissionDenied(f"only the session that ran attempt {attempt.id} may add its note")
    # Locked: whether the lease still holds is judged against the task's current state.
    _, attempt = lock_held(uow, attempt_id)
    now = uow.now()
    if attempt.state == AttemptState.ACTIVE and attempt.lease_valid_at(now):
        raise InvalidTransition(
            f"attempt {attempt.id} still holds its lease: record a checkpoint instead"
        )
    row = AttemptNote(
        id=new_id("note"),
        project_id=attempt.project_id,
        attempt_id=attempt.id,
        kind=AttemptNoteKind.RECOVERY_NOTE,
        body=clean_text("note", note, 10_000),
        detail={},
        author_id=actor.principal_id,
        created_at=now,
    )
    uow.session.add(row)
    uow.session.flush()
    record_event(
        uow,
        WorkEvent.ATTEMPT_RECOVERY_NOTE,
        task_of(attempt),
        by=actor,
        payload={"attempt": attempt.id, "note": row.id},
    )
    return note_view(row)


def recovery_packet(uow: UnitOfWork, task_id: str) -> RecoveryPacket:
    """What a recovering agent needs to decide: what was delivered, what is saved where."""
    task = require_task(uow, task_id)
    attempts = uow.session.scalars(
        select(Attempt).where(Attempt.task_id == task.id).order_by(Attempt.generation)
    ).all()
    checkpoints = uow.session.scalars(
        select(Checkpoint).where(Checkpoint.task_id == task.id).order_by(Checkpoint.id)
    ).all()
    submissions = uow.session.scalars(
        select(Submission).where(Submission.task_id == task.id).order_by(Submission.id)
    ).all()
    worktrees = uow.session.scalars(
        select(Worktree).where(Worktree.task_id == task.id).order_by(Worktree.id)
    ).all()
    notes = (
        uow.session.scalars(
            select(AttemptNote)
            .where(AttemptNote.attempt_id.in_([a.id for a in attempts]))
            .order_by(AttemptNote.id)
        ).all()
        if attempts
        else []
    )
    published = [c.revision for c in checkpoints if c.published and c.revision]
    published += [s.candidate_revision for s in submissions if s.candidate_revision]
    return RecoveryPacket(
        task=task_view(uow, task),
        attempts=tuple(view_of(uow, a, task) for a in attempts),
        checkpoints=tuple(checkpoint_view(c) for c in checkpoints),
        submissions=tuple(submission_view(s) for s in submissions),
        worktrees=tuple(worktree_view(w) for w in worktrees),
        published_revisions=tuple(dict.fromkeys(published)),
        notes=tuple(note_view(n) for n in notes),
    )


def note_view(row: AttemptNote) -> NoteView:
    return NoteView(
        id=row.id,
        attempt_id=row.attempt_id,
        kind=row.kind,
        body=row.body,
        author_id=row.author_id,
        created_at=row.created_at,
    )
