"""The values identity's operations return, and who is calling: the authenticated
principal and the credential they used (`Actor`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hub.errors import (
    PermissionDenied,
)
from hub.identity.vocabulary import (
    CredentialKind,
    PrincipalKind,
    ThrottledBy,
)


@dataclass(frozen=True)
class Actor:
    principal_id: str
    principal_name: str
    kind: PrincipalKind
    is_operator: bool
    credential: CredentialKind
    token_id: str | None = None
    session_id: str | None = None
    # For the dashboard (credential "web"): the sign-in this request came with.
    web_session_id: str | None = None
    # For reporter tokens: {"attempt_id": …, "window_id": …}.
    scope: dict[str, Any] = field(default_factory=dict)

    @property
    def is_human(self) -> bool:
        return self.kind == PrincipalKind.HUMAN

    @property
    def is_reporter(self) -> bool:
        return self.credential == CredentialKind.REPORTER


def require_full_credential(actor: Actor) -> None:
    """Reporter tokens renew one lease and report that attempt's jobs; nothing else.
    The credential table (`hub.identity._permissions`) already refuses them every other
    API operation; services that must never run for a reporter keep this as a second
    line of defence."""
    if actor.is_reporter:
        raise PermissionDenied("a reporter token can only renew its attempt and report its jobs")


SYSTEM = Actor(
    principal_id="system",
    principal_name="system",
    kind=PrincipalKind.SERVICE,
    is_operator=True,
    credential=CredentialKind.SYSTEM,
)
"""The actor for maintenance the server does by itself (pruning); never authenticates."""


@dataclass(frozen=True)
class PrincipalView:
    id: str
    name: str
    kind: PrincipalKind
    is_operator: bool
    created_at: datetime
    disabled_at: datetime | None


@dataclass(frozen=True)
class DisabledPrincipal:
    principal: PrincipalView
    sessions_ended: int
    tokens_revoked: int
    web_sessions_ended: int


@dataclass(frozen=True)
class TokenView:
    id: str
    principal_id: str
    kind: str
    label: str
    created_at: datetime
    revoked_at: datetime | None


@dataclass(frozen=True)
class IssuedToken:
    token: TokenView
    plaintext: str


@dataclass(frozen=True)
class SessionView:
    id: str
    principal_id: str
    workstation: str
    harness: str
    harness_instance: str
    started_at: datetime
    ended_at: datetime | None
    last_adapter_event: str | None


@dataclass(frozen=True)
class StartedSession:
    session: SessionView
    token: str


@dataclass(frozen=True)
class ViewerView:
    """Who a credential speaks for: its principal, its kind, and its agent session."""

    principal: PrincipalView
    credential: str
    session: SessionView | None


@dataclass(frozen=True)
class SessionSummary:
    """An agent session as the dashboard's agents page lists it: who, where, what the
    harness last saw, and whether it still acts. A session not ended can still be cut
    off: the personal token that opened it revoked, or its principal disabled (judged
    when read, as authentication judges it)."""

    id: str
    principal_id: str
    principal_name: str
    workstation: str
    harness: str
    harness_instance: str
    started_at: datetime
    ended_at: datetime | None
    end_reason: str | None
    last_adapter_event: str | None
    last_adapter_event_at: datetime | None
    opened_with_token_id: str | None
    cut_off: str | None  # why a session not ended no longer acts, if it does not

    @property
    def live(self) -> bool:
        return self.ended_at is None and self.cut_off is None


@dataclass(frozen=True)
class LoginThrottleView:
    """Sign-in attempts counted against a name or an address (never a password)."""

    throttled_by: ThrottledBy
    key: str
    attempts: int
    window_started_at: datetime
    locked_until: datetime | None  # None: not locked out now


@dataclass(frozen=True)
class ClearedLoginLockout:
    account: str | None
    address: str | None
    cleared: list[LoginThrottleView]  # what was counted before it was cleared
