"""Who is calling: the authenticated principal and the credential they used."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from hub.errors import PermissionDenied

PrincipalKind = Literal["human", "agent", "service"]
PRINCIPAL_KINDS: tuple[PrincipalKind, ...] = ("human", "agent", "service")
Credential = Literal["personal", "session", "reporter", "web", "system"]


@dataclass(frozen=True)
class Actor:
    principal_id: str
    principal_name: str
    kind: PrincipalKind
    is_operator: bool
    credential: Credential
    token_id: str | None = None
    session_id: str | None = None
    # For the dashboard (credential "web"): the sign-in this request came with.
    web_session_id: str | None = None
    # For reporter tokens: {"attempt_id": …, "window_id": …}.
    scope: dict[str, Any] = field(default_factory=dict)

    @property
    def is_human(self) -> bool:
        return self.kind == "human"

    @property
    def is_reporter(self) -> bool:
        return self.credential == "reporter"


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
    kind="service",
    is_operator=True,
    credential="system",
)
"""The actor for maintenance the server does by itself (pruning); never authenticates."""
