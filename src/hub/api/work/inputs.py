"""Inputs of the work mutations."""

from __future__ import annotations

import strawberry

from hub.api.work.enums import (
    AdapterEvent,
    CloseReason,
    LinkKind,
    RecoveryDisposition,
    SubmissionOutcome,
    TaskKind,
)


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
        default=None,
        description=(
            "The commit delivered (required for implementation tasks); for "
            "ALREADY_SATISFIED, the revision on which the criteria already hold."
        ),
    )
    referenced_lessons: list[str] = strawberry.field(default_factory=list)
    new_lessons: list[NewLessonInput] = strawberry.field(default_factory=list)
    evidence_ids: list[strawberry.ID] = strawberry.field(
        default_factory=list,
        description=(
            "Evidence records of this project the submission cites (recordEvidence); "
            "ALREADY_SATISFIED needs one at least."
        ),
    )
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
