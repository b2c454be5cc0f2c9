"""Who is calling: the authenticated principal and the credential they used."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

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
    # For reporter tokens: {"attempt_id": …, "window_id": …}.
    scope: dict[str, Any] = field(default_factory=dict)

    @property
    def is_human(self) -> bool:
        return self.kind == "human"

    @property
    def is_reporter(self) -> bool:
        return self.credential == "reporter"


SYSTEM = Actor(
    principal_id="system",
    principal_name="system",
    kind="service",
    is_operator=True,
    credential="system",
)
"""The actor for maintenance the server does by itself (pruning); never authenticates."""
