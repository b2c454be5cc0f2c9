"""The work module's vocabulary: every closed set of names it stores, checks or emits,
declared once. The tables' columns hold these types and derive their CHECK constraints
from them (`hub.storage.base.one_of`); the API exposes them as its GraphQL enums."""

from __future__ import annotations

from enum import StrEnum


class TaskKind(StrEnum):
    IMPLEMENTATION = "IMPLEMENTATION"
    REVIEW = "REVIEW"
    INTEGRATION = "INTEGRATION"
    GENERAL = "GENERAL"
    OBJECTIVE = "OBJECTIVE"


class TaskState(StrEnum):
    OPEN = "OPEN"
    IN_PROGRESS = "IN_PROGRESS"
    AWAITING_REVIEW = "AWAITING_REVIEW"
    AWAITING_INTEGRATION = "AWAITING_INTEGRATION"
    REVISION_NEEDED = "REVISION_NEEDED"
    DONE = "DONE"
    CLOSED = "CLOSED"


class EffectiveTaskState(StrEnum):
    """The state as judged now: expiry needs no background job."""

    OPEN = "OPEN"
    BLOCKED = "BLOCKED"
    IN_PROGRESS = "IN_PROGRESS"
    RECOVERY_CANDIDATE = "RECOVERY_CANDIDATE"
    AWAITING_REVIEW = "AWAITING_REVIEW"
    AWAITING_INTEGRATION = "AWAITING_INTEGRATION"
    REVISION_NEEDED = "REVISION_NEEDED"
    DONE = "DONE"
    CLOSED = "CLOSED"


class BoardGroup(StrEnum):
    """The groups of a project's board (`work._board`): a task is in exactly one, judged
    from its effective state at read time (docs/workflow.md, "Leases and attempts"); done
    work only while recent."""

    READY = "ready"
    IN_PROGRESS = "in_progress"
    AWAITING_REVIEW = "awaiting_review"
    AWAITING_INTEGRATION = "awaiting_integration"
    REVISION_NEEDED = "revision_needed"
    BLOCKED = "blocked"
    RECOVERY_CANDIDATES = "recovery_candidates"
    DONE_RECENTLY = "done_recently"
    CLOSED = "closed"


class AttemptState(StrEnum):
    ACTIVE = "ACTIVE"
    SUBMITTED = "SUBMITTED"
    RELINQUISHED = "RELINQUISHED"
    SUPERSEDED = "SUPERSEDED"
    COMPLETED = "COMPLETED"


class AttemptKind(StrEnum):
    FRESH = "FRESH"
    RECOVERY = "RECOVERY"


class CloseReason(StrEnum):
    REJECTED = "REJECTED"
    SUPERSEDED = "SUPERSEDED"
    DUPLICATE = "DUPLICATE"
    DEFERRED = "DEFERRED"
    # Done outside hub (no review or integration in hub vouches for it): it does not
    # keep its dependents or its parent waiting, as DONE does not; it is never claimable.
    COMPLETED = "COMPLETED"


class WaitKind(StrEnum):
    """Why one task waits for another: a prerequisite, or a parent for its child."""

    PREREQUISITE = "PREREQUISITE"
    CHILD = "CHILD"


class LinkKind(StrEnum):
    DUPLICATE_OF = "DUPLICATE_OF"
    RELATED = "RELATED"
    SUPERSEDES = "SUPERSEDES"


class SubmissionOutcome(StrEnum):
    DELIVERED = "DELIVERED"
    PARTIAL = "PARTIAL"
    # After a claim, the work turned out done already: the criteria hold on a revision
    # the submission names, with evidence. Reviewed like a delivery; nothing to integrate.
    ALREADY_SATISFIED = "ALREADY_SATISFIED"


class RecoveryDisposition(StrEnum):
    RESUME_SAVED_WORK = "RESUME_SAVED_WORK"
    RECONCILE_DELIVERED = "RECONCILE_DELIVERED"
    RESTART = "RESTART"
    BLOCKED = "BLOCKED"


class AdapterEvent(StrEnum):
    TURN_ENDED = "TURN_ENDED"
    COMPACTED = "COMPACTED"
    DISCONNECTED = "DISCONNECTED"
    RESUMED = "RESUMED"
    RELINQUISHED = "RELINQUISHED"
    COMPLETED = "COMPLETED"


class AttemptNoteKind(StrEnum):
    RECOVERY_NOTE = "RECOVERY_NOTE"
    CRITERIA_RECONCILED = "CRITERIA_RECONCILED"
    ADAPTER_EVENT = "ADAPTER_EVENT"


class WorkEvent(StrEnum):
    """The events the work module appends (clients filter the feed by prefix)."""

    TASK_CREATED = "task.created"
    TASK_EDITED = "task.edited"
    TASK_LINKED = "task.linked"
    TASK_CLOSED = "task.closed"
    TASK_REOPENED = "task.reopened"
    TASK_DONE = "task.done"
    TASK_AWAITING_INTEGRATION = "task.awaiting_integration"
    TASK_REVISION_NEEDED = "task.revision_needed"
    TASK_RELEASED_FOR_RECOVERY = "task.released_for_recovery"
    TASK_PREREQUISITE_ADDED = "task.prerequisite_added"
    TASK_PREREQUISITE_REMOVED = "task.prerequisite_removed"
    ATTEMPT_CLAIMED = "attempt.claimed"
    ATTEMPT_RECOVERY_CLAIMED = "attempt.recovery_claimed"
    ATTEMPT_RECOVERY_NOTE = "attempt.recovery_note"
    ATTEMPT_RELINQUISHED = "attempt.relinquished"
    ATTEMPT_REVOKED = "attempt.revoked"
    ATTEMPT_SUBMITTED = "attempt.submitted"
    LEASE_RENEWED = "lease.renewed"
    CHECKPOINT_RECORDED = "checkpoint.recorded"
    CRITERIA_RECONCILED = "criteria.reconciled"
    ACCEPTANCE_RECORDED = "acceptance.recorded"
    RECOVERY_DISPOSITION = "recovery.disposition"
    WORKTREE_REGISTERED = "worktree.registered"
    WORKTREE_RELEASED = "worktree.released"



class WorkInvariant(StrEnum):
    """What `hub maintenance check` verifies of the work module's rows
    (`work._invariants`; docs/ops/maintenance.md, "What a finding means")."""

    # At most one ACTIVE attempt per task (the partial unique index's rule).
    ONE_CURRENT_ATTEMPT = "work.one_current_attempt"
    # A task is IN_PROGRESS iff it names a current attempt, and that attempt is an ACTIVE
    # attempt of the task.
    CURRENT_ATTEMPT = "work.current_attempt"
    # Every ACTIVE attempt is its task's current attempt.
    ACTIVE_ATTEMPT_IS_CURRENT = "work.active_attempt_is_current"
    # No attempt carries a generation its task has not reached (each claim advances it).
    GENERATION = "work.generation"
    # `blocked_count` = incomplete prerequisites + (for a parent) incomplete required
    # children.
    BLOCKED_COUNT = "work.blocked_count"

# States from which a fresh claim may start (with no incomplete prerequisites).
CLAIMABLE_STATES = (TaskState.OPEN, TaskState.REVISION_NEEDED)
# States of finished work: a task in one is no duplicate anyone could still do twice.
FINISHED_STATES = (TaskState.DONE, TaskState.CLOSED)
# Outcomes that put a candidate up for review: the task's current submission is its
# newest of these (`_workflow.current_submission`).
CANDIDATE_OUTCOMES = (SubmissionOutcome.DELIVERED, SubmissionOutcome.ALREADY_SATISFIED)
