"""GraphQL enums of the work module: kinds, states, reasons and outcomes."""

from __future__ import annotations

from enum import Enum

import strawberry


@strawberry.enum
class TaskKind(Enum):
    IMPLEMENTATION = "IMPLEMENTATION"
    REVIEW = "REVIEW"
    INTEGRATION = "INTEGRATION"
    GENERAL = "GENERAL"
    OBJECTIVE = "OBJECTIVE"


@strawberry.enum
class TaskState(Enum):
    OPEN = "OPEN"
    IN_PROGRESS = "IN_PROGRESS"
    AWAITING_REVIEW = "AWAITING_REVIEW"
    AWAITING_INTEGRATION = "AWAITING_INTEGRATION"
    REVISION_NEEDED = "REVISION_NEEDED"
    DONE = "DONE"
    CLOSED = "CLOSED"


@strawberry.enum(description="The state as judged now: expiry needs no background job.")
class EffectiveTaskState(Enum):
    OPEN = "OPEN"
    BLOCKED = "BLOCKED"
    IN_PROGRESS = "IN_PROGRESS"
    RECOVERY_CANDIDATE = "RECOVERY_CANDIDATE"
    AWAITING_REVIEW = "AWAITING_REVIEW"
    AWAITING_INTEGRATION = "AWAITING_INTEGRATION"
    REVISION_NEEDED = "REVISION_NEEDED"
    DONE = "DONE"
    CLOSED = "CLOSED"


@strawberry.enum
class AttemptState(Enum):
    ACTIVE = "ACTIVE"
    SUBMITTED = "SUBMITTED"
    RELINQUISHED = "RELINQUISHED"
    SUPERSEDED = "SUPERSEDED"
    COMPLETED = "COMPLETED"


@strawberry.enum
class AttemptKind(Enum):
    FRESH = "FRESH"
    RECOVERY = "RECOVERY"


@strawberry.enum
class CloseReason(Enum):
    REJECTED = "REJECTED"
    SUPERSEDED = "SUPERSEDED"
    DUPLICATE = "DUPLICATE"
    DEFERRED = "DEFERRED"


@strawberry.enum
class LinkKind(Enum):
    DUPLICATE_OF = "DUPLICATE_OF"
    RELATED = "RELATED"
    SUPERSEDES = "SUPERSEDES"


@strawberry.enum
class SubmissionOutcome(Enum):
    DELIVERED = "DELIVERED"
    PARTIAL = "PARTIAL"


@strawberry.enum
class RecoveryDisposition(Enum):
    RESUME_SAVED_WORK = "RESUME_SAVED_WORK"
    RECONCILE_DELIVERED = "RECONCILE_DELIVERED"
    RESTART = "RESTART"
    BLOCKED = "BLOCKED"


@strawberry.enum
class AdapterEvent(Enum):
    TURN_ENDED = "TURN_ENDED"
    COMPACTED = "COMPACTED"
    DISCONNECTED = "DISCONNECTED"
    RESUMED = "RESUMED"
    RELINQUISHED = "RELINQUISHED"
    COMPLETED = "COMPLETED"
