from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from hub.storage.base import Base, JSONDocument, UTCDateTime


class EventStream(Base):
    """The last sequence number stored per stream. SQLite: advanced by each writing
    transaction (locked last in it). PostgreSQL: advanced only by the numbering step
    (`hub_number_events`, migration 0016), never by a writing transaction."""

    __tablename__ = "event_streams"

    stream: Mapped[str] = mapped_column(String(64), primary_key=True)
    last_seq: Mapped[int] = mapped_column(BigInteger, default=0)


class Event(Base):
    __tablename__ = "events"
    __table_args__ = (
        UniqueConstraint("stream", "seq"),
        Index("ix_events_project_id_seq", "project_id", "seq"),
    )

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    )
    stream: Mapped[str] = mapped_column(String(64))
    # NULL on PostgreSQL until the numbering step stores it (readers number such events
    # themselves meanwhile: `events.service._build_log`). PostgreSQL also has
    # `log_position` (the writing transaction's place in the log), written by hand in
    # migration 0016.
    seq: Mapped[int] = mapped_column(BigInteger, nullable=True)
    project_id: Mapped[str | None] = mapped_column(
        String(40), ForeignKey("projects.id", ondelete="RESTRICT")
    )
    kind: Mapped[str] = mapped_column(String(64))
    subject_id: Mapped[str] = mapped_column(String(64))
    actor_id: Mapped[str | None] = mapped_column(String(40))
    occurred_at: Mapped[datetime] = mapped_column(UTCDateTime)
    payload: Mapped[dict[str, Any]] = mapped_column(JSONDocument, default=dict)
