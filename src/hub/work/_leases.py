"""Holding a lease: renewing it, recording progress, giving the task back, and what the
harness reports about the session (docs/workflow.md, "Leases and attempts").

A renewal never resurrects an expired attempt; a reporter renews within its watch window
only. Relinquishing ends the attempt and returns the task to ready work; its checkpoints
stay as history for whoever claims it next.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select

from hub.errors import (
    PermissionDenied,
    ValidationFailed,
    raises,
)
from hub.events.service import (
    record_event,
)
from hub.idempotency import service as idempotency
from hub.identity import service as identity
from hub.identity.views import Actor
from hub.ids import new_id
from hub.inputs import clean_branch, clean_choice, clean_revision, clean_text
from hub.storage.row_writes import update_row
from hub.storage.unit_of_work import UnitOfWork
from hub.work._authority import (
    HOLDING,
    Held,
    attempt_result,
    check_authority,
    end_held_attempt,
    find_attempt,
    view_of,
)
from hub.work._rows import has_delivery, require_attempt, require_task
from hub.work.tables import Attempt, AttemptNote, Checkpoint, Task
from hub.work.views import AttemptResult, AttemptView, checkpoint_view
from hub.work.vocabulary import AdapterEvent, AttemptNoteKind, AttemptState, TaskState, WorkEvent


@dataclass(frozen=True)
class AdapterEventResult:
    session: identity.SessionView
    attempts: tuple[AttemptView, ...]


@raises(*HOLDING, ValidationFailed, *idempotency.KEYED)
def renew_lease(
    uow: UnitOfWork,
    actor: Actor,
    *,
    attempt_id: str,
    generation: int,
    idempotency_key: str | None = None,
) -> AttemptResult:
    """Extend the lease to now + lease. Never resurrects an expired attempt, and a retry
    under the same key reports the lease without extending it a second time."""
    return idempotency.run_keyed(
        uow,
        actor,
        "renewLease",
        idempotency_key,
        {"attempt_id": attempt_id, "generation": generation},
        authorize=lambda: find_attempt(uow, actor, attempt_id, reporter_ok=True),
        replay=lambda held, _: attempt_result(uow, held, replay=True),
        execute=lambda held: _renew(uow, actor, held, generation),
        receipt=lambda _: {"attempt_id": attempt_id},
    ).value


def _renew(uow: UnitOfWork, actor: Actor, held: Held, generation: int) -> AttemptResult:
    check_authority(held, generation, needs_disposition=False)
    expires_at = held.now + timedelta(seconds=held.attempt.lease_seconds)
    window_end = actor.scope.get("window_ends_at") if actor.is_reporter else None
    if window_end is not None:
        # A reporter renews within its watch window, never past it (docs/design.md,
        # "Health, progress and recovery").
        expires_at = min(expires_at, datetime.fromisoformat(window_end))
    changed = {"expires_at": max(expires_at, held.attempt.expires_at)}
    if actor.credential == "session":
        # The agent itself heartbeating is progress; a reporter renewing on its behalf
        # proves only that the helper is alive, so it never hides stale progress.
        changed["last_progress_at"] = held.now
    update_row(uow.session, held.attempt, changed)
    record_event(
        uow,
        WorkEvent.LEASE_RENEWED,
        held.task,
        by=actor,
        payload={"attempt": held.attempt.id, "expiresAt": held.attempt.expires_at.isoformat()},
    )
    return attempt_result(uow, held)


@raises(*HOLDING, ValidationFailed, *idempotency.KEYED)
def record_checkpoint(
    uow: UnitOfWork,
    actor: Actor,
    *,
    attempt_id: str,
    generation: int,
    summary: str,
    revision: str | None = None,
    branch: str | None = None,
    published: bool = False,
    idempotency_key: str | None = None,
) -> AttemptResult:
    """Progress saved so far: a summary, and the revision (pushed, if `published`) that
    holds it."""

    def replay(held: Held, prior: dict[str, str]) -> AttemptResult:
        checkpoint = uow.session.get(Checkpoint, prior["checkpoint_id"])
        return attempt_result(
            uow, held, replay=True, checkpoint=checkpoint_view(checkpoint) if checkpoint else None
        )

    def execute(held: Held) -> AttemptResult:
        check_authority(held, generation)
        clean_rev = clean_revision("revision", revision) if revision else None
        if published and clean_rev is None:
            raise ValidationFailed("revision", "a published checkpoint names its revision")
        row = Checkpoint(
            id=new_id("chk"),
            project_id=held.task.project_id,
            task_id=held.task.id,
            attempt_id=held.attempt.id,
            summary=clean_text("summary", summary, 10_000),
            revision=clean_rev,
            branch=clean_branch("branch", branch) if branch else None,
            published=published,
            created_at=held.now,
        )
        uow.session.add(row)
        update_row(uow.session, held.attempt, {"last_progress_at": held.now})
        record_event(
            uow,
            WorkEvent.CHECKPOINT_RECORDED,
            held.task,
            by=actor,
            payload={"attempt": attempt_id, "checkpoint": row.id, "published": published},
        )
        return attempt_result(uow, held, checkpoint=checkpoint_view(row))

    request = {
        "attempt_id": attempt_id,
        "generation": generation,
        "summary": summary,
        "revision": revision,
        "branch": branch,
        "published": published,
    }
    return idempotency.run_keyed(
        uow,
        actor,
        "recordCheckpoint",
        idempotency_key,
        request,
        authorize=lambda: find_attempt(uow, actor, attempt_id, reporter_ok=False),
        replay=replay,
        execute=execute,
        receipt=lambda made: {"checkpoint_id": made.checkpoint.id if made.checkpoint else None},
    ).value


@raises(*HOLDING, ValidationFailed, *idempotency.KEYED)
def relinquish_attempt(
    uow: UnitOfWork,
    actor: Actor,
    *,
    attempt_id: str,
    generation: int,
    reason: str,
    idempotency_key: str | None = None,
) -> AttemptResult:
    """Give the task back; the attempt and its checkpoints stay as history. A retry under
    the same key acknowledges the original without touching the task again."""

    def execute(held: Held) -> AttemptResult:
        check_authority(held, generation, needs_disposition=False)
        give_back(uow, actor, held, clean_text("reason", reason, 2000))
        return attempt_result(uow, held)

    return idempotency.run_keyed(
        uow,
        actor,
        "relinquishAttempt",
        idempotency_key,
        {"attempt_id": attempt_id, "generation": generation, "reason": reason},
        authorize=lambda: find_attempt(uow, actor, attempt_id, reporter_ok=False),
        replay=lambda held, _: attempt_result(uow, held, replay=True),
        execute=execute,
        receipt=lambda _: {"attempt_id": attempt_id},
    ).value


def give_back(uow: UnitOfWork, actor: Actor, held: Held, reason: str) -> None:
    """End the held attempt as relinquished; the task returns to ready work (or to
    revision, if it was delivered before)."""
    next_state = TaskState.REVISION_NEEDED if has_delivery(uow, held.task.id) else TaskState.OPEN
    end_held_attempt(uow, held, AttemptState.RELINQUISHED, reason)
    held.task.state = next_state
    record_event(
        uow,
        WorkEvent.ATTEMPT_RELINQUISHED,
        held.task,
        by=actor,
        payload={"attempt": held.attempt.id, "reason": reason},
    )


@raises(*HOLDING, ValidationFailed)
def record_adapter_event(
    uow: UnitOfWork,
    actor: Actor,
    *,
    session_id: str,
    event: str,
    attempt_id: str | None = None,
    generation: int | None = None,
    detail: str = "",
) -> AdapterEventResult:
    """What the harness saw happen. A resume reconciles the session's existing attempts
    and never claims; a relinquish gives the named attempt back."""
    event = clean_choice("event", event, AdapterEvent)
    if actor.is_reporter:
        raise PermissionDenied("a reporter token cannot record adapter events")
    relinquished = event == AdapterEvent.RELINQUISHED
    if relinquished and (attempt_id is None or generation is None):
        raise ValidationFailed("attemptId", "RELINQUISHED names the attempt and its generation")
    # The session first, then the task: the order claims lock them in.
    identity.lock_owned_session(uow, actor, session_id)
    if relinquished and attempt_id is not None and generation is not None:
        held = find_attempt(uow, actor, attempt_id, reporter_ok=False)
        # A harness hook may fire twice: an attempt this session already gave back is
        # acknowledged, not refused.
        if held.attempt.state != AttemptState.RELINQUISHED:
            check_authority(held, generation, needs_disposition=False)
            reason = clean_text("detail", detail, 2000, required=False)
            give_back(uow, actor, held, reason or "relinquished by the harness")
    session = identity.record_session_adapter_event(uow, actor, session_id=session_id, event=event)
    if attempt_id is not None and not relinquished:
        attempt = require_attempt(uow, attempt_id)
        if attempt.session_id != session.id:
            raise PermissionDenied(f"attempt {attempt_id} belongs to another session")
        uow.session.add(
            AttemptNote(
                id=new_id("note"),
                project_id=attempt.project_id,
                attempt_id=attempt.id,
                kind=AttemptNoteKind.ADAPTER_EVENT,
                body=clean_text("detail", detail, 2000, required=False),
                detail={"event": event},
                author_id=actor.principal_id,
                created_at=uow.now(),
            )
        )
    return AdapterEventResult(session=session, attempts=tuple(session_attempts(uow, session.id)))


def live_attempts_of_sessions(
    uow: UnitOfWork, session_ids: Sequence[str]
) -> dict[str, list[AttemptView]]:
    """The current attempts of many sessions, with their lease state now, by session
    (the dashboard's agents page): two statements whatever the number of sessions."""
    if not session_ids:
        return {}
    rows = uow.session.execute(
        select(Attempt, Task)
        .join(Task, Task.id == Attempt.task_id)
        .where(
            Attempt.session_id.in_(sorted(set(session_ids))),
            Attempt.state == AttemptState.ACTIVE,
        )
        .order_by(Attempt.session_id, Attempt.id)
    ).all()
    found: dict[str, list[AttemptView]] = {}
    for attempt, task in rows:
        found.setdefault(attempt.session_id, []).append(view_of(uow, attempt, task))
    return found


def session_attempts(uow: UnitOfWork, session_id: str) -> list[AttemptView]:
    """The session's attempts that are still current, with their lease state now."""
    rows = uow.session.scalars(
        select(Attempt)
        .where(Attempt.session_id == session_id, Attempt.state == AttemptState.ACTIVE)
        .order_by(Attempt.id)
    ).all()
    return [view_of(uow, row, require_task(uow, row.task_id)) for row in rows]
