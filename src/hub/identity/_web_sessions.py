"""Dashboard sign-ins, kept on the server (`web_sessions`).

A person signs in with a password or a pasted personal token (`hub.identity.service`
checks either, in a read: the password hash is slow on purpose), then
`open_web_session` makes a sign-in and returns its secret once, for the browser's
cookie; only the secret's SHA-256 is stored. Every dashboard request presents the
secret again (`authenticate_web_session`), and a sign-in holds only while:

- it has not been ended: signing out, revoking the token used to sign in and
  disabling the principal end it (`ended_at`, with the reason);
- the principal is not disabled, and the sign-in token (if any) is not revoked;
- it is younger than `web_session_max_age_seconds` and was seen within
  `web_idle_timeout_seconds`.

Age and idleness are judged with coordinator time at each request, so they need no
background job. `last_seen_at` is written at most once a minute (`refresh_web_session`),
so a page view stays a read; idleness is therefore judged to within that minute.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, bindparam, select, update

from hub.errors import Unauthenticated
from hub.events.service import (
    About,
    record_event,
)
from hub.identity import (
    _tokens as tokens,
)
from hub.identity.errors import (
    NotAPerson,
)
from hub.identity.tables import (
    ApiToken,
    Principal,
    WebSession,
)
from hub.identity.views import (
    Actor,
)
from hub.identity.vocabulary import (
    CredentialKind,
    IdentityEvent,
)
from hub.ids import new_id
from hub.observability.context import identify
from hub.storage.base import table_of
from hub.storage.unit_of_work import UnitOfWork

# A page view is a read: `last_seen_at` is written again only once it is this old.
LAST_SEEN_REFRESH = timedelta(seconds=60)
SIGNED_OUT = "signed out"


@dataclass(frozen=True)
class OpenedWebSession:
    id: str
    secret: str  # for the browser's cookie, once; stored only as its SHA-256


@dataclass(frozen=True)
class DashboardViewer:
    actor: Actor  # credential "web", with `web_session_id`
    # `last_seen_at` is old enough to be written again (`refresh_web_session`).
    refresh_due: bool


def open_web_session(
    uow: UnitOfWork, actor: Actor, *, replaces: str | None = None
) -> OpenedWebSession:
    """Sign `actor` in to the dashboard: a person, authenticated by password
    (`login_with_password`) or by their own personal token (`authenticate`).

    `replaces`: the secret of the browser's previous sign-in, which ends here (a
    fresh sign-in never reuses an identifier the browser held before).
    """
    if not actor.is_human or actor.credential not in (CredentialKind.WEB, CredentialKind.PERSONAL):
        raise NotAPerson()
    # Locked: a sign-in opened concurrently with `disable_principal` cannot survive it.
    principal = uow.session.get(Principal, actor.principal_id, with_for_update=True)
    if principal is None or principal.disabled_at is not None:
        raise Unauthenticated("unknown name or wrong password")
    token_id: str | None = None
    if actor.credential == CredentialKind.PERSONAL:
        token = uow.session.get(ApiToken, actor.token_id) if actor.token_id else None
        if token is None or token.revoked_at is not None:
            raise Unauthenticated("the bearer token is unknown or revoked")
        token_id = token.id
    now = uow.now()
    if replaces:
        end_web_sessions(
            uow, WebSession.secret_hash == tokens.hash_secret(replaces), now, "signed in again"
        )
    secret = secrets.token_hex(32)
    row = WebSession(
        id=new_id("web"),
        secret_hash=tokens.hash_secret(secret),
        principal_id=principal.id,
        signed_in_with_token_id=token_id,
        created_at=now,
        last_seen_at=now,
    )
    uow.session.add(row)
    uow.session.flush()
    record_event(
        uow,
        IdentityEvent.WEB_SESSION_STARTED,
        About(None, row.id),
        by=principal.id,
        payload={"with": "token" if token_id else "password"},
    )
    return OpenedWebSession(id=row.id, secret=secret)


_WEB = table_of(WebSession)
_PRINCIPALS = table_of(Principal)
_SIGN_IN_TOKENS = table_of(ApiToken).alias("sign_in_token")
# Every dashboard request runs this: the sign-in, its principal and its sign-in token
# in one round trip.
_SIGN_IN = (
    select(
        _WEB.c.id,
        _WEB.c.created_at,
        _WEB.c.last_seen_at,
        _WEB.c.ended_at,
        _WEB.c.end_reason,
        _WEB.c.signed_in_with_token_id,
        _PRINCIPALS.c.id.label("principal_id"),
        _PRINCIPALS.c.name.label("principal_name"),
        _PRINCIPALS.c.kind.label("principal_kind"),
        _PRINCIPALS.c.is_operator,
        _PRINCIPALS.c.disabled_at,
        _SIGN_IN_TOKENS.c.revoked_at.label("token_revoked_at"),
    )
    .join(_PRINCIPALS, _PRINCIPALS.c.id == _WEB.c.principal_id)
    .outerjoin(_SIGN_IN_TOKENS, _SIGN_IN_TOKENS.c.id == _WEB.c.signed_in_with_token_id)
)
_BY_SECRET = _SIGN_IN.where(_WEB.c.secret_hash == bindparam("secret_hash"))
_BY_ID = _SIGN_IN.where(_WEB.c.id == bindparam("web_session_id"))


def authenticate_web_session(uow: UnitOfWork, secret: str) -> DashboardViewer:
    """The person behind a dashboard cookie's secret, or `Unauthenticated` saying why not."""
    uow.session.flush()  # a Core read: see sign-ins made earlier in this transaction
    found = uow.session.execute(_BY_SECRET, {"secret_hash": tokens.hash_secret(secret)}).first()
    now = uow.opened_at
    actor = _judge(uow, found, now)
    assert found is not None  # `_judge` refuses a missing sign-in
    return DashboardViewer(actor=actor, refresh_due=now - found.last_seen_at >= LAST_SEEN_REFRESH)


def require_web_session(uow: UnitOfWork, web_session_id: str) -> Actor:
    """The same judgement by the sign-in's id: inside a dashboard write (a form post
    signed out since it was checked records nothing) and for live streams' re-checks."""
    uow.session.flush()
    found = uow.session.execute(_BY_ID, {"web_session_id": web_session_id}).first()
    return _judge(uow, found, uow.opened_at)


def _judge(uow: UnitOfWork, found: Any, now: datetime) -> Actor:
    """The one rule for whether a sign-in holds (module docstring); `found` is a row of
    `_SIGN_IN`, or None."""
    settings = uow.settings
    if found is None:
        raise Unauthenticated("sign in to the dashboard first")
    if found.ended_at is not None:
        raise Unauthenticated(f"the dashboard session has ended ({found.end_reason})")
    if found.disabled_at is not None:
        raise Unauthenticated("the principal is disabled")
    if found.signed_in_with_token_id is not None and found.token_revoked_at is not None:
        raise Unauthenticated("the token used to sign in was revoked")
    if now >= found.created_at + timedelta(seconds=settings.web_session_max_age_seconds):
        raise Unauthenticated("the dashboard session reached its maximum age")
    if now >= found.last_seen_at + timedelta(seconds=settings.web_idle_timeout_seconds):
        raise Unauthenticated("the dashboard session was idle too long")
    identify(found.principal_id, None)  # the request's log lines say whose it is
    return Actor(
        principal_id=found.principal_id,
        principal_name=found.principal_name,
        kind=found.principal_kind,
        is_operator=found.is_operator,
        credential=CredentialKind.WEB,
        web_session_id=found.id,
    )


def refresh_web_session(uow: UnitOfWork, web_session_id: str) -> None:
    """Record that the sign-in was used now (when `DashboardViewer.refresh_due`)."""
    uow.no_lock_needed("one conditional UPDATE that only moves last_seen_at forward")
    now = uow.now()
    uow.session.execute(
        update(WebSession)
        .where(
            WebSession.id == web_session_id,
            WebSession.ended_at.is_(None),
            WebSession.last_seen_at < now,
        )
        .values(last_seen_at=now)
    )


def end_web_session(uow: UnitOfWork, secret: str, *, reason: str = SIGNED_OUT) -> bool:
    """Sign out the sign-in behind a cookie's secret; False if it had already ended."""
    condition = WebSession.secret_hash == tokens.hash_secret(secret)
    uow.no_lock_needed("one conditional UPDATE that ends only a sign-in not ended yet")
    return end_web_sessions(uow, condition, uow.now(), reason) > 0


def end_web_sessions(
    uow: UnitOfWork, condition: ColumnElement[bool], now: datetime, reason: str
) -> int:
    """End every live sign-in matching `condition`; how many ended."""
    reason = reason[:200]
    ended = uow.session.execute(
        update(WebSession)
        .where(condition, WebSession.ended_at.is_(None))
        .values(ended_at=now, end_reason=reason)
        .returning(WebSession.id, WebSession.principal_id)
    ).all()
    for web_session_id, principal_id in ended:
        record_event(
            uow,
            IdentityEvent.WEB_SESSION_ENDED,
            About(None, web_session_id),
            by=None,
            payload={"principal": principal_id, "reason": reason},
        )
    return len(ended)
