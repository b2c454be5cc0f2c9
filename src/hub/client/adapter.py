"""What the harness saw happen, told to hub (`recordAdapterEvent`), and a resume as
reconciliation (docs/agent-cli.md, "Harness hooks").

An adapter event is sent with the session token and takes no idempotency key: the
server records the latest event on the session and, when the event names the state
file's attempt, a note on it; sending the same event again records it again, and a
relinquish fired twice is acknowledged. No event claims, renews or finishes anything;
RELINQUISHED gives the named attempt back.

A resume is reconciliation (docs/design.md, "Offline work"): the RESUMED event answers
what this session holds now (its current attempts, with a serverTime), the state file's
attempt is brought in step with that answer (or re-read, if the session no longer holds
it), and what was found is returned beside the requests still pending. A resume never
claims, never resends a pending request and never touches a checkout: a pending request
is resolved by rerunning its own command, against the checkout as it was sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from hub.client.api import HubApi
from hub.client.engine import ClientEngine, require_session
from hub.client.errors import ProblemError
from hub.client.operations import Mutation
from hub.client.results import AdapterEventRecorded, Attempt
from hub.client.state import AgentState, AttemptRecord, PendingOperation


class AdapterEvent(StrEnum):
    """The values of the API's AdapterEvent that the hooks send (COMPLETED is the
    agent's to say, with its submission, not a harness's)."""

    TURN_ENDED = "TURN_ENDED"
    COMPACTED = "COMPACTED"
    DISCONNECTED = "DISCONNECTED"
    RESUMED = "RESUMED"
    RELINQUISHED = "RELINQUISHED"


@dataclass(frozen=True)
class Resumed:
    """What a resume found: the session's attempts as hub holds them, the state file's
    attempt after reconciling, and the requests still unresolved."""

    answer: AdapterEventRecorded
    attempt: AttemptRecord | None  # the state file's, reconciled (None: it holds none)
    reread: bool  # the session no longer holds it: it was read again on its own
    unknown: tuple[Attempt, ...]  # held by the session on hub, absent from the state file
    pending: tuple[PendingOperation, ...]


@dataclass(frozen=True)
class Disconnected:
    """The harness session ended: the event recorded, and the attempt given back (with
    RELINQUISHED) or why it was kept."""

    event: AdapterEvent
    answer: AdapterEventRecorded
    attempt: AttemptRecord | None
    kept_because: str | None = None  # a relinquish asked for and not sent, and why


class AdapterCommands(ClientEngine):
    def record_adapter_event(
        self, event: AdapterEvent, *, detail: str = "", name_attempt: bool = True
    ) -> AdapterEventRecorded:
        """Tell hub what the harness saw; with `name_attempt`, note it on the state
        file's attempt while that attempt is live."""
        state = self.state_file.read()
        server, session = require_session(state)
        attempt = _live(state) if name_attempt else None
        with self.api(server, session.token) as api:
            return _send(api, session.id, event, detail, attempt)

    def resume(self, *, detail: str = "") -> Resumed:
        """Reconcile with hub after a restart: never a claim, never a resend."""
        state = self.state_file.read()
        server, session = require_session(state)
        with self.api(server, session.token) as api:
            answer = _send(api, session.id, AdapterEvent.RESUMED, detail, _live(state))
            local = state.attempt
            held = next((a for a in answer.attempts if local and a.id == local.id), None)
            record = local
            if held is not None:
                record = self._store_snapshot(held, answer.server_time, answer.sent.wall)
            elif local is not None:
                # Not among the session's current attempts: it ended, or its task was
                # recovered by someone else. Its own record says which.
                record = self._reread_attempt(api, local.id)
        unknown = tuple(a for a in answer.attempts if local is None or a.id != local.id)
        return Resumed(
            answer=answer,
            attempt=record,
            reread=local is not None and held is None,
            unknown=unknown,
            pending=tuple(self.state_file.read().pending.values()),
        )

    def disconnect(self, *, relinquish: bool = False, detail: str = "") -> Disconnected:
        """The harness session ended: DISCONNECTED, or with `relinquish` RELINQUISHED,
        giving the state file's live attempt back. A relinquish is not sent while a
        request is pending (its retry needs the attempt), nor once the lease has
        expired (the task is a recovery candidate already); DISCONNECTED is, instead."""
        state = self.state_file.read()
        server, session = require_session(state)
        attempt = _live(state)
        kept = None
        if relinquish and attempt is None:
            kept = "the state file holds no live attempt"
        elif relinquish and state.pending:
            names = ", ".join(sorted(state.pending))
            kept = f"unresolved requests ({names}) need the attempt: rerun them first"
        event = AdapterEvent.RELINQUISHED if relinquish and kept is None else None
        with self.api(server, session.token) as api:
            if event is not None and attempt is not None:
                try:
                    answer = _send(api, session.id, event, detail, attempt)
                except ProblemError as problem:
                    if problem.code not in _CANNOT_GIVE_BACK:
                        raise
                    kept = f"{problem.code}: {problem.message}"
                else:
                    record = self._reread_attempt(api, attempt.id)
                    return Disconnected(event, answer, record)
            answer = _send(api, session.id, AdapterEvent.DISCONNECTED, detail, attempt)
        return Disconnected(AdapterEvent.DISCONNECTED, answer, attempt, kept)


# A relinquish the server refuses because the attempt holds nothing to give back.
_CANNOT_GIVE_BACK = {"LEASE_EXPIRED", "STALE_GENERATION", "INVALID_TRANSITION"}


def _live(state: AgentState) -> AttemptRecord | None:
    """The state file's attempt while it may still hold its task: the one an event names."""
    attempt = state.attempt
    if attempt is None or attempt.state != "ACTIVE" or not attempt.is_current:
        return None
    return attempt


def _send(
    api: HubApi,
    session_id: str,
    event: AdapterEvent,
    detail: str,
    attempt: AttemptRecord | None,
) -> AdapterEventRecorded:
    sent: dict[str, object] = {"sessionId": session_id, "event": event.value, "detail": detail}
    if attempt is not None:
        sent |= {"attemptId": attempt.id, "generation": attempt.generation}
    return api.send(Mutation("recordAdapterEvent", sent, AdapterEventRecorded))


def lease_words(attempt: Attempt | AttemptRecord, server_time: datetime) -> str:
    """An attempt's lease as hub judged it at `server_time`."""
    if attempt.state != "ACTIVE":
        return f"{attempt.state}: it holds no lease any more"
    if attempt.lease_expired:
        return (
            f"its lease expired at {attempt.expires_at.isoformat()} (server time): the task "
            f"is a recovery candidate (`hub agent recover {attempt.task_id}`)"
        )
    left = (attempt.expires_at - server_time).total_seconds()
    return (
        f"its lease holds until {attempt.expires_at.isoformat()} (server time, {left:.0f}s "
        f"left); heartbeat every {attempt.heartbeat_seconds}s with `hub agent heartbeat`"
    )
