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
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from hub.review.vocabulary import FindingSeverity, ReviewDecision, ReviewerKind
from hub.storage.base import Base, JSONDocument, UTCDateTime, Vocabulary, one_of


class Review(Base):
    """One decision on one immutable submission (agent or human); never edited."""

    __tablename__ = "reviews"
    __table_args__ = (
        # The target of composite references (an artifact of a review: same project).
        UniqueConstraint("project_id", "id"),
        ForeignKeyConstraint(
            ["project_id", "submission_id"], ["submissions.project_id", "submissions.id"]
        ),
        ForeignKeyConstraint(["project_id", "attempt_id"], ["attempts.project_id", "attempts.id"]),
        CheckConstraint(one_of("decision", ReviewDecision), name="decision"),
        CheckConstraint(one_of("reviewer_kind", ReviewerKind), name="reviewer_kind"),
        Index("ix_reviews_submission_id", "submission_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40))
    submission_id: Mapped[str] = mapped_column(String(40))
    task_id: Mapped[str] = mapped_column(String(40))  # the implementation task
    candidate_revision: Mapped[str | None] = mapped_column(String(64))
    reviewer_kind: Mapped[ReviewerKind] = mapped_column(Vocabulary(ReviewerKind, 8))
    principal_id: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    session_id: Mapped[str | None] = mapped_column(ForeignKey("agent_sessions.id"))
    attempt_id: Mapped[str | None] = mapped_column(String(40))
    decision: Mapped[ReviewDecision] = mapped_column(Vocabulary(ReviewDecision, 8))
    summary: Mapped[str] = mapped_column(Text)
    evidence: Mapped[list[str]] = mapped_column(JSONDocument, default=list)
    # Evidence records (ids, same project) the reviewer inspected.
    evidence_ids: Mapped[list[str] | None] = mapped_column(JSONDocument)
    policy_revision: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class Finding(Base):
    __tablename__ = "findings"
    __table_args__ = (
        ForeignKeyConstraint(["review_id"], ["reviews.id"]),
        CheckConstraint(one_of("severity", FindingSeverity), name="severity"),
        Index("ix_findings_task_id", "task_id"),
        Index("ix_findings_review_id", "review_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id"))
    review_id: Mapped[str] = mapped_column(String(40))
    submission_id: Mapped[str] = mapped_column(String(40))
    task_id: Mapped[str] = mapped_column(String(40))
    severity: Mapped[FindingSeverity] = mapped_column(Vocabulary(FindingSeverity, 8))
    title: Mapped[str] = mapped_column(String(300))
    detail: Mapped[str] = mapped_column(Text, default="")
    remedy: Mapped[str] = mapped_column(Text)
    resolution: Mapped[str | None] = mapped_column(Text)
    resolution_evidence: Mapped[list[str] | None] = mapped_column(JSONDocument)
    resolved_by: Mapped[str | None] = mapped_column(ForeignKey("principals.id"))
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # A contributor's proposal for a required finding; it does not resolve it.
    proposed_resolution: Mapped[str | None] = mapped_column(Text)
    proposed_evidence: Mapped[list[str] | None] = mapped_column(JSONDocument)
    proposed_by: Mapped[str | None] = mapped_column(ForeignKey("principals.id"))
    proposed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)


class HumanReviewRequest(Base):
    __tablename__ = "human_review_requests"
    __table_args__ = (
        ForeignKeyConstraint(
            ["project_id", "submission_id"], ["submissions.project_id", "submissions.id"]
        ),
        Index("ix_human_review_requests_submission_id", "submission_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    project_id: Mapped[str] = mapped_column(String(40))
    submission_id: Mapped[str] = mapped_column(String(40))
    requested_by: Mapped[str] = mapped_column(ForeignKey("principals.id"))
    context: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
