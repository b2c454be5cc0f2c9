"""Watch windows: a declared wait, and the narrowly scoped reporter token that serves it.

The reporter token (docs/design.md, "Health, progress and recovery") renews one
attempt's lease and reports that attempt's jobs, until the window's deadline and never
past it; it cannot checkpoint, submit, change policy or open another window. Ending the
window revokes it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from hub.errors import (
    NotFound,
    PermissionDenied,
    ValidationFailed,
    raises,
)
from hub.events.service import (
    record_event,
    task_of,
)
from hub.identity import service as identity
from hub.identity.views import Actor
from hub.ids import new_id
from hub.inputs import clean_label, clean_moment, clean_text
from hub.jobs.tables import WatchWindow
from hub.jobs.views import OpenedWindow, WindowView, window_view
from hub.jobs.vocabulary import JobEvent
from hub.projects import service as projects
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work


@raises(*work.HOLDING, ValidationFailed)
def open_watch_window(
    uow: UnitOfWork,
    actor: Actor,
    *,
    attempt_id: str,
    generation: int,
    action: str,
    deadline: datetime,
) -> OpenedWindow:
    """Declare the action being watched and its deadline; returns the reporter token once."""
    action = clean_label("action", action, 500)
    deadline = clean_moment("deadline", deadline)
    # Only the owning session declares a window: a reporter cannot extend its own reach.
    held = work.hold_attempt(uow, actor, attempt_id=attempt_id, generation=generation)
    assert actor.session_id is not None  # hold_attempt admitted a session token
    now = uow.now()
    policy = projects.get_policy(uow, held.attempt.project_id)
    longest = now + timedelta(seconds=policy.max_watch_window_seconds)
    if deadline <= now:
        raise ValidationFailed("deadline", "must be in the future")
    if deadline > longest:
        raise ValidationFailed(
            "deadline",
            f"must be at most {policy.max_watch_window_seconds} s from now "
            f"({longest.isoformat()}); an operator can raise maxWatchWindowSeconds",
        )
    window_id = new_id("wch")
    issued = identity.issue_reporter_token(
        uow,
        principal_id=actor.principal_id,
        session_id=actor.session_id,
        scope={
            "attempt_id": held.attempt.id,
            "window_id": window_id,
            "window_ends_at": deadline.isoformat(),
        },
        expires_at=deadline,
        label=f"watch window {window_id}",
    )
    row = WatchWindow(
        id=window_id,
        project_id=held.attempt.project_id,
        task_id=held.attempt.task_id,
        attempt_id=held.attempt.id,
        session_id=actor.session_id,
        principal_id=actor.principal_id,
        action=action,
        token_id=issued.token.id,
        opened_at=now,
        ends_at=deadline,
    )
    uow.session.add(row)
    uow.session.flush()
    record_event(
        uow,
        JobEvent.WATCH_WINDOW_OPENED,
        task_of(row),
        by=actor,
        payload={
            "window": row.id,
            "attempt": row.attempt_id,
            "action": action,
            "endsAt": deadline.isoformat(),
        },
    )
    return OpenedWindow(window_view(row, now), issued.plaintext)


@raises(NotFound, PermissionDenied, ValidationFailed)
def close_watch_window(
    uow: UnitOfWork, actor: Actor, *, window_id: str, reason: str = ""
) -> WindowView:
    """End a window early and revoke its reporter token (closing again changes nothing)."""
    reason = clean_text("reason", reason, 500, required=False)
    row = uow.session.get(WatchWindow, window_id, with_for_update=True)
    if row is None:
        raise NotFound("watch window", window_id)
    if actor.is_reporter:
        allowed = actor.scope.get("window_id") == row.id
    else:
        allowed = actor.session_id == row.session_id or actor.is_operator
    if not allowed:
        raise PermissionDenied(f"watch window {row.id} belongs to another session")
    now = uow.now()
    if row.closed_at is None:
        row.closed_at = now
        row.close_reason = reason or None
        identity.revoke_token(uow, token_id=row.token_id)
        record_event(
            uow,
            JobEvent.WATCH_WINDOW_CLOSED,
            task_of(row),
            by=actor,
            payload={"window": row.id, "attempt": row.attempt_id, "reason": reason},
        )
    return window_view(row, now)


def get_watch_window(uow: UnitOfWork, window_id: str) -> WindowView:
    row = uow.session.get(WatchWindow, window_id)
    if row is None:
        raise NotFound("watch window", window_id)
    return window_view(row, uow.now())
