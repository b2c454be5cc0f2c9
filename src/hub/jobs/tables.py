"""Tables of the jobs module.

A job is separate from the attempt that launched it (docs/design.md, "Jobs and
evidence"): it keeps its own record after the attempt's lease ends. References to
work rows are composite `(project_id, x_id)` foreign keys, so the database refuses
a job or evidence that points into another project.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

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

from hub.jobs.vocabulary import OPEN_STATUSES, ArtifactAccess, ProducerStatus
from hub.storage.base import Base, JSONDocument, UTCDateTime, Vocabulary, one_of

_OPEN = one_of("status", OPEN_STATUSES)
_OPEN_WITH_DEADLINE = f"expected_deadline IS NOT NULL AND {_OPEN}"


class Job(Base):
    __tablename__ = "jobs"
    __table_args__ = (
        UniqueConstraint("project_id", "id"),
        # The client's job id is unique per project: registering it again is a replay.
        UniqueConstraint("project_id", "client_job_id"),
        ForeignKeyConstraint(["project_id", "task_id"], ["tasks.project_id", "tasks.id"]),
        ForeignKeyConstraint(["project_id", "attempt_id"], ["attempts.project_id", "attempts.id"]),
        CheckConstraint(one_of("status", ProducerStatus), name="status"),
        # The exit status is the producer's, recorded only with its terminal result.
        CheckConstraint(
            f"exit_status IS NULL OR status = '{ProducerStatus.FINISHED}'", name="exit_status"
        ),
        Index("ix_jobs_task_id", "task_id"),
        Index("ix_jobs_attempt_id_status", "attempt_id", "status"),
        # Open jobs with a declared deadline, by deadline: those past it, across projects.
        Index(
            "ix_jobs_open_deadline",
            "expected_deadline",
            sqlite_where=text(_OPEN_WITH_DEADLINE),
            postgresql_where=text(_OPEN_WITH_DEADLINE),
        ),
        # The attempts with a job still open, across projects: where holds are found.
        Index(
            "ix_jobs_open_attempt_id",
            "attempt_id",
            sqlite_where=text(_OPEN),
            postgresql_where=text(_OPEN),
        ),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    task_id: Mapped[str] = mapped_column(String(40))
    attempt_id: Mapped[str] = mapped_column(String(40))
    client_job_id: Mapped[str] = mapped_column(String(200))
    fingerprint: Mapped[str] = mapped_column(String(64))
    producer: Mapped[str] = mapped_column(String(200))
    runner_host: Mapped[str] = mapped_column(String(200))
    checkout: Mapped[str] = mapped_column(String(1000))
    snapshot: Mapped[str | None] = mapped_column(String(200))
    operation: Mapped[str] = mapped_column(String(200))
    invocation: Mapped[str] = mapped_column(Text)
    expected_deadline: Mapped[datetime | None] = mapped_column(UTCDateTime)
    freshness_seconds: Mapped[int] = mapped_column(Integer)
    status: Mapped[ProducerStatus] = mapped_column(Vocabulary(ProducerStatus, 12))
    exit_status: Mapped[int | None] = mapped_column(Integer)
    status_note: Mapped[str | None] = mapped_column(String(500))
    # What the observer said (its clock) and when the coordinator heard it (ours):
    # freshness is judged by the latter only, since workstation clocks are not synced.
    observed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_heard_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    observation_count: Mapped[int] = mapped_column(Integer, default=0)
    registered_at: Mapped[datetime] = mapped_column(UTCDateTime)
    registered_by: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The reservations the job declared it depends on (checked when it was registered).
    reservation_ids: Mapped[list[str]] = mapped_column(JSONDocument, default=list)


class Evidence(Base):
    """An immutable record of what a check run proved about one snapshot."""

    __tablename__ = "evidence"
    __table_args__ = (
        UniqueConstraint("project_id", "id"),
        ForeignKeyConstraint(["project_id", "task_id"], ["tasks.project_id", "tasks.id"]),
        ForeignKeyConstraint(["project_id", "attempt_id"], ["attempts.project_id", "attempts.id"]),
        ForeignKeyConstraint(["project_id", "job_id"], ["jobs.project_id", "jobs.id"]),
        CheckConstraint(one_of("artifact_access", ArtifactAccess), name="artifact_access"),
        # Exactly what was checked: a commit, or an explicit dirty-snapshot digest.
        CheckConstraint(
            "revision IS NOT NULL OR dirty_snapshot_digest IS NOT NULL", name="snapshot"
        ),
        Index("ix_evidence_task_id", "task_id"),
        Index("ix_evidence_job_id", "job_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    task_id: Mapped[str] = mapped_column(String(40))
    attempt_id: Mapped[str] = mapped_column(String(40))
    job_id: Mapped[str | None] = mapped_column(String(40))
    revision: Mapped[str | None] = mapped_column(String(64))
    tree_digest: Mapped[str | None] = mapped_column(String(128))
    dirty_snapshot_digest: Mapped[str | None] = mapped_column(String(128))
    changed_paths: Mapped[list[str]] = mapped_column(JSONDocument)
    check_definition_revision: Mapped[str] = mapped_column(String(200))
    config_fingerprint: Mapped[str] = mapped_column(String(200))
    environment_identity: Mapped[str] = mapped_column(String(200))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime] = mapped_column(UTCDateTime)
    inputs_stable: Mapped[bool] = mapped_column(Boolean)
    required_checks: Mapped[list[str]] = mapped_column(JSONDocument)
    # [{name, outcome, reason, logRef, artifactRefs}], as reported; never re-judged.
    checks: Mapped[list[dict[str, Any]]] = mapped_column(JSONDocument)
    producer_id: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    reviewer_id: Mapped[str | None] = mapped_column(ForeignKey("principals.id"))
    artifact_access: Mapped[ArtifactAccess] = mapped_column(Vocabulary(ArtifactAccess, 12))
    artifact_digests: Mapped[list[str]] = mapped_column(JSONDocument)
    wrapper_reported_success: Mapped[bool | None] = mapped_column(Boolean)
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime)


class WatchWindow(Base):
    """A declared wait: one attempt, one action, one deadline, one reporter token."""

    __tablename__ = "watch_windows"
    __table_args__ = (
        ForeignKeyConstraint(["project_id", "task_id"], ["tasks.project_id", "tasks.id"]),
        ForeignKeyConstraint(["project_id", "attempt_id"], ["attempts.project_id", "attempts.id"]),
        Index("ix_watch_windows_attempt_id", "attempt_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    task_id: Mapped[str] = mapped_column(String(40))
    attempt_id: Mapped[str] = mapped_column(String(40))
    session_id: Mapped[str] = mapped_column(ForeignKey("agent_sessions.id"))
    principal_id: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    action: Mapped[str] = mapped_column(String(500))
    token_id: Mapped[str] = mapped_column(ForeignKey("api_tokens.id"))
    opened_at: Mapped[datetime] = mapped_column(UTCDateTime)
    ends_at: Mapped[datetime] = mapped_column(UTCDateTime)
    closed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    close_reason: Mapped[str | None] = mapped_column(String(500))
