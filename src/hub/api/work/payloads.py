"""Payloads of the work mutations, and their result unions."""

from __future__ import annotations

from datetime import datetime

import strawberry

from hub.api.identity.types import AgentSession
from hub.api.mapping import shows
from hub.api.problems import result_union
from hub.api.work.types import (
    Attempt,
    AttemptNote,
    Checkpoint,
    Lease,
    RecoveryPacket,
    SimilarTask,
    Submission,
    Task,
    Worktree,
)
from hub.review import service as review
from hub.work import service as work


@strawberry.type
class TaskPayload:
    task: Task
    server_time: datetime


@strawberry.type
class CreateTaskPayload:
    task: Task
    similar: list[SimilarTask] = strawberry.field(
        description=(
            "The project's tasks most like the new one by its title, best first, found "
            "when it was created (a replay answers the same): informational only, the "
            "task is created whatever they are. Clients warn on a likely duplicate that "
            "is unfinished."
        )
    )
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


CreateTaskResult = result_union("CreateTaskResult", CreateTaskPayload, work.create_task)
EditTaskResult = result_union("EditTaskResult", TaskPayload, work.edit_task)
AddPrerequisiteResult = result_union("AddPrerequisiteResult", TaskPayload, work.add_prerequisite)
RemovePrerequisiteResult = result_union(
    "RemovePrerequisiteResult", TaskPayload, work.remove_prerequisite
)
LinkTasksResult = result_union("LinkTasksResult", TaskPayload, work.link_tasks)
CloseTaskResult = result_union("CloseTaskResult", TaskPayload, work.close_task)
ReopenTaskResult = result_union("ReopenTaskResult", TaskPayload, work.reopen_task)
ReleaseTaskResult = result_union("ReleaseTaskResult", TaskPayload, work.release_task)
RevokeAttemptResult = result_union("RevokeAttemptResult", TaskPayload, work.revoke_attempt)
ClaimTaskResult = result_union("ClaimTaskResult", ClaimPayload, work.claim_task)
ClaimRecoveryResult = result_union("ClaimRecoveryResult", ClaimRecoveryPayload, work.claim_recovery)
RenewLeaseResult = result_union("RenewLeaseResult", AttemptPayload, work.renew_lease)
RegisterWorktreeResult = result_union(
    "RegisterWorktreeResult", AttemptPayload, work.register_worktree
)
RecordCheckpointResult = result_union(
    "RecordCheckpointResult", AttemptPayload, work.record_checkpoint
)
RelinquishAttemptResult = result_union(
    "RelinquishAttemptResult", AttemptPayload, work.relinquish_attempt
)
SubmitAttemptResult = result_union("SubmitAttemptResult", AttemptPayload, review.submit_attempt)
RecordRecoveryDispositionResult = result_union(
    "RecordRecoveryDispositionResult", AttemptPayload, work.record_recovery_disposition
)
ReconcileCriteriaResult = result_union(
    "ReconcileCriteriaResult", AttemptPayload, work.reconcile_criteria
)
RecordAcceptanceResult = result_union(
    "RecordAcceptanceResult", AttemptPayload, work.record_acceptance
)
AddRecoveryNoteResult = result_union(
    "AddRecoveryNoteResult", AddRecoveryNotePayload, work.add_recovery_note
)
RecordAdapterEventResult = result_union(
    "RecordAdapterEventResult", RecordAdapterEventPayload, work.record_adapter_event
)
