"""The work mutations by and on attempts: claims, leases, worktrees, checkpoints,
submissions, recovery, acceptance, and what an agent's harness saw."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.mapping import call, from_view, payload
from hub.api.operations import mutate
from hub.api.problems import Problem
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
from hub.review import service as review
from hub.work import service as work

_task_payload = payload(TaskPayload, "task")
_attempt_payload = payload(AttemptPayload)


@strawberry.type
class AttemptMutation:
    @strawberry.mutation(
        graphql_type=ClaimTaskResult,
        description="Claim a named task or the next eligible one: one attempt, one lease.",
    )
    async def claim_task(
        self, info: Info[HubContext, Any], input: ClaimTaskInput
    ) -> ClaimPayload | Problem:
        return await mutate(info, call(work.claim_task, input), payload(ClaimPayload))

    @strawberry.mutation(
        graphql_type=ClaimRecoveryResult,
        description="Take over a task whose lease expired; returns the recovery packet.",
    )
    async def claim_recovery(
        self, info: Info[HubContext, Any], input: ClaimRecoveryInput
    ) -> ClaimRecoveryPayload | Problem:
        return await mutate(
            info,
            call(work.claim_recovery, input),
            lambda made, now: from_view(
                ClaimRecoveryPayload,
                made.claim,
                recovery_packet=from_view(RecoveryPacket, made.packet),
                server_time=now,
            ),
        )

    @strawberry.mutation(
        graphql_type=ReleaseTaskResult,
        description="Operators: release an expired task for a recovery claim.",
    )
    async def release_task(
        self, info: Info[HubContext, Any], input: ReleaseTaskInput
    ) -> TaskPayload | Problem:
        return await mutate(info, call(work.release_task, input), _task_payload)

    @strawberry.mutation(
        graphql_type=RevokeAttemptResult,
        description=(
            "Operators: end a live lease now. The attempt's generation is fenced and the "
            "task becomes a recovery candidate, released for a recovery claim."
        ),
    )
    async def revoke_attempt(
        self, info: Info[HubContext, Any], input: RevokeAttemptInput
    ) -> TaskPayload | Problem:
        return await mutate(info, call(work.revoke_attempt, input), _task_payload)

    @strawberry.mutation(graphql_type=RenewLeaseResult)
    async def renew_lease(
        self, info: Info[HubContext, Any], input: RenewLeaseInput
    ) -> AttemptPayload | Problem:
        return await mutate(info, call(work.renew_lease, input), _attempt_payload)

    @strawberry.mutation(graphql_type=RegisterWorktreeResult)
    async def register_worktree(
        self, info: Info[HubContext, Any], input: RegisterWorktreeInput
    ) -> AttemptPayload | Problem:
        return await mutate(info, call(work.register_worktree, input), _attempt_payload)

    @strawberry.mutation(graphql_type=RecordCheckpointResult)
    async def record_checkpoint(
        self, info: Info[HubContext, Any], input: RecordCheckpointInput
    ) -> AttemptPayload | Problem:
        return await mutate(info, call(work.record_checkpoint, input), _attempt_payload)

    @strawberry.mutation(graphql_type=RelinquishAttemptResult)
    async def relinquish_attempt(
        self, info: Info[HubContext, Any], input: RelinquishAttemptInput
    ) -> AttemptPayload | Problem:
        return await mutate(info, call(work.relinquish_attempt, input), _attempt_payload)

    @strawberry.mutation(
        graphql_type=SubmitAttemptResult,
        description="Save result, handoff, lessons and the task's transition at once.",
    )
    async def submit_attempt(
        self, info: Info[HubContext, Any], input: SubmitAttemptInput
    ) -> AttemptPayload | Problem:
        # Through review (the evidence it cites checked) and knowledge (the lessons it
        # proposes published with it).
        return await mutate(info, call(review.submit_attempt, input), _attempt_payload)

    @strawberry.mutation(graphql_type=RecordRecoveryDispositionResult)
    async def record_recovery_disposition(
        self, info: Info[HubContext, Any], input: RecordRecoveryDispositionInput
    ) -> AttemptPayload | Problem:
        return await mutate(info, call(work.record_recovery_disposition, input), _attempt_payload)

    @strawberry.mutation(
        graphql_type=AddRecoveryNoteResult,
        description="A late agent's note on its own finished attempt; changes nothing else.",
    )
    async def add_recovery_note(
        self, info: Info[HubContext, Any], input: AddRecoveryNoteInput
    ) -> AddRecoveryNotePayload | Problem:
        return await mutate(
            info, call(work.add_recovery_note, input), payload(AddRecoveryNotePayload, "note")
        )

    @strawberry.mutation(graphql_type=ReconcileCriteriaResult)
    async def reconcile_criteria(
        self, info: Info[HubContext, Any], input: ReconcileCriteriaInput
    ) -> AttemptPayload | Problem:
        return await mutate(info, call(work.reconcile_criteria, input), _attempt_payload)

    @strawberry.mutation(
        graphql_type=RecordAcceptanceResult,
        description="Non-code tasks: record that the current criteria are met.",
    )
    async def record_acceptance(
        self, info: Info[HubContext, Any], input: RecordAcceptanceInput
    ) -> AttemptPayload | Problem:
        return await mutate(info, call(work.record_acceptance, input), _attempt_payload)

    @strawberry.mutation(
        graphql_type=RecordAdapterEventResult,
        description="What the harness saw; a resume reconciles and never claims.",
    )
    async def record_adapter_event(
        self, info: Info[HubContext, Any], input: RecordAdapterEventInput
    ) -> RecordAdapterEventPayload | Problem:
        return await mutate(
            info, call(work.record_adapter_event, input), payload(RecordAdapterEventPayload)
        )
