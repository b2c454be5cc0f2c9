"""Tables of the resources module.

A resource's identity is `identity_key`, unique across the deployment: for project and
checkout resources it includes the project, for workstation and environment resources
it does not, so projects that share a physical machine or environment resolve it to one
reservation identity (docs/design.md, "Resources and recovery holds").
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    CheckConstraint,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    String,
    Text,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from hub.resources.vocabulary import ResourceMode, ResourceScope
from hub.storage.base import Base, UTCDateTime, Vocabulary, one_of


class Resource(Base):
    __tablename__ = "resources"
    __table_args__ = (
        CheckConstraint(one_of("scope", ResourceScope), name="scope"),
        CheckConstraint(one_of("mode", ResourceMode), name="mode"),
        # An exclusive resource has no units; a capacity resource has a positive total.
        CheckConstraint(
            f"(mode = '{ResourceMode.EXCLUSIVE}' AND capacity IS NULL) "
            f"OR (mode = '{ResourceMode.CAPACITY}' AND capacity > 0)",
            name="capacity",
        ),
        Index("ix_resources_project_id", "project_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    # The project that defined it; shared-scope resources serve every project.
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    scope: Mapped[ResourceScope] = mapped_column(Vocabulary(ResourceScope, 12))
    key: Mapped[str] = mapped_column(String(300))
    identity_key: Mapped[str] = mapped_column(String(400), unique=True)
    mode: Mapped[ResourceMode] = mapped_column(Vocabulary(ResourceMode, 10))
    capacity: Mapped[int | None] = mapped_column(Integer)
    unit: Mapped[str] = mapped_column(String(40), default="")
    description: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    created_by: Mapped[str] = mapped_column(ForeignKey("principals.id"))


class Reservation(Base):
    """Units of one resource held for an attempt, or for a job that attempt launched."""

    __tablename__ = "reservations"
    __table_args__ = (
        ForeignKeyConstraint(["project_id", "task_id"], ["tasks.project_id", "tasks.id"]),
        ForeignKeyConstraint(["project_id", "attempt_id"], ["attempts.project_id", "attempts.id"]),
        ForeignKeyConstraint(["project_id", "job_id"], ["jobs.project_id", "jobs.id"]),
        CheckConstraint("units > 0", name="units"),
        # Who cleared a hold and why are recorded together, never one without the other.
        CheckConstraint(
            "(hold_cleared_by IS NULL) = (hold_clear_reason IS NULL)", name="hold_cleared"
        ),
        Index(
            "ix_reservations_active_resource_id",
            "resource_id",
            sqlite_where=text("released_at IS NULL"),
            postgresql_where=text("released_at IS NULL"),
        ),
        Index("ix_reservations_attempt_id", "attempt_id"),
        Index("ix_reservations_task_id", "task_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    resource_id: Mapped[str] = mapped_column(ForeignKey("resources.id"))
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    task_id: Mapped[str] = mapped_column(String(40))
    attempt_id: Mapped[str] = mapped_column(String(40))
    job_id: Mapped[str | None] = mapped_column(String(40))
    units: Mapped[int] = mapped_column(Integer)
    acquired_at: Mapped[datetime] = mapped_column(UTCDateTime)
    acquired_by: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    released_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    release_reason: Mapped[str | None] = mapped_column(String(500))
    hold_cleared_by: Mapped[str | None] = mapped_column(ForeignKey("principals.id"))
    hold_clear_reason: Mapped[str | None] = mapped_column(Text)


class CapacityObservation(Base):
    """A dated reading of what was available: an observation, not a promise."""

    __tablename__ = "capacity_observations"
    __table_args__ = (
        Index("ix_capacity_observations_resource_id_recorded_at", "resource_id", "recorded_at"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    resource_id: Mapped[str] = mapped_column(ForeignKey("resources.id"))
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    available: Mapped[int] = mapped_column(Integer)
    total: Mapped[int | None] = mapped_column(Integer)
    source: Mapped[str] = mapped_column(String(200))
    observed_at: Mapped[datetime] = mapped_column(UTCDateTime)
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime)
    recorded_by: Mapped[str] = mapped_column(ForeignKey("principals.id"))
