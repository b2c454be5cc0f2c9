"""Principals, tokens, agent sessions and dashboard sign-ins.

The operations live in the package's private modules and are re-exported here:
principals in `_principals`, tokens in `_api_tokens` (their format in `_tokens`), agent
sessions in `_agent_sessions` (the lists people read in `_listing`), dashboard sign-ins
in `_web_sessions` (the attempts counted against password guessing in
`_login_throttles`) and who may call what in `_permissions`. This module keeps what spans
them: disabling a principal, authentication, the viewer and the export.

Secrets leave this module exactly once, in the return value of the operation that
made them (`create_token`, `start_session`, `open_web_session`); they are never
stored, logged or returned again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterator
from functools import cache

from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import bindparam, select, update

from hub.errors import Unauthenticated
from hub.events.service import About, record_event
from hub.identity import _tokens as tokens
from hub.identity._agent_sessions import count_active_sessions as count_active_sessions
from hub.identity._agent_sessions import end_agent_session
from hub.identity._agent_sessions import end_session as end_session
from hub.identity._agent_sessions import get_session as get_session
from hub.identity._agent_sessions import lock_active_session as lock_active_session
from hub.identity._agent_sessions import lock_owned_session as lock_owned_session
from hub.identity._agent_sessions import (
    record_session_adapter_event as record_session_adapter_event,
)
from hub.identity._agent_sessions import require_active_session as require_active_session
from hub.identity._agent_sessions import start_session as start_session
from hub.identity._api_tokens import create_token as create_token
from hub.identity._api_tokens import get_token as get_token
from hub.identity._api_tokens import issue_reporter_token as issue_reporter_token
from hub.identity._api_tokens import list_tokens as list_tokens
from hub.identity._api_tokens import revoke_token as revoke_token
from hub.identity._listing import agent_sessions as agent_sessions
from hub.identity._listing import count_live_sessions as count_live_sessions
from hub.identity._login_throttles import admit_login as admit_login
from hub.identity._login_throttles import clear_login_lockout as clear_login_lockout
from hub.identity._login_throttles import login_lockouts as login_lockouts
from hub.identity._login_throttles import login_succeeded as login_succeeded
from hub.identity._login_throttles import prune_login_throttles as prune_login_throttles
from hub.identity._permissions import authorize as authorize
from hub.identity._permissions import require_reporter_scope as require_reporter_scope
from hub.identity._principals import clean, passwords, principal_row, principal_view
from hub.identity._principals import create_principal as create_principal
from hub.identity._principals import get_principal as get_principal
from hub.identity._principals import list_principals as list_principals
from hub.identity._principals import principal_names as principal_names
from hub.identity._principals import set_password as set_password
from hub.identity._web_sessions import OpenedWebSession as OpenedWebSession
from hub.identity._web_sessions import authenticate_web_session as authenticate_web_session
from hub.identity._web_sessions import end_web_session as end_web_session
from hub.identity._web_sessions import (
    end_web_sessions,
)
from hub.identity._web_sessions import open_web_session as open_web_session
from hub.identity._web_sessions import refresh_web_session as refresh_web_session
from hub.identity._web_sessions import require_web_session as require_web_session
from hub.identity.tables import (
    AgentSession,
    ApiToken,
    Principal,
    WebSession,
)
from hub.identity.views import Actor
from hub.identity.views import ClearedLoginLockout as ClearedLoginLockout
from hub.identity.views import DisabledPrincipal as DisabledPrincipal
from hub.identity.views import IssuedToken as IssuedToken
from hub.identity.views import LoginThrottleView as LoginThrottleView
from hub.identity.views import PrincipalView as PrincipalView
from hub.identity.views import SessionSummary as SessionSummary
from hub.identity.views import SessionView as SessionView
from hub.identity.views import StartedSession as StartedSession
from hub.identity.views import TokenView as TokenView
from hub.identity.views import ViewerView as ViewerView
from hub.identity.vocabulary import (
    CredentialKind,
    IdentityEvent,
)
from hub.observability.context import identify
from hub.storage.base import table_of
from hub.storage.export import PAGE_SIZE, ExportRecord, export_chosen
from hub.storage.unit_of_work import UnitOfWork

# --- principals -----------------------------------------------------------------------


def disable_principal(uow: UnitOfWork, *, principal: str, reason: str = "") -> DisabledPrincipal:
    """Shut a principal out everywhere, at once: its agent sessions end, every token it
    holds is revoked (they stay revoked if it is enabled again) and its dashboard
    sign-ins end. Authentication also refuses a disabled principal's credentials, so
    nothing it holds works while it is disabled."""
    row = principal_row(uow, principal, lock=True)
    reason = clean("reason", reason, max_length=400, required=False)
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
        end_agent_session(uow, session, now, reason=_because("principal disabled", reason),
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
        principal=principal_view(row),
        sessions_ended=len(live_sessions),
        tokens_revoked=tokens_revoked,
        web_sessions_ended=web_sessions_ended,
    )


def enable_principal(uow: UnitOfWork, *, principal: str) -> PrincipalView:
    """Lift `disable_principal`. What it revoked stays revoked: the principal needs a
    new token (`create_token`) and a new sign-in."""
    row = principal_row(uow, principal, lock=True)
    if row.disabled_at is not None:
        row.disabled_at = None
        record_event(uow, IdentityEvent.PRINCIPAL_ENABLED, About(None, row.id), by=None)
    return principal_view(row)


def _because(what: str, reason: str) -> str:
    return f"{what}: {reason}" if reason else what


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


def rate_limit_key(bearer: str) -> str | None:
    """What a request's allowance is counted under (`hub.api.rate_limits`), without a
    database read: the token's public id and a short digest of the secret presented, so
    a request that knows a token's id but not its secret spends an allowance of its own,
    never the real token's. Never the secret itself. None: not a hub token."""
    presented = tokens.parse(bearer)
    if presented is None:
        return None
    digest = hashlib.sha256(presented.secret.encode()).hexdigest()[:16]
    return f"{presented.token_id}:{digest}"


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
    # The request's log lines and spans say who sent it from here on (ids only).
    identify(found.principal_id, found.session_id)
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


@cache
def _dummy_hash() -> str:
    """Verifying against this keeps a login for an unknown name as slow as a real one."""
    return passwords.hash("not a password")


def login_with_password(uow: UnitOfWork, *, name: str, password: str) -> Actor:
    row = uow.session.scalar(select(Principal).where(Principal.name == name.strip()))
    stored = row.password_hash if row is not None and row.password_hash else _dummy_hash()
    try:
        passwords.verify(stored, password)
    except (VerificationError, InvalidHashError):
        raise Unauthenticated("unknown name or wrong password") from None
    if row is None or row.password_hash is None or row.disabled_at is not None:
        raise Unauthenticated("unknown name or wrong password")
    identify(row.id, None)
    return web_actor(row)


def web_actor(row: Principal) -> Actor:
    return Actor(
        principal_id=row.id,
        principal_name=row.name,
        kind=row.kind,
        is_operator=row.is_operator,
        credential=CredentialKind.WEB,
    )


# --- across the parts -----------------------------------------------------------------


def viewer(uow: UnitOfWork, actor: Actor) -> ViewerView:
    """The caller as the API shows it (`viewer`)."""
    return ViewerView(
        principal=get_principal(uow, actor.principal_id),
        credential=actor.credential,
        session=get_session(uow, actor.session_id) if actor.session_id else None,
    )


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
