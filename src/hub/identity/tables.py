from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from hub.identity.vocabulary import PrincipalKind, ThrottledBy, TokenKind
from hub.storage.base import Base, JSONDocument, UTCDateTime, Vocabulary, one_of


class Principal(Base):
    __tablename__ = "principals"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(120), unique=True)
    kind: Mapped[PrincipalKind] = mapped_column(Vocabulary(PrincipalKind, 16))
    is_operator: Mapped[bool] = mapped_column(Boolean, default=False)
    # Argon2id; only humans log in to the dashboard with a password.
    password_hash: Mapped[str | None] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    disabled_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class AgentSession(Base):
    __tablename__ = "agent_sessions"
    __table_args__ = (
        Index("ix_agent_sessions_principal_id", "principal_id"),
        # The sessions not ended: the live ones are counted among them, not among all.
        Index(
            "ix_agent_sessions_open",
            "principal_id",
            sqlite_where=text("ended_at IS NULL"),
            postgresql_where=text("ended_at IS NULL"),
        ),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    principal_id: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    workstation: Mapped[str] = mapped_column(String(200))
    harness: Mapped[str] = mapped_column(String(120))
    harness_instance: Mapped[str] = mapped_column(String(200))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    end_reason: Mapped[str | None] = mapped_column(String(500))
    # The personal token that opened the session: revoking it ends the session's authority.
    opened_with_token_id: Mapped[str | None] = mapped_column(
        ForeignKey("api_tokens.id", use_alter=True)
    )
    last_adapter_event: Mapped[str | None] = mapped_column(String(32))
    last_adapter_event_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class WebSession(Base):
    """A dashboard sign-in, kept on the server so that it can be ended.

    The browser's cookie carries only a random secret; the row keeps its SHA-256.
    Signing out, revoking the token used to sign in and disabling the principal end
    it (`ended_at`); idleness and age are judged at each request (docs/architecture.md,
    "The dashboard").
    """

    __tablename__ = "web_sessions"
    __table_args__ = (
        UniqueConstraint("secret_hash"),
        Index("ix_web_sessions_principal_id", "principal_id"),
        Index("ix_web_sessions_signed_in_with_token_id", "signed_in_with_token_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    secret_hash: Mapped[str] = mapped_column(String(64))
    principal_id: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    # The personal token pasted to sign in (None after a password login): revoking it
    # signs the browser out.
    signed_in_with_token_id: Mapped[str | None] = mapped_column(ForeignKey("api_tokens.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # Refreshed at most once a minute, not on every request (no write per page view).
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    end_reason: Mapped[str | None] = mapped_column(String(200))


class ApiToken(Base):
    """A bearer credential. Only the SHA-256 of its secret is kept."""

    __tablename__ = "api_tokens"
    __table_args__ = (
        UniqueConstraint("secret_hash"),
        Index("ix_api_tokens_principal_id", "principal_id"),
        Index("ix_api_tokens_session_id", "session_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    principal_id: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    kind: Mapped[TokenKind] = mapped_column(Vocabulary(TokenKind, 16))
    label: Mapped[str] = mapped_column(String(200), default="")
    secret_hash: Mapped[str] = mapped_column(String(64))
    session_id: Mapped[str | None] = mapped_column(ForeignKey("agent_sessions.id"))
    # Reporter tokens: the attempt and watch window they are scoped to.
    scope: Mapped[dict[str, Any]] = mapped_column(JSONDocument, default=dict)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class LoginThrottle(Base):
    """Dashboard sign-in attempts counted against one name or one client address
    (`hub.identity._login_throttles`). In the database, so that every server process
    and a restart see the same count. A row is forgotten once `expires_at` has passed
    (its window ended and any lockout with it)."""

    __tablename__ = "login_throttles"
    __table_args__ = (
        CheckConstraint(one_of("throttled_by", ThrottledBy), name="throttled_by"),
        Index("ix_login_throttles_expires_at", "expires_at"),
    )

    throttled_by: Mapped[ThrottledBy] = mapped_column(
        Vocabulary(ThrottledBy, 16), primary_key=True
    )
    # The name as typed (case-folded), or the address; never a password.
    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    attempts: Mapped[int] = mapped_column(Integer)
    window_started_at: Mapped[datetime] = mapped_column(UTCDateTime)
    locked_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
