"""Principals, tokens, agent sessions and dashboard sign-ins.

Secrets leave this module exactly once, in the return value of the operation that
made them (`create_token`, `start_session`, `open_web_session`); they are never
stored, logged or returned again.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from datetime import datetime
from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import bindparam, func, select, update

from hub.errors import (
    NotFound,
    PermissionDenied,
    Unauthenticated,
    ValidationFailed,
    raises,
)
from hub.events.service import (
    About,
    record_event,
)
from hub.identity import (
    _tokens as tokens,
)
from hub.identity._listing import agent_sessions as agent_sessions
from hub.identity._permissions import authorize as authorize
from hub.identity._permissions import require_reporter_scope as require_reporter_scope
from hub.identity._web_sessions import authenticate_web_session as authenticate_web_session
from hub.identity._web_sessions import end_web_session as end_web_session
from hub.identity._web_sessions import (
    end_web_sessions,
)
from hub.identity._web_sessions import open_web_session as open_web_session
from hub.identity._web_sessions import refresh_web_session as refresh_web_session
from hub.identity._web_sessions import require_web_session as require_web_session
from hub.identity.errors import (
    NotYourSession,
    PrincipalNameTaken,
    SessionEnded,
)
from hub.identity.tables import (
    AgentSession,
    ApiToken,
    Principal,
    WebSession,
)
from hub.identity.views import Actor
from hub.identity.views import DisabledPrincipal as DisabledPrincipal
from hub.identity.views import IssuedToken as IssuedToken
from hub.identity.views import PrincipalView as PrincipalView
from hub.identity.views import SessionSummary as SessionSummary
from hub.identity.views import SessionView as SessionView
from hub.identity.views import StartedSession as StartedSession
from hub.identity.views import TokenView as TokenView
from hub.identity.views import ViewerView as ViewerView
from hub.identity.vocabulary import (
    CredentialKind,
    IdentityEvent,
    PrincipalKind,
    TokenKind,
)
from hub.ids import new_id
from hub.inputs import clean_choice
from hub.mapping import view_of
from hub.storage.base import table_of
from hub.storage.export import PAGE_SIZE, ExportRecord, export_chosen
from hub.storage.unit_of_work import UnitOfWork

_passwords = PasswordHasher()


@cache
def _dummy_hash() -> str:
    """Verifying against this keeps a login for an unknown name as slow as a real one."""
    return _passwords.hash("not a password")
















def _clean(field: str, value: str, *, max_length: int = 200, required: bool = True) -> str:
    value = value.strip()
    if required and not value:
        raise ValidationFailed(field, "must not be empty")
    if len(value) > max_length:
        raise ValidationFailed(field, f"must be at most {max_length} characters")
    if any(ord(ch) < 32 for ch in value):
        raise ValidationFailed(field, "must not contain control characters")
    return value


# --- principals -----------------------------------------------------------------------


def create_principal(
    uow: UnitOfWork,
    *,
    name: str,
    kind: str,
    operator: bool = False,
    password: str | None = None,
) -> PrincipalView:
    name = _clean("name", name, max_length=120)
    kind = clean_choice("kind", kind, PrincipalKind)
    if password is not None and kind != PrincipalKind.HUMAN:
        raise ValidationFailed("password", "only human principals log in with a password")
    if password is not None and len(password) < 8:
        raise ValidationFailed("password", "must be at least 8 characters")
    if uow.session.scalar(select(Principal.id).where(Principal.name == name)) is not None:
        raise PrincipalNameTaken(name)
    uow.no_lock_needed("a new principal: its name's uniqueness is the unique index's")
    row = Principal(
        id=new_id("prn"),
        name=name,
        kind=kind,
        is_operator=operator,
        password_hash=_passwords.hash(password) if password is not None else None,
        created_at=uow.now(),
    )
    uow.session.add(row)
    uow.session.flush()
    record_event(
        uow,
        IdentityEvent.PRINCIPAL_CREATED,
        About(None, row.id),
        by=None,
        payload={"name": name, "kind": kind, "operator": operator},
    )
    return _principal_view(row)


def get_principal(uow: UnitOfWork, principal_id_or_name: str) -> PrincipalView:
    return _principal_view(_principal_row(uow, principal_id_or_name))


def list_principals(uow: UnitOfWork) -> list[PrincipalView]:
    rows = uow.session.scalars(select(Principal).order_by(Principal.created_at)).all()
    return [_principal_view(row) for row in rows]


def principal_names(uow: UnitOfWork, principal_ids: Collection[str]) -> dict[str, str]:
    """Display names for principal ids (unknown ids are left out)."""
    if not principal_ids:
        return {}
    rows = uow.session.execute(
        select(Principal.id, Principal.name).where(Principal.id.in_(sorted(principal_ids)))
    ).all()
    return {principal_id: name for principal_id, name in rows}


def set_password(uow: UnitOfWork, principal: str, password: str) -> None:
    row = _principal_row(uow, principal)
    if row.kind != PrincipalKind.HUMAN:
        raise ValidationFailed("password", "only human principals log in with a password")
    if len(password) < 8:
        raise ValidationFailed("password", "must be at least 8 characters")
    row.password_hash = _passwords.hash(password)


def _principal_row(uow: UnitOfWork, principal_id_or_name: str, *, lock: bool = False) -> Principal:
    """`lock`: row-locked, so issuing a credential and disabling the principal are
    serialized (a token issued concurrently with `disable_principal` cannot survive it)."""
    # The id wins: a principal *named* like another's id must not receive its tokens.
    row = uow.session.get(Principal, principal_id_or_name, with_for_update=True if lock else None)
    if row is None:
        by_name = select(Principal).where(Principal.name == principal_id_or_name)
        row = uow.session.scalar(by_name.with_for_update() if lock else by_name)
    if row is None:
        raise NotFound("principal", principal_id_or_name)
    return row


def _principal_view(row: Principal) -> PrincipalView:
    return view_of(PrincipalView, row)


def disable_principal(uow: UnitOfWork, *, principal: str, reason: str = "") -> DisabledPrincipal:
    """Shut a principal out everywhere, at once: its agent sessions end, every token it
    holds is revoked (they stay revoked if it is enabled again) and its dashboard
    sign-ins end. Authentication also refuses a disabled principal's credentials, so
    nothing it holds works while it is disabled."""
    row = _principal_row(uow, principal, lock=True)
    reason = _clean("reason", reason, max_length=400, required=False)
    now = uow.now()
    newly = row.disabled_at is None
    if newly:
        row.disabled_at = now
    # Every token first (personal, session, reporter), then the sessions themselves.
    tokens_revoked = len(uow.session.scalars(
        update(ApiToken)
        .where(ApiToken.principal_id == row.id, ApiToken.revoked_at.is_(None))
        .values(revoked_at=now)
        .returning(ApiToken.id)
    ).all())
    live_sessions = uow.session.scalars(
        select(AgentSession).where(
            AgentSession.principal_id == row.id, AgentSession.ended_at.is_(None)
        )
    ).all()
    for session in live_sessions:
        _end_agent_session(uow, session, now, reason=_because("principal disabled", reason),
                           actor_id=None)
    # The operator's reason stays in the event log; browsers are told only this.
    web_sessions_ended = end_web_sessions(
        uow, WebSession.principal_id == row.id, now, "principal disabled"
    )
    if newly or live_sessions or tokens_revoked or web_sessions_ended:
        record_event(
            uow,
            IdentityEvent.PRINCIPAL_DISABLED,
            About(None, row.id),
            by=None,
            payload={
                "reason": reason,
                "sessions_ended": len(live_sessions),
                "tokens_revoked": tokens_revoked,
                "web_sessions_ended": web_sessions_ended,
            },
        )
    return DisabledPrincipal(
        principal=_principal_view(row),
        sessions_ended=len(live_sessions),
        tokens_revoked=tokens_revoked,
        web_sessions_ended=web_sessions_ended,
    )


def enable_principal(uow: UnitOfWork, *, principal: str) -> PrincipalView:
    """Lift `disable_principal`. What it revoked stays revoked: the principal needs a
    new token (`create_token`) and a new sign-in."""
    row = _principal_row(uow, principal, lock=True)
    if row.disabled_at is not None:
        row.disabled_at = None
        record_event(uow, IdentityEvent.PRINCIPAL_ENABLED, About(None, row.id), by=None)
    return _principal_view(row)


def _because(what: str, reason: str) -> str:
    return f"{what}: {reason}" if reason else what


# --- personal tokens ------------------------------------------------------------------


def create_token(uow: UnitOfWork, *, principal: str, label: str = "") -> IssuedToken:
    owner = _principal_row(uow, principal, lock=True)
    if owner.disabled_at is not None:
        raise PermissionDenied(f"principal {owner.name!r} is disabled")
    issued = _issue(uow, owner.id, TokenKind.PERSONAL, _clean("label", label, required=False))
    record_event(
        uow,
        IdentityEvent.TOKEN_CREATED,
        About(None, issued.token.id),
        by=None,
        payload={"principal": owner.id, "kind": TokenKind.PERSONAL},
    )
    return issued


def revoke_token(
    uow: UnitOfWork, *, token_id: str, by: Actor | None = None, reason: str = ""
) -> TokenView:
    """Revoke a token at once. `by` and `reason`: an operator in the dashboard, recorded
    in the event; the command line revokes as the server itself, with neither. A token
    already revoked stays as it was, and nothing is recorded again."""
    row = uow.session.get(ApiToken, token_id, with_for_update=True)
    if row is None:
        raise NotFound("token", token_id)
    reason = _clean("reason", reason, max_length=500, required=False)
    if row.revoked_at is None:
        row.revoked_at = uow.now()
        record_event(
            uow,
            IdentityEvent.TOKEN_REVOKED,
            About(None, row.id),
            by=by,
            payload={"principal": row.principal_id, "reason": reason},
        )
        # A browser signed in by pasting this token is signed out with it.
        end_web_sessions(
            uow, WebSession.signed_in_with_token_id == row.id, row.revoked_at,
            "the token used to sign in was revoked",
        )
    return _token_view(row)


def get_token(uow: UnitOfWork, token_id: str) -> TokenView:
    row = uow.session.get(ApiToken, token_id)
    if row is None:
        raise NotFound("token", token_id)
    return _token_view(row)


def list_tokens(uow: UnitOfWork, *, principal: str) -> list[TokenView]:
    owner = _principal_row(uow, principal)
    rows = uow.session.scalars(
        select(ApiToken).where(ApiToken.principal_id == owner.id).order_by(ApiToken.created_at)
    ).all()
    return [_token_view(row) for row in rows]


def issue_reporter_token(
    uow: UnitOfWork,
    *,
    principal_id: str,
    session_id: str,
    scope: dict[str, str],
    expires_at: datetime,
    label: str,
) -> IssuedToken:
    """A reporter credential for one watch window (docs/design.md, "Health, progress and
    recovery").

    Bound to the session that opened the window, so ending that session revokes it;
    it expires at the window's deadline, and `scope` names the one attempt it serves.
    """
    issued = _issue(
        uow,
        principal_id,
        TokenKind.REPORTER,
        _clean("label", label),
        session_id=session_id,
        expires_at=expires_at,
        scope=scope,
    )
    record_event(
        uow,
        IdentityEvent.TOKEN_CREATED,
        About(None, issued.token.id),
        by=principal_id,
        payload={"principal": principal_id, "kind": TokenKind.REPORTER},
    )
    return issued


def _issue(
    uow: UnitOfWork,
    principal_id: str,
    kind: str,
    label: str,
    *,
    session_id: str | None = None,
    expires_at: datetime | None = None,
    scope: dict[str, str] | None = None,
) -> IssuedToken:
    minted = tokens.mint(kind)
    row = ApiToken(
        id=minted.token_id,
        principal_id=principal_id,
        kind=kind,
        label=label,
        secret_hash=minted.secret_hash,
        session_id=session_id,
        scope=dict(scope or {}),
        created_at=uow.now(),
        expires_at=expires_at,
    )
    uow.session.add(row)
    uow.session.flush()
    return IssuedToken(token=_token_view(row), plaintext=minted.plaintext)


def _token_view(row: ApiToken) -> TokenView:
    return view_of(TokenView, row)


# --- authentication -------------------------------------------------------------------


_TOKENS = table_of(ApiToken)
_OPENERS = _TOKENS.alias("opener")
_PRINCIPALS = table_of(Principal)
_SESSIONS = table_of(AgentSession)
# Every request authenticates, so this is one prebuilt statement: the token, its
# principal, its session and the token that opened that session, in one round trip.
_CREDENTIAL = (
    select(
        _TOKENS.c.id,
        _TOKENS.c.kind,
        _TOKENS.c.secret_hash,
        _TOKENS.c.session_id,
        _TOKENS.c.scope,
        _TOKENS.c.expires_at,
        _TOKENS.c.revoked_at,
        _PRINCIPALS.c.id.label("principal_id"),
        _PRINCIPALS.c.name.label("principal_name"),
        _PRINCIPALS.c.kind.label("principal_kind"),
        _PRINCIPALS.c.is_operator,
        _PRINCIPALS.c.disabled_at,
        _SESSIONS.c.id.label("live_session_id"),
        _SESSIONS.c.ended_at.label("session_ended_at"),
        _SESSIONS.c.opened_with_token_id,
        _OPENERS.c.id.label("opener_id"),
        _OPENERS.c.revoked_at.label("opener_revoked_at"),
    )
    .join(_PRINCIPALS, _PRINCIPALS.c.id == _TOKENS.c.principal_id)
    .outerjoin(_SESSIONS, _SESSIONS.c.id == _TOKENS.c.session_id)
    .outerjoin(_OPENERS, _OPENERS.c.id == _SESSIONS.c.opened_with_token_id)
    .where(_TOKENS.c.id == bindparam("token_id"))
)


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header value, or None."""
    scheme, _, value = (authorization or "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def authenticate(uow: UnitOfWork, bearer: str) -> Actor:
    """The actor behind a bearer token, or `Unauthenticated` (never says which check failed)."""
    presented = tokens.parse(bearer)
    if presented is None:
        raise Unauthenticated("the bearer token is malformed")
    uow.session.flush()  # a Core read: see tokens made earlier in this transaction
    found = uow.session.execute(_CREDENTIAL, {"token_id": presented.token_id}).first()
    if found is None:
        raise Unauthenticated("the bearer token is unknown or revoked")
    if (
        not tokens.secret_matches(presented.secret, found.secret_hash)
        or found.kind != presented.kind
        or found.revoked_at is not None
        or found.disabled_at is not None
        or (found.expires_at is not None and uow.opened_at >= found.expires_at)
    ):
        raise Unauthenticated("the bearer token is unknown or revoked")
    if found.session_id is not None:
        if found.live_session_id is None or found.session_ended_at is not None:
            raise Unauthenticated("the session behind this token has ended")
        if found.opened_with_token_id is not None and (
            found.opener_id is None or found.opener_revoked_at is not None
        ):
            raise Unauthenticated("the credential that opened this session was revoked")
    return Actor(
        principal_id=found.principal_id,
        principal_name=found.principal_name,
        kind=found.principal_kind,
        is_operator=found.is_operator,
        credential=found.kind,
        token_id=found.id,
        session_id=found.session_id,
        scope=dict(found.scope or {}),
    )


def login_with_password(uow: UnitOfWork, *, name: str, password: str) -> Actor:
    row = uow.session.scalar(select(Principal).where(Principal.name == name.strip()))
    stored = row.password_hash if row is not None and row.password_hash else _dummy_hash()
    try:
        _passwords.verify(stored, password)
    except (VerificationError, InvalidHashError):
        raise Unauthenticated("unknown name or wrong password") from None
    if row is None or row.password_hash is None or row.disabled_at is not None:
        raise Unauthenticated("unknown name or wrong password")
    return web_actor(row)


def web_actor(row: Principal) -> Actor:
    return Actor(
        principal_id=row.id,
        principal_name=row.name,
        kind=row.kind,
        is_operator=row.is_operator,
        credential=CredentialKind.WEB,
    )


# --- sessions -------------------------------------------------------------------------


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
        workstation=_clean("workstation", workstation),
        harness=_clean("harness", harness, max_length=120),
        harness_instance=_clean("harnessInstance", harness_instance),
        started_at=uow.now(),
    )
    uow.session.add(row)
    uow.session.flush()
    issued = _issue(
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
        _end_agent_session(
            uow, row, uow.now(), reason=_clean("reason", reason, max_length=500, required=False),
            actor_id=actor.principal_id,
        )
    return _session_view(row)


def _end_agent_session(
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


def viewer(uow: UnitOfWork, actor: Actor) -> ViewerView:
    """The caller as the API shows it (`viewer`)."""
    return ViewerView(
        principal=get_principal(uow, actor.principal_id),
        credential=actor.credential,
        session=get_session(uow, actor.session_id) if actor.session_id else None,
    )


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


def _session_view(row: AgentSession) -> SessionView:
    return view_of(SessionView, row)


_LOCK_SESSION = (
    select(AgentSession)
    .where(AgentSession.id == bindparam("session_id"))
    .with_for_update()
    .execution_options(populate_existing=True)
)


def lock_active_session(uow: UnitOfWork, actor: Actor) -> SessionView:
    """The caller's live session, row-locked so its claims are counted one at a time."""
    if actor.session_id is None:
        raise PermissionDenied("this operation needs a session token (startSession)")
    row = uow.session.scalar(_LOCK_SESSION, {"session_id": actor.session_id})
    if row is None:
        raise NotFound("session", actor.session_id)
    if row.principal_id != actor.principal_id:
        raise NotYourSession(row.id)
    if row.ended_at is not None:
        raise SessionEnded(row.id)
    return _session_view(row)


def export_principals(
    uow: UnitOfWork, *, principal_ids: Collection[str], session_ids: Collection[str]
) -> Iterator[ExportRecord]:
    """The agent sessions and principals an export's rows name, for the export to say who
    did what (docs/exports.md): names, kinds and times, never a secret (password hashes
    and the tokens a session was opened with stay out). A session's principal is
    exported with it."""
    sessions = table_of(AgentSession)
    principals = set(principal_ids)
    chosen = sorted(set(session_ids))
    for start in range(0, len(chosen), PAGE_SIZE):
        page = chosen[start : start + PAGE_SIZE]
        owners = select(sessions.c.principal_id).where(sessions.c.id.in_(page))
        principals.update(uow.session.execute(owners).scalars())
    yield from export_chosen(uow, sessions, chosen, omit={"opened_with_token_id"})
    yield from export_chosen(uow, table_of(Principal), principals, omit={"password_hash"})
