"""API tokens: a principal's personal tokens and a watch window's reporter tokens
issued, any token revoked or read.

A token's secret is returned once, by the operation that issued it (`IssuedToken`); its
format, and how a presented secret is checked, live in `_tokens`. Session tokens are
issued with their session (`_agent_sessions.start_session`).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select

from hub.errors import NotFound, PermissionDenied
from hub.events.service import About, record_event
from hub.identity import _tokens as tokens
from hub.identity._principals import clean, principal_row
from hub.identity._web_sessions import end_web_sessions
from hub.identity.tables import ApiToken, WebSession
from hub.identity.views import Actor, IssuedToken, TokenView
from hub.identity.vocabulary import IdentityEvent, TokenKind
from hub.mapping import view_of
from hub.storage.unit_of_work import UnitOfWork


def create_token(uow: UnitOfWork, *, principal: str, label: str = "") -> IssuedToken:
    owner = principal_row(uow, principal, lock=True)
    if owner.disabled_at is not None:
        raise PermissionDenied(f"principal {owner.name!r} is disabled")
    issued = issue_token(uow, owner.id, TokenKind.PERSONAL, clean("label", label, required=False))
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
    reason = clean("reason", reason, max_length=500, required=False)
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
    return token_view(row)


def get_token(uow: UnitOfWork, token_id: str) -> TokenView:
    row = uow.session.get(ApiToken, token_id)
    if row is None:
        raise NotFound("token", token_id)
    return token_view(row)


def list_tokens(uow: UnitOfWork, *, principal: str) -> list[TokenView]:
    owner = principal_row(uow, principal)
    rows = uow.session.scalars(
        select(ApiToken).where(ApiToken.principal_id == owner.id).order_by(ApiToken.created_at)
    ).all()
    return [token_view(row) for row in rows]


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
    issued = issue_token(
        uow,
        principal_id,
        TokenKind.REPORTER,
        clean("label", label),
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


def issue_token(
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
    return IssuedToken(token=token_view(row), plaintext=minted.plaintext)


def token_view(row: ApiToken) -> TokenView:
    return view_of(TokenView, row)
