"""Tables of the knowledge module.

A lesson is one row (`lessons`: where it stands, where it came from, its counters) and
its versions (`lesson_versions`, immutable: a correction adds one). A rule likewise
(`rules`, `rule_versions`); who besides operators may revise a project's rules is
`rule_delegations`, apart from the rules and the project policy. Rows carry
`project_id`, and references inside a project are composite foreign keys. A lesson's
successor may be another project's lesson: lessons are shared across projects
(docs/design.md, "Knowledge").
"""

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

from hub.knowledge.vocabulary import DelegationScope, DisputeState, LessonState
from hub.storage.base import Base, JSONDocument, UTCDateTime, Vocabulary, one_of

_OPEN_DISPUTE = f"state = '{DisputeState.OPEN}'"
_ACTIVE_FOR_ONE = f"revoked_at IS NULL AND scope = '{DelegationScope.PRINCIPAL}'"
_ACTIVE_FOR_ALL = f"revoked_at IS NULL AND scope = '{DelegationScope.ALL_AGENTS}'"


class Lesson(Base):
    __tablename__ = "lessons"
    __table_args__ = (
        UniqueConstraint("project_id", "id"),
        ForeignKeyConstraint(["project_id", "source_task_id"], ["tasks.project_id", "tasks.id"]),
        ForeignKeyConstraint(
            ["project_id", "source_submission_id"], ["submissions.project_id", "submissions.id"]
        ),
        CheckConstraint(one_of("state", LessonState), name="state"),
        # Superseded iff it names its successor, and never itself.
        CheckConstraint(
            f"(state = '{LessonState.SUPERSEDED}') = (successor_id IS NOT NULL)",
            name="successor",
        ),
        CheckConstraint("successor_id <> id", name="not_own_successor"),
        CheckConstraint(
            "version >= 1 AND open_disputes >= 0 AND useful_votes >= 0 AND not_useful_votes >= 0",
            name="counts",
        ),
        Index("ix_lessons_source_submission_id", "source_submission_id"),
        Index("ix_lessons_successor_id", "successor_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    version: Mapped[int] = mapped_column(Integer)  # the current version
    state: Mapped[LessonState] = mapped_column(Vocabulary(LessonState, 16))
    # Where it was learnt: the task, the submission and the candidate revision.
    source_task_id: Mapped[str | None] = mapped_column(String(40))
    source_submission_id: Mapped[str | None] = mapped_column(String(40))
    source_revision: Mapped[str | None] = mapped_column(String(64))
    # Supersession: the lesson that replaces this one (any project's), who said so, why.
    successor_id: Mapped[str | None] = mapped_column(ForeignKey("lessons.id"))
    superseded_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    superseded_by: Mapped[str | None] = mapped_column(ForeignKey("principals.id"))
    supersede_reason: Mapped[str | None] = mapped_column(Text)
    # Kept with the row, in the transaction that changes them, for reading and ranking.
    open_disputes: Mapped[int] = mapped_column(Integer, default=0)
    useful_votes: Mapped[int] = mapped_column(Integer, default=0)
    not_useful_votes: Mapped[int] = mapped_column(Integer, default=0)
    author_id: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    session_id: Mapped[str | None] = mapped_column(ForeignKey("agent_sessions.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class LessonVersion(Base):
    """One immutable version of a lesson: the first as published, each correction after."""

    __tablename__ = "lesson_versions"
    __table_args__ = (
        ForeignKeyConstraint(["project_id", "lesson_id"], ["lessons.project_id", "lessons.id"]),
        CheckConstraint("version >= 1", name="version"),
    )

    lesson_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    version: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    project_id: Mapped[str] = mapped_column(String(40))
    statement: Mapped[str] = mapped_column(String(500))
    explanation: Mapped[str] = mapped_column(Text)
    tags: Mapped[list[str]] = mapped_column(JSONDocument, default=list)
    evidence: Mapped[list[str]] = mapped_column(JSONDocument, default=list)
    reason: Mapped[str] = mapped_column(Text, default="")  # why corrected ("" for the first)
    author_id: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    session_id: Mapped[str | None] = mapped_column(ForeignKey("agent_sessions.id"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # What full-text search indexes (migration 0008's index): the words of the statement,
    # explanation and tag components, as `hub.storage.fulltext.indexed_text` writes them.
    search_text: Mapped[str] = mapped_column(Text)


class LessonTag(Base):
    """The current version's applicability tags, one row per component, for matching
    tags in SQL (`postgres>=15`: component `postgres`, versions `>=15`)."""

    __tablename__ = "lesson_tags"
    __table_args__ = (
        ForeignKeyConstraint(["project_id", "lesson_id"], ["lessons.project_id", "lessons.id"]),
        # A search's tags: which (component, versions) pairs are tagged, in a project or
        # in any, read from the index alone.
        Index(
            "ix_lesson_tags_component_versions_project_id", "component", "versions", "project_id"
        ),
    )

    lesson_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    component: Mapped[str] = mapped_column(String(80), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40))
    versions: Mapped[str] = mapped_column(String(200), default="")  # "" applies to any version


class LessonDispute(Base):
    __tablename__ = "lesson_disputes"
    __table_args__ = (
        ForeignKeyConstraint(["project_id", "lesson_id"], ["lessons.project_id", "lessons.id"]),
        CheckConstraint(one_of("state", DisputeState), name="state"),
        CheckConstraint(
            f"({_OPEN_DISPUTE}) = (resolved_at IS NULL AND resolved_by IS NULL)",
            name="resolved",
        ),
        Index("ix_lesson_disputes_lesson_id", "lesson_id"),
        # One open dispute per principal and lesson: a second would only repeat it.
        Index(
            "uq_lesson_disputes_open_per_principal",
            "lesson_id",
            "raised_by",
            unique=True,
            sqlite_where=text(_OPEN_DISPUTE),
            postgresql_where=text(_OPEN_DISPUTE),
        ),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40))
    lesson_id: Mapped[str] = mapped_column(String(40))
    version: Mapped[int] = mapped_column(Integer)  # the version disputed
    reason: Mapped[str] = mapped_column(Text)
    evidence: Mapped[list[str]] = mapped_column(JSONDocument, default=list)
    state: Mapped[DisputeState] = mapped_column(Vocabulary(DisputeState, 16))
    raised_by: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    session_id: Mapped[str | None] = mapped_column(ForeignKey("agent_sessions.id"))
    raised_at: Mapped[datetime] = mapped_column(UTCDateTime)
    resolved_by: Mapped[str | None] = mapped_column(ForeignKey("principals.id"))
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    resolution_note: Mapped[str | None] = mapped_column(Text)


class LessonRating(Base):
    """One principal's vote on a lesson's usefulness; a second vote replaces the first."""

    __tablename__ = "lesson_ratings"
    __table_args__ = (
        ForeignKeyConstraint(["project_id", "lesson_id"], ["lessons.project_id", "lessons.id"]),
    )

    lesson_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    principal_id: Mapped[str] = mapped_column(ForeignKey("principals.id"), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40))
    useful: Mapped[bool] = mapped_column(Boolean)
    session_id: Mapped[str | None] = mapped_column(ForeignKey("agent_sessions.id"))
    rated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Rule(Base):
    """A project's binding rule, named by its topic; `version` is the current one."""

    __tablename__ = "rules"
    __table_args__ = (
        UniqueConstraint("project_id", "id"),
        UniqueConstraint("project_id", "topic"),
        CheckConstraint("version >= 1", name="version"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    topic: Mapped[str] = mapped_column(String(80))
    version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    created_by: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class RuleVersion(Base):
    """One immutable revision of a rule: its text and scope, who revised it, why, and
    the delegation that allowed it (none for an operator's revision)."""

    __tablename__ = "rule_versions"
    __table_args__ = (
        ForeignKeyConstraint(["project_id", "rule_id"], ["rules.project_id", "rules.id"]),
        ForeignKeyConstraint(
            ["project_id", "delegation_id"], ["rule_delegations.project_id", "rule_delegations.id"]
        ),
        CheckConstraint("version >= 1", name="version"),
    )

    rule_id: Mapped[str] = mapped_column(String(40), primary_key=True)
    version: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    project_id: Mapped[str] = mapped_column(String(40))
    text: Mapped[str] = mapped_column(Text)
    paths: Mapped[list[str]] = mapped_column(JSONDocument, default=list)
    components: Mapped[list[str]] = mapped_column(JSONDocument, default=list)
    retired: Mapped[bool] = mapped_column(Boolean, default=False)
    reason: Mapped[str] = mapped_column(Text)
    author_id: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    session_id: Mapped[str | None] = mapped_column(ForeignKey("agent_sessions.id"))
    delegation_id: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class RuleDelegation(Base):
    """A project's permission for principals other than operators to revise its rules:
    one principal, or all agents; granted and revoked by operators, attributed."""

    __tablename__ = "rule_delegations"
    __table_args__ = (
        UniqueConstraint("project_id", "id"),
        CheckConstraint(one_of("scope", DelegationScope), name="scope"),
        CheckConstraint(
            f"(scope = '{DelegationScope.PRINCIPAL}') = (principal_id IS NOT NULL)",
            name="principal",
        ),
        CheckConstraint("(revoked_at IS NULL) = (revoked_by IS NULL)", name="revoked"),
        # One active delegation per grantee and project.
        Index(
            "uq_rule_delegations_active_principal",
            "project_id",
            "principal_id",
            unique=True,
            sqlite_where=text(_ACTIVE_FOR_ONE),
            postgresql_where=text(_ACTIVE_FOR_ONE),
        ),
        Index(
            "uq_rule_delegations_active_all_agents",
            "project_id",
            unique=True,
            sqlite_where=text(_ACTIVE_FOR_ALL),
            postgresql_where=text(_ACTIVE_FOR_ALL),
        ),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    scope: Mapped[DelegationScope] = mapped_column(Vocabulary(DelegationScope, 12))
    principal_id: Mapped[str | None] = mapped_column(ForeignKey("principals.id"))
    note: Mapped[str] = mapped_column(Text, default="")
    granted_by: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    granted_at: Mapped[datetime] = mapped_column(UTCDateTime)
    revoked_by: Mapped[str | None] = mapped_column(ForeignKey("principals.id"))
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    revoke_reason: Mapped[str | None] = mapped_column(Text)
