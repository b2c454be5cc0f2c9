"""Work-specific refusals; each is a kind of the shared problem types."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from hub.errors import (
    Blocked,
    Conflict,
    InvalidTransition,
    LeaseExpired,
    NotFound,
    PermissionDenied,
    ProblemCode,
    StaleGeneration,
)


class TaskNotClaimable(Conflict):
    pass


class NoEligibleTask(NotFound):
    """A claim of the next eligible task found nothing ready for this session.

    An answer, not a fault: the problem type stays `NotFound` (what = "eligible task"),
    with its own code so that clients tell "nothing to do now" from an unknown project
    or task (`NOT_FOUND`) without reading the message.
    """

    code = ProblemCode.NO_ELIGIBLE_TASK

    def __init__(self, project_id: str, kinds: Sequence[str] = ()) -> None:
        super().__init__("eligible task", project_id)
        of_kind = f" of kind {', '.join(kinds)}" if kinds else ""
        self.message = (
            f"nothing to do in project {project_id}: no task{of_kind} is ready for this "
            "session to claim now (open or sent back for revision, unblocked, and not its "
            "own work to review)"
        )
        self.args = (self.message,)


class DuplicateOfUnfinished(Blocked):
    """A claim of a task linked DUPLICATE_OF a task that is neither done nor closed: the
    original is where the work happens, so this one is not claimed (next-eligible claims
    and `candidates` skip it). The problem type stays `Blocked`, its blockers the
    original's id, with its own code so that clients tell it from a busy session."""

    code = ProblemCode.DUPLICATE_OF_UNFINISHED

    def __init__(self, task_id: str, original_id: str, original_state: str) -> None:
        super().__init__(
            f"task {task_id} duplicates task {original_id}, which is {original_state}: work "
            f"on {original_id} instead, or close {task_id} as DUPLICATE of it",
            blockers=[original_id],
        )
        self.original_id = original_id


class TaskOwned(TaskNotClaimable):
    def __init__(self, task_id: str, attempt_id: str, expires_at: datetime) -> None:
        super().__init__(
            f"task {task_id} is owned by attempt {attempt_id} until {expires_at.isoformat()}"
        )


class RecoveryRequired(Conflict):
    def __init__(self, task_id: str) -> None:
        super().__init__(
            f"task {task_id}'s lease has expired: it is a recovery candidate; use claimRecovery"
        )


class AttemptLeaseExpired(LeaseExpired):
    def __init__(self, attempt_id: str, expires_at: str) -> None:
        super().__init__(f"the lease of attempt {attempt_id} expired at {expires_at}")


class AttemptSuperseded(StaleGeneration):
    def __init__(self, attempt_id: str, generation: int, current: int) -> None:
        super().__init__(
            f"attempt {attempt_id} holds generation {generation} but the task is at generation "
            f"{current}: another attempt owns it now; stop and reconcile"
        )


class DispositionRequired(InvalidTransition):
    def __init__(self, attempt_id: str) -> None:
        super().__init__(
            f"recovery attempt {attempt_id} must record a disposition "
            "(recordRecoveryDisposition) before any other change"
        )


class CriteriaChanged(InvalidTransition):
    def __init__(self, used: int, current: int) -> None:
        super().__init__(
            f"acceptance criteria changed (attempt used revision {used}, current is {current}): "
            "reconcileCriteria first"
        )


class CycleRefused(Conflict):
    def __init__(self, task_id: str, prerequisite_id: str) -> None:
        super().__init__(
            f"{prerequisite_id} already depends on {task_id}: the edge would make a cycle"
        )


class NotIndependent(PermissionDenied):
    """A reviewer who is not independent of the submission (`work._independence`): the
    problem type clients see stays `PermissionDenied`."""
