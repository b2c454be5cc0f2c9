"""Work-specific refusals; each is a kind of the shared problem types."""

from __future__ import annotations

from datetime import datetime

from hub.errors import Conflict, InvalidTransition, LeaseExpired, StaleGeneration


class TaskNotClaimable(Conflict):
    pass


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
