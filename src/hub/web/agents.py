"""The agents and sessions page (`/agents`): every live agent session across projects,
and the ended ones on a second tab.

A session is listed with its principal, workstation, harness and instance, its current
attempts with the time their leases have left, its last heartbeat (the latest renewal
of those leases) and the last event its harness reported (`recordAdapterEvent`). A
session whose personal token was revoked, or whose principal was disabled, no longer
acts: it is listed with the ended ones, saying why (`identity.agent_sessions`). Lease
times are coordinator time, judged when the page is read; each lease's state is said in
a word (fresh, stale, expired), never by colour alone. Operators see the actions of
`hub.web.actions` beside each session and attempt.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from hub.identity import service as identity
from hub.runtime import Runtime
from hub.storage.unit_of_work import UnitOfWork
from hub.web.signin import require_viewer
from hub.web.templates import render
from hub.work import service as work

# The page is bounded: the newest sessions first, at most this many per tab.
LIVE_LIMIT = 200
ENDED_LIMIT = 100
TABS = ("live", "ended")


@dataclass(frozen=True)
class AttemptLine:
    attempt: work.AttemptView
    task_title: str
    seconds_left: float  # until the lease expires; zero or less once it has

    @property
    def lease_state(self) -> str:
        """The lease in a word: `expired` (coordinator time reached its end), `stale`
        (still valid, but no progress for the stale-progress threshold) or `fresh`."""
        if self.attempt.lease_expired:
            return "expired"
        return "stale" if self.attempt.stale_progress else "fresh"

    @property
    def last_renewed_at(self) -> datetime:
        # Every claim and renewal sets the expiry to that instant plus the lease.
        return self.attempt.expires_at - timedelta(seconds=self.attempt.lease_seconds)


@dataclass(frozen=True)
class SessionLine:
    session: identity.SessionSummary
    attempts: list[AttemptLine]

    @property
    def last_heartbeat(self) -> datetime | None:
        renewals = [line.last_renewed_at for line in self.attempts]
        return max(renewals) if renewals else None


@dataclass(frozen=True)
class PrincipalGroup:
    """A principal and its sessions on the tab shown (anchored `principal-{id}`)."""

    principal_id: str
    principal_name: str
    sessions: list[SessionLine]


@dataclass(frozen=True)
class AgentsPage:
    tab: str
    groups: list[PrincipalGroup]
    session_count: int
    limit: int
    now: datetime

    @property
    def truncated(self) -> bool:
        return self.session_count >= self.limit


def read_agents_page(uow: UnitOfWork, *, tab: str) -> AgentsPage:
    live = tab == "live"
    limit = LIVE_LIMIT if live else ENDED_LIMIT
    sessions = identity.agent_sessions(uow, live=live, limit=limit)
    attempts = work.live_attempts_of_sessions(uow, [s.id for s in sessions])
    task_ids = sorted({a.task_id for found in attempts.values() for a in found})
    titles = {task.id: task.title for task in work.get_tasks(uow, task_ids)}
    now = uow.now()
    groups: dict[str, PrincipalGroup] = {}
    for session in sessions:
        lines = [
            AttemptLine(a, titles[a.task_id], (a.expires_at - now).total_seconds())
            for a in attempts.get(session.id, [])
        ]
        group = groups.setdefault(
            session.principal_id,
            PrincipalGroup(session.principal_id, session.principal_name, []),
        )
        group.sessions.append(SessionLine(session, lines))
    return AgentsPage(tab, list(groups.values()), len(sessions), limit, now)


def agents_routes(runtime: Runtime) -> list[BaseRoute]:
    async def agents_page(request: Request) -> Response:
        await require_viewer(runtime, request)
        tab = request.query_params.get("tab", "live")
        if tab not in TABS:
            tab = "live"
        page = await runtime.aread(lambda uow: read_agents_page(uow, tab=tab))
        return render(request, "agents.html", {"page": page})

    return [Route("/agents", agents_page, methods=["GET"])]
