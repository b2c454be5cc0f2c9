"""work: tasks, dependencies, claims, leases, submissions, recovery, adapter events."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.identity import AgentSession
from hub.api.operations import mutate, read, read_optional
from hub.api.problems import AnyProblem
from hub.api.relay import Connection, connection, decode_cursor, page_size
from hub.api.work_types import (
    AdapterEvent,
    Attempt,
    AttemptNote,
    Checkpoint,
    CloseReason,
    Lease,
    LinkKind,
    RecoveryDisposition,
    RecoveryPacket,
    Submission,
    SubmissionOutcome,
    Task,
    TaskKind,
    TaskState,
    Worktree,
)
from hub.identity.actor import Actor
from hub.identity.permissions import require_reporter_scope
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work
from hub.work import views

# --- inputs ---------------------------------------------------------------------------


@strawberry.input
class CreateTaskInput:
    project_id: strawberry.ID
    kind: TaskKind
    title: str
    outcome: str = ""
    acceptance_criteria: list[str] = strawberry.field(default_factory=list)
    priority: int = 0
    parent_id: strawberry.ID | None = None
    required: bool = strawberry.field(default=True, description="A required child of its parent.")
    prerequisite_ids: list[strawberry.ID] = strawberry.field(default_factory=list)
    source_system: str | None = None
    source_id: str | None = strawberry.field(
        default=None, description="Stable id in the source system; unique per project and system."
    )
    idempotency_key: str | None = None


@strawberry.input
class EditTaskInput:
    task_id: strawberry.ID
    expected_revision: int
    title: str | None = None
    outcome: str | None = None
    priority: int | None = None
    acceptance_criteria: list[str] | None = strawberry.field(
        default=None,
        description=(
            "Changing them creates a new criteria revision. Refused while a submission of "
            "the task is in review or integration."
        ),
    )
    required: bool | None = None
    reason: str | None = strawberry.field(
        default=None,
        description=(
            "Why; required (from an operator) to drop a closed child from its parent's "
            "requirements."
        ),
    )


@strawberry.input
class AddPrerequisiteInput:
    task_id: strawberry.ID
    prerequisite_id: strawberry.ID
    override_reason: str | None = strawberry.field(
        default=None,
        description="Operators only: change the prerequisites of a task with an active attempt.",
    )


@strawberry.input
class RemovePrerequisiteInput(AddPrerequisiteInput):
    pass


@strawberry.input
class LinkTasksInput:
    task_id: strawberry.ID
    other_task_id: strawberry.ID
    kind: LinkKind


@strawberry.input
class CloseTaskInput:
    task_id: strawberry.ID
    reason: CloseReason
    note: str = ""
    reopen_condition: str | None = strawberry.field(
        default=None, description="Required for DEFERRED: when this should come back."
    )
    related_task_id: strawberry.ID | None = strawberry.field(
        default=None, description="The replacing task, for SUPERSEDED and DUPLICATE."
    )


@strawberry.input
class ReopenTaskInput:
    task_id: strawberry.ID
    reason: str


@strawberry.input
class ClaimTaskInput:
    project_id: strawberry.ID
    task_id: strawberry.ID | None = strawberry.field(
        default=None,
        description=(
            "Claim this task; omit to claim the next eligible one. When nothing is ready, "
            "the answer is NotFound with code NO_ELIGIBLE_TASK: nothing to do now."
        ),
    )
    kinds: list[TaskKind] = strawberry.field(default_factory=list)
    idempotency_key: str | None = None


@strawberry.input
class ClaimRecoveryInput:
    task_id: strawberry.ID
    idempotency_key: str | None = None


@strawberry.input
class ReleaseTaskInput:
    task_id: strawberry.ID
    reason: str


@strawberry.input
class RevokeAttemptInput:
    attempt_id: strawberry.ID
    reason: str


@strawberry.input
class RenewLeaseInput:
    attempt_id: strawberry.ID
    generation: int
    idempotency_key: str | None = None


@strawberry.input
class RegisterWorktreeInput:
    attempt_id: strawberry.ID
    generation: int
    repository_id: strawberry.ID
    worktree_id: str = strawberry.field(
        description="The checkout's resolved identity (e.g. its git dir), not just its path."
    )
    path: str
    branch: str
    base_revision: str
    workstation: str


@strawberry.input
class RecordCheckpointInput:
    attempt_id: strawberry.ID
    generation: int
    summary: str
    revision: str | None = None
    branch: str | None = None
    published: bool = False
    idempotency_key: str | None = None


@strawberry.input
class RelinquishAttemptInput:
    attempt_id: strawberry.ID
    generation: int
    reason: str
    idempotency_key: str | None = None


@strawberry.input
class NewLessonInput:
    statement: str
    explanation: str = ""
    tags: list[str] = strawberry.field(default_factory=list)


@strawberry.input
class SubmitAttemptInput:
    attempt_id: strawberry.ID
    generation: int
    outcome: SubmissionOutcome
    result: str
    handoff: str = ""
    candidate_revision: str | None = strawberry.field(
        default=None, description="The commit delivered (required for implementation tasks)."
    )
    referenced_lessons: list[str] = strawberry.field(default_factory=list)
    new_lessons: list[NewLessonInput] = strawberry.field(default_factory=list)
    idempotency_key: str | None = None


@strawberry.input
class RecordRecoveryDispositionInput:
    attempt_id: strawberry.ID
    generation: int
    disposition: RecoveryDisposition
    reason: str = ""


@strawberry.input
class AddRecoveryNoteInput:
    attempt_id: strawberry.ID
    note: str


@strawberry.input
class ReconcileCriteriaInput:
    attempt_id: strawberry.ID
    generation: int
    criteria_revision: int
    note: str


@strawberry.input
class RecordAcceptanceInput:
    attempt_id: strawberry.ID
    generation: int
    criteria_revision: int
    evidence: list[str]
    note: str = ""


@strawberry.input
class RecordAdapterEventInput:
    session_id: strawberry.ID
    event: AdapterEvent
    attempt_id: strawberry.ID | None = None
    generation: int | None = None
    detail: str = ""


# --- payloads -------------------------------------------------------------------------


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
    lease: Lease
    replay: bool = strawberry.field(description="A retry of an earlier claim: current state.")
    server_time: datetime


@strawberry.type
class ClaimRecoveryPayload:
    task: Task
    attempt: Attempt
    lease: Lease
    replay: bool
    recovery_packet: RecoveryPacket
    server_time: datetime


@strawberry.type
class AttemptPayload:
    task: Task
    attempt: Attempt
    lease: Lease
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


def _task_payload(view: views.TaskView, now: datetime) -> TaskPayload:
    return TaskPayload(task=Task.of(view), server_time=now)


def _attempt_payload(result: views.AttemptResult, now: datetime) -> AttemptPayload:
    return AttemptPayload(
        task=Task.of(result.task),
        attempt=Attempt.of(result.attempt),
        lease=Lease.of(result.attempt.lease),
        replay=result.replay,
        checkpoint=Checkpoint.of(result.checkpoint) if result.checkpoint else None,
        worktree=Worktree.of(result.worktree) if result.worktree else None,
        submission=Submission.of(result.submission) if result.submission else None,
        server_time=now,
    )


def _claim_payload(result: views.ClaimResult, now: datetime) -> ClaimPayload:
    return ClaimPayload(
        task=Task.of(result.task),
        attempt=Attempt.of(result.attempt),
        lease=Lease.of(result.attempt.lease),
        replay=result.replay,
        server_time=now,
    )


def _ids(values: list[strawberry.ID]) -> list[str]:
    return [str(value) for value in values]


# --- queries --------------------------------------------------------------------------


@strawberry.type
class WorkQuery:
    @strawberry.field
    async def task(self, info: Info[HubContext, Any], id: strawberry.ID) -> Task | None:
        view = await read_optional(info, lambda uow, _: work.get_task(uow, str(id)))
        return Task.of(view) if view else None

    @strawberry.field(description="A project's tasks, filtered, in creation order.")
    async def tasks(
        self,
        info: Info[HubContext, Any],
        project_id: strawberry.ID,
        states: list[TaskState] | None = None,
        kinds: list[TaskKind] | None = None,
        parent_id: strawberry.ID | None = None,
        first: int | None = None,
        after: str | None = None,
    ) -> Connection[Task]:
        def load(uow: UnitOfWork, _actor: Actor) -> tuple[int, list[views.TaskView]]:
            size = page_size(first, uow.settings.max_page_size)
            query = work.TaskFilter(
                project_id=str(project_id),
                states=[s.value for s in states or []],
                kinds=[k.value for k in kinds or []],
                parent_id=str(parent_id) if parent_id else None,
                after=decode_cursor(after),
                limit=size + 1,
            )
            return size, work.list_tasks(uow, query)

        size, found = await read(info, load)
        return connection(found, size, key=lambda v: v.id, node=Task.of)

    @strawberry.field(
        description="Ready work by priority then age. Informational: it may be stale at once."
    )
    async def candidates(
        self,
        info: Info[HubContext, Any],
        project_id: strawberry.ID,
        kinds: list[TaskKind] | None = None,
        first: int = 20,
    ) -> list[Task]:
        def load(uow: UnitOfWork, _actor: Actor) -> list[views.TaskView]:
            size = page_size(first, uow.settings.max_page_size)
            return work.candidates(
                uow, project_id=str(project_id), kinds=[k.value for k in kinds or []], limit=size
            )

        return [Task.of(view) for view in await read(info, load)]

    @strawberry.field
    async def attempt(self, info: Info[HubContext, Any], id: strawberry.ID) -> Attempt | None:
        def load(uow: UnitOfWork, actor: Actor) -> views.AttemptView:
            require_reporter_scope(actor, str(id), f"attempt {id}")
            return work.get_attempt(uow, str(id))

        view = await read_optional(info, load)
        return Attempt.of(view) if view else None

    @strawberry.field(description="Prior attempts, checkpoints, submissions, worktrees, notes.")
    async def recovery_packet(
        self, info: Info[HubContext, Any], task_id: strawberry.ID
    ) -> RecoveryPacket | None:
        packet = await read_optional(info, lambda uow, _: work.recovery_packet(uow, str(task_id)))
        return RecoveryPacket.of(packet) if packet else None


# --- mutations ------------------------------------------------------------------------


@strawberry.type
class WorkMutation:
    @strawberry.mutation
    async def create_task(
        self, info: Info[HubContext, Any], input: CreateTaskInput
    ) -> CreateTaskResult:
        command = work.NewTask(
            project_id=str(input.project_id),
            kind=input.kind.value,
            title=input.title,
            outcome=input.outcome,
            acceptance_criteria=list(input.acceptance_criteria),
            priority=input.priority,
            parent_id=str(input.parent_id) if input.parent_id else None,
            required=input.required,
            prerequisite_ids=_ids(input.prerequisite_ids),
            source_system=input.source_system,
            source_id=input.source_id,
            idempotency_key=input.idempotency_key,
        )
        return await mutate(
            info,
            lambda uow, actor: work.create_task(uow, actor, command),
            lambda made, now: CreateTaskPayload(
                task=Task.of(made.value), replay=made.replayed, server_time=now
            ),
        )

    @strawberry.mutation(description="Edit descriptive fields; never state or ownership.")
    async def edit_task(self, info: Info[HubContext, Any], input: EditTaskInput) -> EditTaskResult:
        command = work.TaskEdit(
            task_id=str(input.task_id),
            expected_revision=input.expected_revision,
            title=input.title,
            outcome=input.outcome,
            priority=input.priority,
            acceptance_criteria=input.acceptance_criteria,
            required=input.required,
            reason=input.reason,
        )
        return await mutate(
            info, lambda uow, actor: work.edit_task(uow, actor, command), _task_payload
        )

    @strawberry.mutation
    async def add_prerequisite(
        self, info: Info[HubContext, Any], input: AddPrerequisiteInput
    ) -> AddPrerequisiteResult:
        return await mutate(
            info,
            lambda uow, actor: work.add_prerequisite(
                uow,
                actor,
                task_id=str(input.task_id),
                prerequisite_id=str(input.prerequisite_id),
                override_reason=input.override_reason,
            ),
            _task_payload,
        )

    @strawberry.mutation
    async def remove_prerequisite(
        self, info: Info[HubContext, Any], input: RemovePrerequisiteInput
    ) -> RemovePrerequisiteResult:
        return await mutate(
            info,
            lambda uow, actor: work.remove_prerequisite(
                uow,
                actor,
                task_id=str(input.task_id),
                prerequisite_id=str(input.prerequisite_id),
                override_reason=input.override_reason,
            ),
            _task_payload,
        )

    @strawberry.mutation
    async def link_tasks(
        self, info: Info[HubContext, Any], input: LinkTasksInput
    ) -> LinkTasksResult:
        return await mutate(
            info,
            lambda uow, actor: work.link_tasks(
                uow,
                actor,
                task_id=str(input.task_id),
                other_id=str(input.other_task_id),
                kind=input.kind.value,
            ),
            _task_payload,
        )

    @strawberry.mutation
    async def close_task(
        self, info: Info[HubContext, Any], input: CloseTaskInput
    ) -> CloseTaskResult:
        return await mutate(
            info,
            lambda uow, actor: work.close_task(
                uow,
                actor,
                task_id=str(input.task_id),
                reason=input.reason.value,
                note=input.note,
                reopen_condition=input.reopen_condition,
                related_task_id=str(input.related_task_id) if input.related_task_id else None,
            ),
            _task_payload,
        )

    @strawberry.mutation
    async def reopen_task(
        self, info: Info[HubContext, Any], input: ReopenTaskInput
    ) -> ReopenTaskResult:
        return await mutate(
            info,
            lambda uow, actor: work.reopen_task(
                uow, actor, task_id=str(input.task_id), reason=input.reason
            ),
            _task_payload,
        )

    @strawberry.mutation(
        description="Claim a named task or the next eligible one: one attempt, one lease."
    )
    async def claim_task(
        self, info: Info[HubContext, Any], input: ClaimTaskInput
    ) -> ClaimTaskResult:
        command = work.ClaimRequest(
            project_id=str(input.project_id),
            task_id=str(input.task_id) if input.task_id else None,
            kinds=[k.value for k in input.kinds],
            idempotency_key=input.idempotency_key,
        )
        return await mutate(
            info, lambda uow, actor: work.claim_task(uow, actor, command), _claim_payload
        )

    @strawberry.mutation(
        description="Take over a task whose lease expired; returns the recovery packet."
    )
    async def claim_recovery(
        self, info: Info[HubContext, Any], input: ClaimRecoveryInput
    ) -> ClaimRecoveryResult:
        def payload(made: views.RecoveryClaim, now: datetime) -> ClaimRecoveryPayload:
            claim, packet = made.claim, made.packet
            return ClaimRecoveryPayload(
                task=Task.of(claim.task),
                attempt=Attempt.of(claim.attempt),
                lease=Lease.of(claim.attempt.lease),
                replay=claim.replay,
                recovery_packet=RecoveryPacket.of(packet),
                server_time=now,
            )

        return await mutate(
            info,
            lambda uow, actor: work.claim_recovery(
                uow, actor, task_id=str(input.task_id), idempotency_key=input.idempotency_key
            ),
            payload,
        )

    @strawberry.mutation(description="Operators: release an expired task for a recovery claim.")
    async def release_task(
        self, info: Info[HubContext, Any], input: ReleaseTaskInput
    ) -> ReleaseTaskResult:
        return await mutate(
            info,
            lambda uow, actor: work.release_task(
                uow, actor, task_id=str(input.task_id), reason=input.reason
            ),
            _task_payload,
        )

    @strawberry.mutation(
        description=(
            "Operators: end a live lease now. The attempt's generation is fenced and the "
            "task becomes a recovery candidate, released for a recovery claim."
        )
    )
    async def revoke_attempt(
        self, info: Info[HubContext, Any], input: RevokeAttemptInput
    ) -> RevokeAttemptResult:
        return await mutate(
            info,
            lambda uow, actor: work.revoke_attempt(
                uow, actor, attempt_id=str(input.attempt_id), reason=input.reason
            ),
            _task_payload,
        )

    @strawberry.mutation
    async def renew_lease(
        self, info: Info[HubContext, Any], input: RenewLeaseInput
    ) -> RenewLeaseResult:
        return await mutate(
            info,
            lambda uow, actor: work.renew_lease(
                uow,
                actor,
                attempt_id=str(input.attempt_id),
                generation=input.generation,
                idempotency_key=input.idempotency_key,
            ),
            _attempt_payload,
        )

    @strawberry.mutation
    async def register_worktree(
        self, info: Info[HubContext, Any], input: RegisterWorktreeInput
    ) -> RegisterWorktreeResult:
        command = work.WorktreeRequest(
            attempt_id=str(input.attempt_id),
            generation=input.generation,
            repository_id=str(input.repository_id),
            worktree_id=input.worktree_id,
            path=input.path,
            branch=input.branch,
            base_revision=input.base_revision,
            workstation=input.workstation,
        )
        return await mutate(
            info, lambda uow, actor: work.register_worktree(uow, actor, command), _attempt_payload
        )

    @strawberry.mutation
    async def record_checkpoint(
        self, info: Info[HubContext, Any], input: RecordCheckpointInput
    ) -> RecordCheckpointResult:
        return await mutate(
            info,
            lambda uow, actor: work.record_checkpoint(
                uow,
                actor,
                attempt_id=str(input.attempt_id),
                generation=input.generation,
                summary=input.summary,
                revision=input.revision,
                branch=input.branch,
                published=input.published,
                idempotency_key=input.idempotency_key,
            ),
            _attempt_payload,
        )

    @strawberry.mutation
    async def relinquish_attempt(
        self, info: Info[HubContext, Any], input: RelinquishAttemptInput
    ) -> RelinquishAttemptResult:
        return await mutate(
            info,
            lambda uow, actor: work.relinquish_attempt(
                uow,
                actor,
                attempt_id=str(input.attempt_id),
                generation=input.generation,
                reason=input.reason,
                idempotency_key=input.idempotency_key,
            ),
            _attempt_payload,
        )

    @strawberry.mutation(
        description="Save result, handoff, lessons and the task's transition at once."
    )
    async def submit_attempt(
        self, info: Info[HubContext, Any], input: SubmitAttemptInput
    ) -> SubmitAttemptResult:
        command = work.SubmitRequest(
            attempt_id=str(input.attempt_id),
            generation=input.generation,
            outcome=input.outcome.value,
            result=input.result,
            handoff=input.handoff,
            candidate_revision=input.candidate_revision,
            referenced_lessons=list(input.referenced_lessons),
            new_lessons=[
                {"statement": new.statement, "explanation": new.explanation, "tags": list(new.tags)}
                for new in input.new_lessons
            ],
            idempotency_key=input.idempotency_key,
        )
        return await mutate(
            info, lambda uow, actor: work.submit_attempt(uow, actor, command), _attempt_payload
        )

    @strawberry.mutation
    async def record_recovery_disposition(
        self, info: Info[HubContext, Any], input: RecordRecoveryDispositionInput
    ) -> RecordRecoveryDispositionResult:
        return await mutate(
            info,
            lambda uow, actor: work.record_recovery_disposition(
                uow,
                actor,
                attempt_id=str(input.attempt_id),
                generation=input.generation,
                disposition=input.disposition.value,
                reason=input.reason,
            ),
            _attempt_payload,
        )

    @strawberry.mutation(
        description="A late agent's note on its own finished attempt; changes nothing else."
    )
    async def add_recovery_note(
        self, info: Info[HubContext, Any], input: AddRecoveryNoteInput
    ) -> AddRecoveryNoteResult:
        return await mutate(
            info,
            lambda uow, actor: work.add_recovery_note(
                uow, actor, attempt_id=str(input.attempt_id), note=input.note
            ),
            lambda note, now: AddRecoveryNotePayload(note=AttemptNote.of(note), server_time=now),
        )

    @strawberry.mutation
    async def reconcile_criteria(
        self, info: Info[HubContext, Any], input: ReconcileCriteriaInput
    ) -> ReconcileCriteriaResult:
        return await mutate(
            info,
            lambda uow, actor: work.reconcile_criteria(
                uow,
                actor,
                attempt_id=str(input.attempt_id),
                generation=input.generation,
                criteria_revision=input.criteria_revision,
                note=input.note,
            ),
            _attempt_payload,
        )

    @strawberry.mutation(description="Non-code tasks: record that the current criteria are met.")
    async def record_acceptance(
        self, info: Info[HubContext, Any], input: RecordAcceptanceInput
    ) -> RecordAcceptanceResult:
        return await mutate(
            info,
            lambda uow, actor: work.record_acceptance(
                uow,
                actor,
                attempt_id=str(input.attempt_id),
                generation=input.generation,
                criteria_revision=input.criteria_revision,
                evidence=list(input.evidence),
                note=input.note,
            ),
            _attempt_payload,
        )

    @strawberry.mutation(description="What the harness saw; a resume reconciles and never claims.")
    async def record_adapter_event(
        self, info: Info[HubContext, Any], input: RecordAdapterEventInput
    ) -> RecordAdapterEventResult:
        return await mutate(
            info,
            lambda uow, actor: work.record_adapter_event(
                uow,
                actor,
                session_id=str(input.session_id),
                event=input.event.value,
                attempt_id=str(input.attempt_id) if input.attempt_id else None,
                generation=input.generation,
                detail=input.detail,
            ),
            lambda made, now: RecordAdapterEventPayload(
                session=AgentSession.of(made.session),
                attempts=[Attempt.of(a) for a in made.attempts],
                server_time=now,
            ),
        )
