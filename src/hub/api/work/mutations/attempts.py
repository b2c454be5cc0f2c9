"""The work mutations by and on attempts: claims, leases, worktrees, checkpoints,
submissions, recovery, acceptance, and what an agent's harness saw."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.mapping import from_view, payload
from hub.api.operations import mutate
from hub.api.work.inputs import (
    AddRecoveryNoteInput,
    ClaimRecoveryInput,
    ClaimTaskInput,
    ReconcileCriteriaInput,
    RecordAcceptanceInput,
    RecordAdapterEventInput,
    RecordCheckpointInput,
    RecordRecoveryDispositionInput,
    RegisterWorktreeInput,
    ReleaseTaskInput,
    RelinquishAttemptInput,
    RenewLeaseInput,
    RevokeAttemptInput,
    SubmitAttemptInput,
)
from hub.api.work.payloads import (
    AddRecoveryNotePayload,
    AddRecoveryNoteResult,
    AttemptPayload,
    ClaimPayload,
    ClaimRecoveryPayload,
    ClaimRecoveryResult,
    ClaimTaskResult,
    ReconcileCriteriaResult,
    RecordAcceptanceResult,
    RecordAdapterEventPayload,
    RecordAdapterEventResult,
    RecordCheckpointResult,
    RecordRecoveryDispositionResult,
    RegisterWorktreeResult,
    ReleaseTaskResult,
    RelinquishAttemptResult,
    RenewLeaseResult,
    RevokeAttemptResult,
    SubmitAttemptResult,
    TaskPayload,
)
from hub.api.work.types import RecoveryPacket
from hub.work import service as work

_task_payload = payload(TaskPayload, "task")
_attempt_payload = payload(AttemptPayload)


@strawberry.type
class AttemptMutation:
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
            info, lambda uow, actor: work.claim_task(uow, actor, command), payload(ClaimPayload)
        )

    @strawberry.mutation(
        description="Take over a task whose lease expired; returns the recovery packet."
    )
    async def claim_recovery(
        self, info: Info[HubContext, Any], input: ClaimRecoveryInput
    ) -> ClaimRecoveryResult:
        return await mutate(
            info,
            lambda uow, actor: work.claim_recovery(
                uow, actor, task_id=str(input.task_id), idempotency_key=input.idempotency_key
            ),
            lambda made, now: from_view(
                ClaimRecoveryPayload,
                made.claim,
                recovery_packet=from_view(RecoveryPacket, made.packet),
                server_time=now,
            ),
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
            outcome=input.outcome,
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
                disposition=input.disposition,
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
            payload(AddRecoveryNotePayload, "note"),
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
                event=input.event,
                attempt_id=str(input.attempt_id) if input.attempt_id else None,
                generation=input.generation,
                detail=input.detail,
            ),
            payload(RecordAdapterEventPayload),
        )
