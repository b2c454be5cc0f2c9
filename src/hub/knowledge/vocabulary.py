"""The knowledge module's vocabulary, declared once: the tables hold these types and
derive their CHECK constraints from them; the API exposes them as its GraphQL enums."""

from __future__ import annotations

from enum import StrEnum


class LessonState(StrEnum):
    """Where a lesson stands. Every state stays readable, with its versions; only a
    current lesson is corrected."""

    CURRENT = "CURRENT"
    SUPERSEDED = "SUPERSEDED"  # replaced by another lesson (its successor)
    WITHDRAWN = "WITHDRAWN"  # a dispute against it was upheld


class DisputeState(StrEnum):
    OPEN = "OPEN"
    CORRECTED = "CORRECTED"  # a later version of the lesson answers it
    UPHELD = "UPHELD"  # the lesson was wrong: it is withdrawn
    DISMISSED = "DISMISSED"  # the lesson stands as it is


class DisputeResolution(StrEnum):
    """How a dispute is closed: its states other than OPEN."""

    CORRECTED = "CORRECTED"
    UPHELD = "UPHELD"
    DISMISSED = "DISMISSED"


class DelegationScope(StrEnum):
    """Whom a rule delegation names: one principal, or every agent principal."""

    PRINCIPAL = "PRINCIPAL"
    ALL_AGENTS = "ALL_AGENTS"


class SearchScope(StrEnum):
    """Whose lessons a search reads: the project's own, or every project's (each found
    lesson the original record, with its source project)."""

    PROJECT = "PROJECT"
    CROSS_PROJECT = "CROSS_PROJECT"


class ConflictBasis(StrEnum):
    """What a local instruction and a rule both address: the rule's topic, or a path in
    its scope."""

    TOPIC = "TOPIC"
    PATH = "PATH"


class KnowledgeEvent(StrEnum):
    """The events the knowledge module appends."""

    LESSON_PUBLISHED = "lesson.published"
    LESSON_CORRECTED = "lesson.corrected"
    LESSON_SUPERSEDED = "lesson.superseded"
    LESSON_DISPUTED = "lesson.disputed"
    LESSON_DISPUTE_RESOLVED = "lesson.dispute_resolved"
    LESSON_RATED = "lesson.rated"
    RULE_REVISED = "rule.revised"
    RULE_DELEGATION_GRANTED = "rule.delegation_granted"
    RULE_DELEGATION_REVOKED = "rule.delegation_revoked"


class KnowledgeInvariant(StrEnum):
    """What `hub maintenance check` verifies of the knowledge module's counters
    (`knowledge._invariants`; docs/ops/maintenance.md, "What a finding means")."""

    # A lesson's `version` is its newest version's number.
    LESSON_VERSION = "knowledge.lesson_version"
    # `open_disputes` counts its OPEN disputes.
    OPEN_DISPUTES = "knowledge.open_disputes"
    # `useful_votes` and `not_useful_votes` count its ratings of each kind.
    VOTES = "knowledge.votes"
    # A rule's `version` is its newest revision's number.
    RULE_VERSION = "knowledge.rule_version"
