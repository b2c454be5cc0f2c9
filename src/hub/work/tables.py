"""Tables of the work module.

Every row carries `project_id`, and references between work rows are composite
foreign keys `(project_id, x_id) -> x(project_id, id)`: the database itself refuses to
link a record to a record of another project.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
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
from sqlalchemy.ext.hybrid import hybrid_method
from sqlalchemy.orm import Mapped, mapped_column
from sqlalchemy.sql.elements import ColumnElement

from hub.storage.base import Base, JSONDocument, UTCDateTime, Vocabulary, one_of
from hub.work.vocabulary import (
    CLAIMABLE_STATES,
    AttemptKind,
    AttemptNoteKind,
    AttemptState,
    CloseReason,
    LinkKind,
    RecoveryDisposition,
    SubmissionOutcome,
    TaskKind,
    TaskState,
)

_READY = f"{one_of('state', CLAIMABLE_STATES)} AND blocked_count = 0"
_ACTIVE = f"state = '{AttemptState.ACTIVE}'"
_IN_PROGRESS = f"state = '{TaskState.IN_PROGRESS}'"
_AWAITING_REVIEW = f"state = '{TaskState.AWAITING_REVIEW}'"
BLOCKED = "blocked_count > 0"


class Task(Base):
    __tablename__ = "tasks"
    __table_args__ = (
        UniqueConstraint("project_id", "id"),
        UniqueConstraint("project_id", "source_system", "source_id"),
        ForeignKeyConstraint(["project_id", "parent_id"], ["tasks.project_id", "tasks.id"]),
        CheckConstraint(one_of("kind", TaskKind), name="kind"),
        CheckConstraint(one_of("state", TaskState), name="state"),
        CheckConstraint("blocked_count >= 0", name="blocked_count"),
        # The state/current-attempt pair is written together: in progress iff an attempt.
        CheckConstraint(
            f"(state = '{TaskState.IN_PROGRESS}') = (current_attempt_id IS NOT NULL)",
            name="current_attempt",
        ),
        # Ready work, in the order candidates are offered: priority, then age.
        Index(
            "ix_tasks_ready",
            "project_id",
            text("priority DESC"),
            "id",
            sqlite_where=text(_READY),
            postgresql_where=text(_READY),
        ),
        Index("ix_tasks_project_id_state", "project_id", "state"),
        # The tasks in progress, across projects: where lease-expired ones are found.
        Index(
            "ix_tasks_in_progress",
            "current_attempt_id",
            sqlite_where=text(_IN_PROGRESS),
            postgresql_where=text(_IN_PROGRESS),
        ),
        # A board group's page in its order, stopping after the page (`work._board`).
        Index("ix_tasks_board", "project_id", "state", text("priority DESC"), "id"),
        Index("ix_tasks_board_recent", "project_id", "state", "updated_at"),
        # The blocked group in its order, and its count (`work._board`).
        Index(
            "ix_tasks_board_blocked",
            "project_id",
            "state",
            text("priority DESC"),
            "id",
            sqlite_where=text(BLOCKED),
            postgresql_where=text(BLOCKED),
        ),
        # The tasks awaiting review, across projects, in the review queue's order.
        Index(
            "ix_tasks_awaiting_review",
            "updated_at",
            sqlite_where=text(_AWAITING_REVIEW),
            postgresql_where=text(_AWAITING_REVIEW),
        ),
        Index("ix_tasks_parent_id", "parent_id"),
        Index("ix_tasks_subject_submission_id", "subject_submission_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    kind: Mapped[TaskKind] = mapped_column(Vocabulary(TaskKind, 20))
    title: Mapped[str] = mapped_column(String(300))
    outcome: Mapped[str] = mapped_column(Text, default="")
    priority: Mapped[int] = mapped_column(Integer, default=0)
    state: Mapped[TaskState] = mapped_column(Vocabulary(TaskState, 24), default=TaskState.OPEN)
    parent_id: Mapped[str | None] = mapped_column(String(40))
    required: Mapped[bool] = mapped_column(Boolean, default=True)  # required child of parent
    # Review and integration tasks: the immutable submission that made them eligible
    # (never the implementation task's done state, which waits on them).
    subject_submission_id: Mapped[str | None] = mapped_column(String(40))
    source_system: Mapped[str | None] = mapped_column(String(100))
    source_id: Mapped[str | None] = mapped_column(String(200))
    revision: Mapped[int] = mapped_column(Integer, default=1)
    criteria_revision: Mapped[int] = mapped_column(Integer, default=1)
    generation: Mapped[int] = mapped_column(BigInteger, default=0)
    current_attempt_id: Mapped[str | None] = mapped_column(String(40))
    # Incomplete prerequisites, plus incomplete required children for a parent:
    # maintained on every change so candidates never walk the graph.
    blocked_count: Mapped[int] = mapped_column(Integer, default=0)
    recovery_released_generation: Mapped[int | None] = mapped_column(BigInteger)
    close_reason: Mapped[CloseReason | None] = mapped_column(Vocabulary(CloseReason, 20))
    close_note: Mapped[str | None] = mapped_column(Text)
    reopen_condition: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    created_by: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # What full-text search finds the task by (migration 0012's index): the words of its
    # title, outcome and current criteria (`_similar.search_text_of`), rewritten by every
    # create and edit; '' for workflow tasks, which are never searched.
    search_text: Mapped[str] = mapped_column(Text, default="", server_default="")


class TaskCriteria(Base):
    """One revision of a task's acceptance criteria (immutable)."""

    __tablename__ = "task_criteria"
    __table_args__ = (
        ForeignKeyConstraint(["project_id", "task_id"], ["tasks.project_id", "tasks.id"]),
    )

    task_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    revision: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    project_id: Mapped[str] = mapped_column(String(40))
    criteria: Mapped[list[str]] = mapped_column(JSONDocument)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    created_by: Mapped[str] = mapped_column(ForeignKey("principals.id"))


class TaskLabel(Base):
    """A short word a task is filed under (imported with it, e.g. `auth`)."""

    __tablename__ = "task_labels"
    __table_args__ = (
        ForeignKeyConstraint(["project_id", "task_id"], ["tasks.project_id", "tasks.id"]),
        Index("ix_task_labels_project_id_label", "project_id", "label"),
    )

    task_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    label: Mapped[str] = mapped_column(String(100), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40))


class TaskPrerequisite(Base):
    __tablename__ = "task_prerequisites"
    __table_args__ = (
        ForeignKeyConstraint(["project_id", "task_id"], ["tasks.project_id", "tasks.id"]),
        ForeignKeyConstraint(["project_id", "prerequisite_id"], ["tasks.project_id", "tasks.id"]),
        CheckConstraint("task_id <> prerequisite_id", name="not_self"),
        Index("ix_task_prerequisites_prerequisite_id", "prerequisite_id"),
    )

    task_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    prerequisite_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class TaskLink(Base):
    __tablename__ = "task_links"
    __table_args__ = (
        ForeignKeyConstraint(["project_id", "task_id"], ["tasks.project_id", "tasks.id"]),
        ForeignKeyConstraint(["project_id", "other_id"], ["tasks.project_id", "tasks.id"]),
        CheckConstraint(one_of("kind", LinkKind), name="kind"),
    )

    task_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    other_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    kind: Mapped[LinkKind] = mapped_column(Vocabulary(LinkKind, 20), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    created_by: Mapped[str] = mapped_column(ForeignKey("principals.id"))


class Attempt(Base):
    __tablename__ = "attempts"
    __table_args__ = (
        UniqueConstraint("project_id", "id"),
        ForeignKeyConstraint(["project_id", "task_id"], ["tasks.project_id", "tasks.id"]),
        CheckConstraint(one_of("state", AttemptState), name="state"),
        CheckConstraint(one_of("kind", AttemptKind), name="kind"),
        # At most one current attempt per task, whatever the code above it does.
        Index(
            "uq_attempts_one_active_per_task",
            "task_id",
            unique=True,
            sqlite_where=text(_ACTIVE),
            postgresql_where=text(_ACTIVE),
        ),
        Index("ix_attempts_session_id_state", "session_id", "state"),
        # Attempts counted by state and project without reading the rows (/metrics).
        Index("ix_attempts_state_project_id", "state", "project_id"),
        Index("ix_attempts_task_id", "task_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40))
    task_id: Mapped[str] = mapped_column(String(40))
    session_id: Mapped[str] = mapped_column(ForeignKey("agent_sessions.id"))
    principal_id: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    workstation: Mapped[str] = mapped_column(String(200))
    kind: Mapped[AttemptKind] = mapped_column(Vocabulary(AttemptKind, 12))
    generation: Mapped[int] = mapped_column(BigInteger)
    state: Mapped[AttemptState] = mapped_column(Vocabulary(AttemptState, 16))
    lease_seconds: Mapped[int] = mapped_column(Integer)
    heartbeat_seconds: Mapped[int] = mapped_column(Integer)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    criteria_revision: Mapped[int] = mapped_column(Integer)
    recovers_attempt_id: Mapped[str | None] = mapped_column(String(40))
    disposition: Mapped[RecoveryDisposition | None] = mapped_column(
        Vocabulary(RecoveryDisposition, 24)
    )
    disposition_reason: Mapped[str | None] = mapped_column(Text)
    acceptance: Mapped[dict[str, Any] | None] = mapped_column(JSONDocument)
    end_reason: Mapped[str | None] = mapped_column(Text)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)
    last_progress_at: Mapped[datetime] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # An operator's early end of a live lease (the lease then ended at revoked_at).
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    revoked_by: Mapped[str | None] = mapped_column(ForeignKey("principals.id"))
    revoke_reason: Mapped[str | None] = mapped_column(Text)

    def _lease_valid_at(self, now: datetime) -> bool:
        return lease_valid(self.expires_at, now)

    def _lease_valid_at_in_sql(cls: Any, now: datetime) -> ColumnElement[bool]:  # noqa: N805
        return cls.expires_at > now  # type: ignore[no-any-return]

    # The lease rule, its one home, in Python and in SQL: valid only while coordinator
    # time (sampled after the lock) is before `expires_at`; equality is expired. Ending
    # an attempt ends its lease (`hub.work._lifecycle.end_attempt`), so an ended attempt's
    # lease is never valid.
    lease_valid_at = hybrid_method(_lease_valid_at, _lease_valid_at_in_sql)


def lease_valid(expires_at: datetime, now: datetime) -> bool:
    """`Attempt.lease_valid_at` of a lease's end read without its attempt (a row of a
    Core read): the same rule, its Python side."""
    return now < expires_at


class Checkpoint(Base):
    __tablename__ = "checkpoints"
    __table_args__ = (
        ForeignKeyConstraint(["project_id", "attempt_id"], ["attempts.project_id", "attempts.id"]),
        ForeignKeyConstraint(["project_id", "task_id"], ["tasks.project_id", "tasks.id"]),
        Index("ix_checkpoints_task_id", "task_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40))
    task_id: Mapped[str] = mapped_column(String(40))
    attempt_id: Mapped[str] = mapped_column(String(40))
    summary: Mapped[str] = mapped_column(Text)
    revision: Mapped[str | None] = mapped_column(String(64))
    branch: Mapped[str | None] = mapped_column(String(255))
    # Pushed to the shared remote? Local-only work is not recoverable elsewhere.
    published: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Worktree(Base):
    __tablename__ = "worktrees"
    __table_args__ = (
        ForeignKeyConstraint(["project_id", "task_id"], ["tasks.project_id", "tasks.id"]),
        ForeignKeyConstraint(["project_id", "attempt_id"], ["attempts.project_id", "attempts.id"]),
        ForeignKeyConstraint(
            ["project_id", "repository_id"], ["repositories.project_id", "repositories.id"]
        ),
        # One worktree identity serves one unfinished implementation task at a time.
        Index(
            "uq_worktrees_identity_in_use",
            "identity",
            unique=True,
            sqlite_where=text("released_at IS NULL"),
            postgresql_where=text("released_at IS NULL"),
        ),
        Index("ix_worktrees_task_id", "task_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40))
    task_id: Mapped[str] = mapped_column(String(40))
    attempt_id: Mapped[str] = mapped_column(String(40))
    repository_id: Mapped[str] = mapped_column(String(40))
    identity: Mapped[str] = mapped_column(String(300))
    path: Mapped[str] = mapped_column(String(1000))  # descriptive only
    branch: Mapped[str] = mapped_column(String(255))
    base_revision: Mapped[str] = mapped_column(String(64))
    workstation: Mapped[str] = mapped_column(String(200))
    registered_at: Mapped[datetime] = mapped_column(UTCDateTime)
    released_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class Submission(Base):
    """An immutable record of what an attempt delivered."""

    __tablename__ = "submissions"
    __table_args__ = (
        UniqueConstraint("project_id", "id"),
        ForeignKeyConstraint(["project_id", "task_id"], ["tasks.project_id", "tasks.id"]),
        ForeignKeyConstraint(["project_id", "attempt_id"], ["attempts.project_id", "attempts.id"]),
        Index("ix_submissions_task_id", "task_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40))
    task_id: Mapped[str] = mapped_column(String(40))
    attempt_id: Mapped[str] = mapped_column(String(40))
    session_id: Mapped[str] = mapped_column(ForeignKey("agent_sessions.id"))
    principal_id: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    generation: Mapped[int] = mapped_column(BigInteger)
    outcome: Mapped[SubmissionOutcome] = mapped_column(Vocabulary(SubmissionOutcome, 24))
    result: Mapped[str] = mapped_column(Text)
    handoff: Mapped[str] = mapped_column(Text)
    candidate_revision: Mapped[str | None] = mapped_column(String(64))
    criteria_revision: Mapped[int] = mapped_column(Integer)
    policy_revision: Mapped[int] = mapped_column(Integer)
    referenced_lessons: Mapped[list[str]] = mapped_column(JSONDocument, default=list)
    new_lessons: Mapped[list[dict[str, Any]]] = mapped_column(JSONDocument, default=list)
    # Evidence records the submission cites (required for ALREADY_SATISFIED), checked to
    # be of its project by the operation that wraps the submission (`review.service`).
    evidence_ids: Mapped[list[str]] = mapped_column(JSONDocument, default=list, server_default="[]")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class AttemptNote(Base):
    """Recovery notes and criteria reconciliations: attributed, append-only history."""

    __tablename__ = "attempt_notes"
    __table_args__ = (
        ForeignKeyConstraint(["project_id", "attempt_id"], ["attempts.project_id", "attempts.id"]),
        CheckConstraint(one_of("kind", AttemptNoteKind), name="kind"),
        Index("ix_attempt_notes_attempt_id", "attempt_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40))
    attempt_id: Mapped[str] = mapped_column(String(40))
    kind: Mapped[AttemptNoteKind] = mapped_column(Vocabulary(AttemptNoteKind, 24))
    body: Mapped[str] = mapped_column(Text)
    detail: Mapped[dict[str, Any]] = mapped_column(JSONDocument, default=dict)
    author_id: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
