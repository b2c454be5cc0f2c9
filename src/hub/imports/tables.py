"""Tables of the imports module: the reports, and what each source item last imported.

Every row carries `project_id`; a source item's task and its last report are composite
foreign keys `(project_id, x_id) -> x(project_id, id)`, so an import state can never
point at another project's task.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    ForeignKey,
    ForeignKeyConstraint,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from hub.storage.base import Base, JSONDocument, UTCDateTime


class ImportReport(Base):
    """One import (or dry run): who, when, from what, how many items had each outcome,
    and the items that were not unchanged (`items`, compact JSON: `_reports`)."""

    __tablename__ = "import_reports"
    # (project_id, id): composite foreign keys point at it, and a project's reports are
    # listed newest first by it (ids sort by creation time).
    __table_args__ = (UniqueConstraint("project_id", "id"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    principal_id: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    session_id: Mapped[str | None] = mapped_column(ForeignKey("agent_sessions.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    source: Mapped[str] = mapped_column(String(200), default="")
    dry_run: Mapped[bool] = mapped_column(Boolean)
    partial: Mapped[bool] = mapped_column(Boolean)
    created: Mapped[int] = mapped_column(Integer)
    updated: Mapped[int] = mapped_column(Integer)
    unchanged: Mapped[int] = mapped_column(Integer)
    conflicts: Mapped[int] = mapped_column(Integer)
    skipped_closed: Mapped[int] = mapped_column(Integer)
    invalid: Mapped[int] = mapped_column(Integer)
    items: Mapped[list[list[Any]]] = mapped_column(JSONDocument, default=list)


class ImportSource(Base):
    """A source item as last imported: its task, the digest of its content then and the
    task's revision then (a later revision: the task changed in hub since), and the
    report that wrote this row. Rewritten only when an import writes the task."""

    __tablename__ = "import_sources"
    __table_args__ = (
        ForeignKeyConstraint(["project_id", "task_id"], ["tasks.project_id", "tasks.id"]),
        ForeignKeyConstraint(
            ["project_id", "report_id"], ["import_reports.project_id", "import_reports.id"]
        ),
    )

    project_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    source_system: Mapped[str] = mapped_column(String(100), primary_key=True)
    source_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    task_id: Mapped[str] = mapped_column(String(40))
    fingerprint: Mapped[str] = mapped_column(String(64))
    task_revision: Mapped[int] = mapped_column(Integer)
    report_id: Mapped[str] = mapped_column(String(40))
    imported_at: Mapped[datetime] = mapped_column(UTCDateTime)
