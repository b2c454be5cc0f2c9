"""Agent sessions: each started with a personal token and given a session token of its
own; ended by itself, by an operator in the dashboard or with its principal
(`disable_principal`).

Ending a session revokes every token issued for it (`end_agent_session`). The lists of
sessions people read are `_listing`'s.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import bindparam, func, select, update

from hub.errors import NotFound, PermissionDenied, ValidationFailed, raises
from hub.events.service import About, record_event
from hub.identity._api_tokens import issue_token
from hub.identity._principals import clean
from hub.identity.errors import NotYourSession, SessionEnded
from hub.identity.tables import AgentSession, ApiToken
from hub.identity.views import Actor, SessionView, StartedSession
from hub.identity.vocabulary import CredentialKind, IdentityEvent, TokenKind
from hub.ids import new_id
from hub.mapping import view_of
from hub.storage.base import table_of
from hub.storage.unit_of_work import UnitOfWork


@raises(PermissionDenied, ValidationFailed)
def start_session(
    uow: UnitOfWork,
    actor: Actor,
    *,
    workstation: str,
    harness: str,
    harness_instance: str,
) -> StartedSession:
    if actor.credential != CredentialKind.PERSONAL:
        # A session is opened with the workstation credential; a session token cannot
        # spawn sessions of its own (that would outlive the revocation of its parent).
        raise PermissionDenied("sessions are started with a personal token")
    uow.no_lock_needed("a new session, opened under the credential just authenticated")
    row = AgentSession(
        id=new_id("ses"),
        principal_id=actor.principal_id,
        opened_with_token_id=actor.token_id,
        workstation=clean("workstation", workstation),
        harness=clean("harness", harness, max_length=120),
        harness_instance=clean("harnessInstance", harness_instance),
        started_at=uow.now(),
    )
    uow.session.add(row)
    uow.session.flush()
    issued = issue_token(
        uow, actor.principal_id, TokenKind.SESSION, f"session {row.id}", session_id=row.id
    )
    record_event(
        uow,
        IdentityEvent.SESSION_STARTED,
        About(None, row.id),
        by=actor,
        payload={"workstation": row.workstation, "harness": row.harness},
    )
    return StartedSession(session=_session_view(row), token=issued.plaintext)


@raises(NotFound, PermissionDenied, ValidationFailed)
def end_session(
    uow: UnitOfWork, actor: Actor, *, session_id: str, reason: str = ""
) -> SessionView:
    """A session ends itself; an operator in the dashboard ends any session, saying why
    (the credential table lets no other credential call this for another's session)."""
    if actor.is_operator and actor.credential == CredentialKind.WEB:
        row = _session_row(uow, session_id, lock=True)
    else:
        row = _owned_session(uow, actor, session_id, allow_ended=True, lock=True)
    if row.ended_at is None:
        end_agent_session(
            uow, row, uow.now(), reason=clean("reason", reason, max_length=500, required=False),
            actor_id=actor.principal_id,
        )
    return _session_view(row)


def end_agent_session(
    uow: UnitOfWork, row: AgentSession, now: datetime, *, reason: str, actor_id: str | None
) -> None:
    """Ending a session revokes its tokens (the session token, reporter tokens)."""
    row.ended_at = now
    row.end_reason = reason
    uow.session.execute(
        update(ApiToken)
        .where(ApiToken.session_id == row.id, ApiToken.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    record_event(
        uow,
        IdentityEvent.SESSION_ENDED,
        About(None, row.id),
        by=actor_id,
        payload={"reason": reason},
    )


def get_session(uow: UnitOfWork, session_id: str) -> SessionView:
    return _session_view(_session_row(uow, session_id))


def require_active_session(uow: UnitOfWork, actor: Actor) -> SessionView:
    """The caller's own live session; ownership-dependent mutations need one."""
    if actor.session_id is None:
        raise PermissionDenied("this operation needs a session token (startSession)")
    return _session_view(_owned_session(uow, actor, actor.session_id, allow_ended=False))


def lock_owned_session(uow: UnitOfWork, actor: Actor, session_id: str) -> SessionView:
    """The caller's live session (a session token's own, or one of a personal token's
    principal), row-locked for a change to it."""
    return _session_view(_owned_session(uow, actor, session_id, allow_ended=False, lock=True))


def record_session_adapter_event(
    uow: UnitOfWork, actor: Actor, *, session_id: str, event: str
) -> SessionView:
    """What the harness last saw happen to the session. The caller locked the session
    first (`lock_owned_session`), before any other row its operation locks."""
    row = _owned_session(uow, actor, session_id, allow_ended=False, lock=True)
    row.last_adapter_event = event
    row.last_adapter_event_at = uow.now()
    return _session_view(row)


def count_active_sessions(uow: UnitOfWork) -> int:
    value = uow.session.scalar(
        select(func.count()).select_from(AgentSession).where(AgentSession.ended_at.is_(None))
    )
    return int(value or 0)


def _session_row(uow: UnitOfWork, session_id: str, *, lock: bool = False) -> AgentSession:
    row = uow.session.get(AgentSession, session_id, with_for_update=True if lock else None)
    if row is None:
        raise NotFound("session", session_id)
    return row


def _owned_session(
    uow: UnitOfWork, actor: Actor, session_id: str, *, allow_ended: bool, lock: bool = False
) -> AgentSession:
    row = _session_row(uow, session_id, lock=lock)
    # A session token acts only for its own session; a personal token for its principal's.
    if row.principal_id != actor.principal_id or (
        actor.session_id is not None and actor.session_id != row.id
    ):
        raise NotYourSession(session_id)
    if not allow_ended and row.ended_at is not None:
        raise SessionEnded(session_id)
    return row


def _session_view(row: object) -> SessionView:
    """The view of a session row (an ORM row or a Core row of its columns)."""
    return view_of(SessionView, row)


_SESSIONS = table_of(AgentSession)
# Every claim runs it: a Core statement, its row read into the view directly.
_LOCK_SESSION = select(_SESSIONS).where(_SESSIONS.c.id == bindparam("session_id")).with_for_update()


def lock_active_session(uow: UnitOfWork, actor: Actor) -> SessionView:
    """The caller's live session, row-locked so its claims are counted one at a time."""
    if actor.session_id is None:
        raise PermissionDenied("this operation needs a session token (startSession)")
    row = uow.session.execute(_LOCK_SESSION, {"session_id": actor.session_id}).first()
    if row is None:
        raise NotFound("session", actor.session_id)
    if row.principal_id != actor.principal_id:
        raise NotYourSession(row.id)
    if row.ended_at is not None:
        raise SessionEnded(row.id)
    return _session_view(row)
