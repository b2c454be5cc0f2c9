"""What the knowledge module returns: plain, immutable views, detached from the session."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from hub.knowledge.tables import Lesson, LessonVersion, Rule, RuleVersion
from hub.knowledge.vocabulary import ConflictBasis, DelegationScope, DisputeState, LessonState
from hub.mapping import view_of


@dataclass(frozen=True)
class LessonSource:
    """Where a lesson was learnt: its project always; the task, submission and candidate
    revision when it came from one."""

    project_id: str
    task_id: str | None
    submission_id: str | None
    candidate_revision: str | None


@dataclass(frozen=True)
class LessonView:
    """A lesson as it stands: its current version's content, where it came from, and
    what has happened to it since (supersession, disputes, votes)."""

    id: str
    project_id: str
    version: int
    state: LessonState
    statement: str
    explanation: str
    tags: tuple[str, ...]
    evidence: tuple[str, ...]
    source: LessonSource
    author_id: str  # who published it (each version names its own author)
    session_id: str | None
    created_at: datetime
    updated_at: datetime
    successor_id: str | None
    superseded_at: datetime | None
    superseded_by: str | None
    supersede_reason: str | None
    open_disputes: int
    useful_votes: int
    not_useful_votes: int

    @property
    def disputed(self) -> bool:
        """Marked while a dispute is open: still readable, never mandatory."""
        return self.open_disputes > 0


@dataclass(frozen=True)
class LessonVersionView:
    lesson_id: str
    version: int
    statement: str
    explanation: str
    tags: tuple[str, ...]
    evidence: tuple[str, ...]
    reason: str
    author_id: str
    session_id: str | None
    created_at: datetime


@dataclass(frozen=True)
class DisputeView:
    id: str
    project_id: str
    lesson_id: str
    version: int
    reason: str
    evidence: tuple[str, ...]
    state: DisputeState
    raised_by: str
    session_id: str | None
    raised_at: datetime
    resolved_by: str | None
    resolved_at: datetime | None
    resolution_note: str | None


@dataclass(frozen=True)
class RuleView:
    """A binding rule as it stands: its current version's text and scope."""

    id: str
    project_id: str
    topic: str
    version: int
    text: str
    paths: tuple[str, ...]
    components: tuple[str, ...]
    retired: bool
    created_at: datetime
    created_by: str
    updated_at: datetime
    updated_by: str  # the current version's author


@dataclass(frozen=True)
class RuleVersionView:
    rule_id: str
    version: int
    text: str
    paths: tuple[str, ...]
    components: tuple[str, ...]
    retired: bool
    reason: str
    author_id: str
    session_id: str | None
    delegation_id: str | None
    created_at: datetime


@dataclass(frozen=True)
class DelegationView:
    id: str
    project_id: str
    scope: DelegationScope
    principal_id: str | None
    note: str
    granted_by: str
    granted_at: datetime
    revoked_by: str | None
    revoked_at: datetime | None
    revoke_reason: str | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True)
class LessonResult:
    """A keyed lesson mutation's answer: the lesson as it is now."""

    lesson: LessonView
    replay: bool = False


@dataclass(frozen=True)
class DisputeResult:
    dispute: DisputeView
    lesson: LessonView
    replay: bool = False


@dataclass(frozen=True)
class RatingResult:
    lesson: LessonView
    useful: bool  # the caller's vote as it stands
    replay: bool = False


@dataclass(frozen=True)
class RuleResult:
    rule: RuleView
    replay: bool = False


@dataclass(frozen=True)
class SearchHit:
    """A lesson a search found, with how it ranked (docs/design.md, "Knowledge"): its
    place in the whole answer, its score and the parts of it."""

    lesson: LessonView  # the original record, whichever project it came from
    rank: int  # 1 for the first
    score: float  # relevance + TAG_WEIGHT x matched tags + feedback
    relevance: float  # full-text relevance, 0 to 1 (0 when searching by tags only)
    matched_tags: tuple[str, ...]  # the searched tags that apply to it, as searched
    feedback: float  # the votes' nudge, within +-FEEDBACK_WEIGHT
    other_project: bool  # its source is not the project searched from


@dataclass(frozen=True)
class LocalInstructionFile:
    """A local instruction file as the caller sent it: its name (AGENTS.md, CLAUDE.md, a
    path in the checkout; only a label, never opened) and its text."""

    path: str
    text: str


@dataclass(frozen=True)
class InstructionConflict:
    """A local instruction and a current rule addressing one topic or path with other
    words, side by side: both stand, neither is dropped."""

    rule: RuleView
    basis: ConflictBasis
    key: str  # the topic, or the local instruction's path
    file: str
    line: int  # the key's line in the file, 1 for the first
    local_text: str  # as written

    @property
    def rule_text(self) -> str:
        return self.rule.text


@dataclass(frozen=True)
class OrientedRule:
    rule: RuleView
    changed: bool  # revised, made or retired since the caller last oriented


@dataclass(frozen=True)
class Orientation:
    """What an agent reads at the start of a session: the project's binding rules, apart
    from the lessons suggested for its work, and where its local instructions and the
    rules disagree."""

    project_id: str
    rules: tuple[OrientedRule, ...]
    suggested_lessons: tuple[SearchHit, ...]
    conflicts: tuple[InstructionConflict, ...]
    as_of: datetime
    event_sequence: int  # the project's event sequence read: the next orientation's sinceEvent


def lesson_view(row: Lesson, current: LessonVersion) -> LessonView:
    return view_of(
        LessonView,
        row,
        statement=current.statement,
        explanation=current.explanation,
        tags=tuple(current.tags),
        evidence=tuple(current.evidence),
        source=LessonSource(
            row.project_id, row.source_task_id, row.source_submission_id, row.source_revision
        ),
    )


def rule_view(row: Rule, current: RuleVersion) -> RuleView:
    return view_of(
        RuleView,
        row,
        text=current.text,
        paths=tuple(current.paths),
        components=tuple(current.components),
        retired=current.retired,
        updated_by=current.author_id,
    )
