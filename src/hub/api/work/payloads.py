"""Payloads of the work mutations, and their result unions."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from hub.api.identity.types import AgentSession
from hub.api.mapping import shows
from hub.api.problems import AnyProblem
from hub.api.work.types import (
    Attempt,
    AttemptNote,
    Checkpoint,
    Lease,
    RecoveryPacket,
    Submission,
    Task,
    Worktree,
)


@strawberry.type
class TaskPayload:
    task: Task
    server_time: datetime


@strawberry.type
class CreateTaskPayload:
    task: Task
    replay: bool
    server_time: datetime


@strawberry.type
class ClaimPayload:
    task: Task
    attempt: Attempt
    lease: Lease = strawberry.field(metadata=shows("attempt.lease"))
    replay: bool = strawberry.field(description="A retry of an earlier claim: current state.")
    server_time: datetime


@strawberry.type
class ClaimRecoveryPayload:
    task: Task
    attempt: Attempt
    lease: Lease = strawberry.field(metadata=shows("attempt.lease"))
    replay: bool
    recovery_packet: RecoveryPacket
    server_time: datetime


@strawberry.type
class AttemptPayload:
    task: Task
    attempt: Attempt
    lease: Lease = strawberry.field(metadata=shows("attempt.lease"))
    replay: bool
    checkpoint: Checkpoint | None = None
    worktree: Worktree | None = None
    submission: Submission | None = None
    server_time: datetime


@strawberry.type
class AddRecoveryNotePayload:
    note: AttemptNote
    server_time: datetime


@strawberry.type
class RecordAdapterEventPayload:
    session: AgentSession
    attempts: list[Attempt] = strawberry.field(
        description="The session's current attempts, reconciled; an event never claims."
    )
    server_time: datetime


CreateTaskResult = Annotated[CreateTaskPayload | AnyProblem, strawberry.union("CreateTaskResult")]
EditTaskResult = Annotated[TaskPayload | AnyProblem, strawberry.union("EditTaskResult")]
AddPrerequisiteResult = Annotated[
    TaskPayload | AnyProblem, strawberry.union("AddPrerequisiteResult")
]
RemovePrerequisiteResult = Annotated[
    TaskPayload | AnyProblem, strawberry.union("RemovePrerequisiteResult")
]
LinkTasksResult = Annotated[TaskPayload | AnyProblem, strawberry.union("LinkTasksResult")]
CloseTaskResult = Annotated[TaskPayload | AnyProblem, strawberry.union("CloseTaskResult")]
ReopenTaskResult = Annotated[TaskPayload | AnyProblem, strawberry.union("ReopenTaskResult")]
ReleaseTaskResult = Annotated[TaskPayload | AnyProblem, strawberry.union("ReleaseTaskResult")]
RevokeAttemptResult = Annotated[TaskPayload | AnyProblem, strawberry.union("RevokeAttemptResult")]
ClaimTaskResult = Annotated[ClaimPayload | AnyProblem, strawberry.union("ClaimTaskResult")]
ClaimRecoveryResult = Annotated[
    ClaimRecoveryPayload | AnyProblem, strawberry.union("ClaimRecoveryResult")
]
RenewLeaseResult = Annotated[AttemptPayload | AnyProblem, strawberry.union("RenewLeaseResult")]
RegisterWorktreeResult = Annotated[
    AttemptPayload | AnyProblem, strawberry.union("RegisterWorktreeResult")
]
RecordCheckpointResult = Annotated[
    AttemptPayload | AnyProblem, strawberry.union("RecordCheckpointResult")
]
RelinquishAttemptResult = Annotated[
    AttemptPayload | AnyProblem, strawberry.union("RelinquishAttemptResult")
]
SubmitAttemptResult = Annotated[
    AttemptPayload | AnyProblem, strawberry.union("SubmitAttemptResult")
]
RecordRecoveryDispositionResult = Annotated[
    AttemptPayload | AnyProblem, strawberry.union("RecordRecoveryDispositionResult")
]
ReconcileCriteriaResult = Annotated[
    AttemptPayload | AnyProblem, strawberry.union("ReconcileCriteriaResult")
]
RecordAcceptanceResult = Annotated[
    AttemptPayload | AnyProblem, strawberry.union("RecordAcceptanceResult")
]
AddRecoveryNoteResult = Annotated[
    AddRecoveryNotePayload | AnyProblem, strawberry.union("AddRecoveryNoteResult")
]
RecordAdapterEventResult = Annotated[
    RecordAdapterEventPayload | AnyProblem, strawberry.union("RecordAdapterEventResult")
]
