from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from hub.projects.vocabulary import RecoveryMode, ReviewPolicy
from hub.storage.base import Base, UTCDateTime, Vocabulary, one_of


class Project(Base):
    __tablename__ = "projects"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))  # display only: not identity
    description: Mapped[str] = mapped_column(Text, default="")
    policy_revision: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    created_by: Mapped[str] = mapped_column(ForeignKey("principals.id"))


class Repository(Base):
    __tablename__ = "repositories"
    __table_args__ = (
        UniqueConstraint("project_id", "binding"),
        # Target of composite foreign keys: a row can only point at a repository of its
        # own project (cross-project integrity in the database, not only in code).
        UniqueConstraint("project_id", "id"),
        Index("ix_repositories_binding", "binding"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    remote_url: Mapped[str] = mapped_column(String(500))
    binding: Mapped[str] = mapped_column(String(500))
    default_branch: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class ProjectAlias(Base):
    __tablename__ = "project_aliases"
    __table_args__ = (
        ForeignKeyConstraint(
            ["project_id", "repository_id"], ["repositories.project_id", "repositories.id"]
        ),
        Index("ix_project_aliases_alias", "alias"),
    )

    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"), primary_key=True)
    alias: Mapped[str] = mapped_column(String(120), primary_key=True)  # lower-cased
    repository_id: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class ProjectPolicy(Base):
    """One immutable revision of a project's policy; `projects.policy_revision` is current."""

    __tablename__ = "project_policies"
    __table_args__ = (
        CheckConstraint(one_of("review_policy", ReviewPolicy), name="review_policy"),
        CheckConstraint(one_of("recovery_mode", RecoveryMode), name="recovery_mode"),
        CheckConstraint("heartbeat_seconds < lease_seconds", name="heartbeat_below_lease"),
    )

    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"), primary_key=True)
    revision: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    review_policy: Mapped[ReviewPolicy] = mapped_column(Vocabulary(ReviewPolicy, 20))
    required_agent_approvals: Mapped[int] = mapped_column(Integer)
    required_human_approvals: Mapped[int] = mapped_column(Integer)
    human_may_approve_own_agent: Mapped[bool] = mapped_column(Boolean)
    recovery_mode: Mapped[RecoveryMode] = mapped_column(Vocabulary(RecoveryMode, 20))
    lease_seconds: Mapped[int] = mapped_column(Integer)
    heartbeat_seconds: Mapped[int] = mapped_column(Integer)
    max_watch_window_seconds: Mapped[int] = mapped_column(Integer)
    max_active_attempts_per_session: Mapped[int] = mapped_column(Integer)
    # Whether the project's rule delegations apply: with it off, only operators revise
    # binding rules, whatever was delegated (docs/design.md, "Knowledge").
    agents_may_revise_rules: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    created_by: Mapped[str] = mapped_column(ForeignKey("principals.id"))
