"""Jobs-specific refusals; each is a kind of the shared problem types."""

from __future__ import annotations

from hub.errors import InvalidTransition, PermissionDenied


class NotYourJob(PermissionDenied):
    """Also the answer for a job that does not exist: an observer outside a job's scope
    learns nothing about which job ids exist."""

    def __init__(self, job_id: str) -> None:
        super().__init__(
            f"no job {job_id!r} that this credential may report on: only the session that owns "
            "the job's attempt, or a reporter token scoped to that attempt, reports a job"
        )


class JobAlreadyTerminal(InvalidTransition):
    def __init__(self, job_id: str, status: str) -> None:
        super().__init__(f"job {job_id} is {status}: its producer's result is already recorded")
