"""The integration module's vocabulary, declared once: the tables hold these types and
derive their CHECK constraints from them; the API exposes them as its GraphQL enums."""

from __future__ import annotations

from enum import StrEnum


class IntegrationState(StrEnum):
    IN_PROGRESS = "IN_PROGRESS"
    PUBLISHED = "PUBLISHED"
    CONFLICT = "CONFLICT"
    UNCERTAIN = "UNCERTAIN"
    ABANDONED = "ABANDONED"
    VALIDATED = "VALIDATED"
    FAILED_VALIDATION = "FAILED_VALIDATION"


class IntegrationOutcome(StrEnum):
    """What an integrator reports."""

    PUBLISHED = "PUBLISHED"
    TARGET_MOVED = "TARGET_MOVED"
    CONFLICT = "CONFLICT"
    UNCERTAIN = "UNCERTAIN"
    ABANDONED = "ABANDONED"


class RecordedOutcome(StrEnum):
    """A report's outcome as stored: the integrator's, or one it does not choose (a
    reconciliation, an operator's release)."""

    PUBLISHED = "PUBLISHED"
    TARGET_MOVED = "TARGET_MOVED"
    CONFLICT = "CONFLICT"
    UNCERTAIN = "UNCERTAIN"
    ABANDONED = "ABANDONED"
    RECONCILED = "RECONCILED"
    RELEASED = "RELEASED"


class Verification(StrEnum):
    """How a reported revision was verified."""

    CLIENT_REPORTED = "CLIENT_REPORTED"
    VERIFIED_BY_REVIEWER = "VERIFIED_BY_REVIEWER"
    VERIFIED_BY_JOB = "VERIFIED_BY_JOB"
    VERIFIED_BY_HOST = "VERIFIED_BY_HOST"


class TargetReservationState(StrEnum):
    """An integration reservation (one per remote binding and branch): held, or kept
    by an UNCERTAIN outcome."""

    HELD = "HELD"
    UNCERTAIN = "UNCERTAIN"


class IntegrationEvent(StrEnum):
    """The events the integration module appends."""

    CLAIMED = "integration.claimed"
    INHERITED = "integration.inherited"
    REPORTED = "integration.reported"
    VALIDATED = "integration.validated"


# Not settled yet: whoever holds the integration task next inherits it (with its
# reservation while it has one), rather than starting a second integration.
UNFINISHED_STATES = (
    IntegrationState.IN_PROGRESS,
    IntegrationState.UNCERTAIN,
    IntegrationState.PUBLISHED,
)
