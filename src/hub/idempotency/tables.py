from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from hub.storage.base import Base, JSONDocument, UTCDateTime


class Receipt(Base):
    """The outcome of one keyed mutation; pruned to a tombstone (no result) after retention."""

    __tablename__ = "idempotency_receipts"
    __table_args__ = (Index("ix_idempotency_receipts_created_at", "created_at"),)

    principal_id: Mapped[str] = mapped_column(ForeignKey("principals.id"), primary_key=True)
    operation: Mapped[str] = mapped_column(String(64), primary_key=True)
    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64))
    result: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument)
    tombstone: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
