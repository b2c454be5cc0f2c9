"""Agent sessions listed for people: the live ones and the ended ones, a bounded page.

A session is live while it has not ended, the personal token that opened it is not
revoked and its principal is not disabled: the same judgement authentication makes
(`hub.identity.service.authenticate`), so a session cut off by a revocation is listed
with the ended ones at once, with no background job to mark it.
"""

from __future__ import annotations

from sqlalchemy import and_, func, not_, or_, select
from sqlalchemy.orm import aliased

from hub.identity.tables import AgentSession, ApiToken, Principal
from hub.identity.views import SessionSummary
from hub.mapping import view_of
from hub.storage.unit_of_work import UnitOfWork

_OPENER = aliased(ApiToken)
_LIVE = and_(
    AgentSession.ended_at.is_(None),
    Principal.disabled_at.is_(None),
    or_(AgentSession.opened_with_token_id.is_(None), _OPENER.revoked_at.is_(None)),
)
_LISTED = (
    select(AgentSession, Principal.name, Principal.disabled_at, _OPENER.revoked_at)
    .join(Principal, Principal.id == AgentSession.principal_id)
    .outerjoin(_OPENER, _OPENER.id == AgentSession.opened_with_token_id)
)


def agent_sessions(
    uow: UnitOfWork,
    *,
    live: bool,
    limit: int,
    opened_with_token_id: str | None = None,
) -> list[SessionSummary]:
    """The live (or the ended and cut-off) sessions, newest first, at most `limit`;
    `opened_with_token_id` narrows them to the sessions one personal token opened."""
    statement = _LISTED.where(_LIVE if live else not_(_LIVE))
    if opened_with_token_id is not None:
        statement = statement.where(AgentSession.opened_with_token_id == opened_with_token_id)
    rows = uow.session.execute(
        statement.order_by(AgentSession.started_at.desc(), AgentSession.id.desc()).limit(limit)
    ).all()
    return [_summary(row, name, disabled_at is not None, revoked_at is not None)
            for row, name, disabled_at, revoked_at in rows]


def count_live_sessions(uow: UnitOfWork) -> int:
    """How many agent sessions are live now, judged as authentication judges them. Only
    the sessions not ended are read (`ix_agent_sessions_open`), however many have ended."""
    value = uow.session.scalar(
        select(func.count())
        .select_from(AgentSession)
        .join(Principal, Principal.id == AgentSession.principal_id)
        .outerjoin(_OPENER, _OPENER.id == AgentSession.opened_with_token_id)
        .where(_LIVE)
    )
    return int(value or 0)


def _summary(
    row: AgentSession, principal_name: str, disabled: bool, opener_revoked: bool
) -> SessionSummary:
    cut_off = None
    if row.ended_at is None:
        if disabled:
            cut_off = "its principal is disabled"
        elif opener_revoked:
            cut_off = "the personal token that opened it was revoked"
    return view_of(SessionSummary, row, principal_name=principal_name, cut_off=cut_off)
