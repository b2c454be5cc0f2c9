"""The identity module's vocabulary, declared once: the tables hold these types; the
API exposes them as its GraphQL enums."""

from __future__ import annotations

from enum import StrEnum


class PrincipalKind(StrEnum):
    HUMAN = "human"
    AGENT = "agent"
    SERVICE = "service"


class CredentialKind(StrEnum):
    """The credential a request came with (`system`: the coordinator itself)."""

    PERSONAL = "personal"
    SESSION = "session"
    REPORTER = "reporter"
    WEB = "web"
    SYSTEM = "system"


class TokenKind(StrEnum):
    """What an API token was issued for (a subset of `CredentialKind`)."""

    PERSONAL = "personal"
    SESSION = "session"
    REPORTER = "reporter"


class ThrottledBy(StrEnum):
    """What a dashboard sign-in attempt is counted against (`login_throttles`)."""

    ACCOUNT = "account"  # the name typed, whether or not a principal has it
    ADDRESS = "address"  # the client's network address


class IdentityEvent(StrEnum):
    """The events the identity module appends."""

    PRINCIPAL_CREATED = "principal.created"
    PRINCIPAL_DISABLED = "principal.disabled"
    PRINCIPAL_ENABLED = "principal.enabled"
    TOKEN_CREATED = "token.created"
    TOKEN_REVOKED = "token.revoked"
    SESSION_STARTED = "session.started"
    SESSION_ENDED = "session.ended"
    WEB_SESSION_STARTED = "web_session.started"
    WEB_SESSION_ENDED = "web_session.ended"
