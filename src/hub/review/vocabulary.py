"""The review module's vocabulary, declared once: the tables hold these types and derive
their CHECK constraints from them; the API exposes them as its GraphQL enums."""

from __future__ import annotations

from enum import StrEnum


class ReviewDecision(StrEnum):
    APPROVE = "APPROVE"
    REJECT = "REJECT"


class FindingSeverity(StrEnum):
    BLOCKER = "BLOCKER"
    MAJOR = "MAJOR"
    MINOR = "MINOR"
    NOTE = "NOTE"


class ReviewerKind(StrEnum):
    AGENT = "AGENT"
    HUMAN = "HUMAN"


class ReviewEvent(StrEnum):
    """The events the review module appends."""

    RECORDED = "review.recorded"
    HUMAN_REQUESTED = "review.human_requested"
    POLICY_REPINNED = "review.policy_repinned"
    FINDING_RESOLVED = "finding.resolved"
    FINDING_RESOLUTION_PROPOSED = "finding.resolution_proposed"


# BLOCKER and MAJOR findings block integration until resolved.
REQUIRED_SEVERITIES = (FindingSeverity.BLOCKER, FindingSeverity.MAJOR)
