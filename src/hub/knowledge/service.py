"""The knowledge module's operations, as other modules and the entry points call them."""

from collections.abc import Iterator

from hub.knowledge import tables
from hub.knowledge._delegations import (
    grant_rule_delegation,
    revoke_rule_delegation,
    rule_delegations,
)
from hub.knowledge._disputes import dispute_lesson, lesson_disputes, resolve_dispute
from hub.knowledge._invariants import find_invariant_breaches
from hub.knowledge._lessons import (
    LessonCorrection,
    NewLesson,
    correct_lesson,
    publish_lesson,
    supersede_lesson,
)
from hub.knowledge._orientation import OrientationRequest, orientation
from hub.knowledge._ratings import rate_lesson
from hub.knowledge._rows import get_lesson, lesson_versions, list_lessons, superseded_lessons
from hub.knowledge._rules import RuleRevision, get_rule, list_rules, revise_rule, rule_versions
from hub.knowledge._search import KnowledgeSearch, search_knowledge
from hub.knowledge._submissions import submission_lessons, submit_attempt
from hub.knowledge.views import (
    DelegationView,
    DisputeResult,
    DisputeView,
    InstructionConflict,
    LessonResult,
    LessonSource,
    LessonVersionView,
    LessonView,
    LocalInstructionFile,
    Orientation,
    OrientedRule,
    RatingResult,
    RuleResult,
    RuleVersionView,
    RuleView,
    SearchHit,
)
from hub.storage.export import ExportRecord, export_tables, project_tables
from hub.storage.unit_of_work import UnitOfWork


def export_rows(uow: UnitOfWork, project_id: str) -> Iterator[ExportRecord]:
    """The project's lessons (their versions, tags, disputes and votes), rules (their
    versions) and rule delegations, for an export (docs/exports.md). A version's
    `search_text` is left out: it is derived from the version's text for the search."""
    return export_tables(
        uow, project_id, project_tables(tables), omit={"lesson_versions": {"search_text"}}
    )


__all__ = [
    "DelegationView",
    "DisputeResult",
    "DisputeView",
    "InstructionConflict",
    "KnowledgeSearch",
    "LessonCorrection",
    "LessonResult",
    "LessonSource",
    "LessonVersionView",
    "LessonView",
    "LocalInstructionFile",
    "NewLesson",
    "Orientation",
    "OrientationRequest",
    "OrientedRule",
    "RatingResult",
    "RuleResult",
    "RuleRevision",
    "RuleVersionView",
    "RuleView",
    "SearchHit",
    "correct_lesson",
    "dispute_lesson",
    "export_rows",
    "find_invariant_breaches",
    "get_lesson",
    "get_rule",
    "grant_rule_delegation",
    "lesson_disputes",
    "lesson_versions",
    "list_lessons",
    "list_rules",
    "orientation",
    "publish_lesson",
    "rate_lesson",
    "resolve_dispute",
    "revise_rule",
    "revoke_rule_delegation",
    "rule_delegations",
    "rule_versions",
    "search_knowledge",
    "submission_lessons",
    "submit_attempt",
    "supersede_lesson",
    "superseded_lessons",
]
