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
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from hub.integration.vocabulary import (
    IntegrationState,
    RecordedOutcome,
    TargetReservationState,
    Verification,
)
from hub.storage.base import Base, JSONDocument, UTCDateTime, Vocabulary, one_of

_UNCERTAIN = f"state = '{IntegrationState.UNCERTAIN}'"


class Integration(Base):
    __tablename__ = "integrations"
    __table_args__ = (
        UniqueConstraint("project_id", "id"),
        ForeignKeyConstraint(
            ["project_id", "submission_id"], ["submissions.project_id", "submissions.id"]
        ),
        ForeignKeyConstraint(["project_id", "attempt_id"], ["attempts.project_id", "attempts.id"]),
        ForeignKeyConstraint(
            ["project_id", "repository_id"], ["repositories.project_id", "repositories.id"]
        ),
        CheckConstraint(one_of("state", IntegrationState), name="state"),
        Index("ix_integrations_submission_id", "submission_id"),
        # The UNCERTAIN ones, across projects, longest-standing first.
        Index(
            "ix_integrations_uncertain",
            "updated_at",
            sqlite_where=text(_UNCERTAIN),
            postgresql_where=text(_UNCERTAIN),
        ),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40))
    submission_id: Mapped[str] = mapped_column(String(40))
    task_id: Mapped[str] = mapped_column(String(40))  # the implementation task
    integration_task_id: Mapped[str] = mapped_column(String(40))
    attempt_id: Mapped[str] = mapped_column(String(40))
    repository_id: Mapped[str] = mapped_column(String(40))
    binding: Mapped[str] = mapped_column(String(500))
    target_branch: Mapped[str] = mapped_column(String(255))
    candidate_revision: Mapped[str] = mapped_column(String(64))
    policy_revision: Mapped[int] = mapped_column(Integer)
    # The target as observed at readiness; a TARGET_MOVED report replaces it.
    expected_base_revision: Mapped[str] = mapped_column(String(64))
    result_revision: Mapped[str | None] = mapped_column(String(64))
    state: Mapped[IntegrationState] = mapped_column(Vocabulary(IntegrationState, 20))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class IntegrationReport(Base):
    """Every outcome reported for an integration, with who reported it and how verified."""

    __tablename__ = "integration_reports"
    __table_args__ = (
        ForeignKeyConstraint(
            ["project_id", "integration_id"], ["integrations.project_id", "integrations.id"]
        ),
        CheckConstraint(one_of("outcome", RecordedOutcome), name="outcome"),
        CheckConstraint(one_of("verified_how", Verification), name="verified_how"),
        Index("ix_integration_reports_integration_id", "integration_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40))
    integration_id: Mapped[str] = mapped_column(String(40))
    outcome: Mapped[RecordedOutcome] = mapped_column(Vocabulary(RecordedOutcome, 20))
    base_revision: Mapped[str | None] = mapped_column(String(64))
    result_revision: Mapped[str | None] = mapped_column(String(64))
    verified_how: Mapped[Verification] = mapped_column(Vocabulary(Verification, 24))
    note: Mapped[str] = mapped_column(Text, default="")
    reported_by: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    # The attempt that reported (none for reconciliations and operator releases).
    attempt_id: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class IntegrationReservation(Base):
    """The exclusive right to publish into one target branch of one remote.

    Keyed by the normalised repository binding and branch, not by project: two projects
    bound to the same remote share it (docs/design.md, "Integration").
    """

    __tablename__ = "integration_reservations"
    __table_args__ = (CheckConstraint(one_of("state", TargetReservationState), name="state"),)

    key: Mapped[str] = mapped_column(String(800), primary_key=True)
    integration_id: Mapped[str] = mapped_column(ForeignKey("integrations.id"))
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    state: Mapped[TargetReservationState] = mapped_column(Vocabulary(TargetReservationState, 12))
    acquired_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Validation(Base):
    __tablename__ = "validations"
    __table_args__ = (
        ForeignKeyConstraint(
            ["project_id", "integration_id"], ["integrations.project_id", "integrations.id"]
        ),
        Index("ix_validations_integration_id", "integration_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40))
    integration_id: Mapped[str] = mapped_column(String(40))
    result_revision: Mapped[str] = mapped_column(String(64))
    passed: Mapped[bool] = mapped_column(Boolean)
    evidence: Mapped[list[str]] = mapped_column(JSONDocument, default=list)
    summary: Mapped[str] = mapped_column(Text, default="")
    reported_by: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
