"""GraphQL types of the work module: tasks, attempts, leases, submissions, recovery."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, cast

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.jobs_types import Job
from hub.api.operations import read
from hub.api.resources_types import Reservation
from hub.integration import service as integration_service
from hub.jobs import service as jobs_service
from hub.resources import service as resources_service
from hub.work import service as work
from hub.work import views

if TYPE_CHECKING:
    from hub.api.review import Integration


@strawberry.enum
class TaskKind(Enum):
    IMPLEMENTATION = "IMPLEMENTATION"
    REVIEW = "REVIEW"
    INTEGRATION = "INTEGRATION"
    GENERAL = "GENERAL"
    OBJECTIVE = "OBJECTIVE"


@strawberry.enum
class TaskState(Enum):
    OPEN = "OPEN"
    IN_PROGRESS = "IN_PROGRESS"
    AWAITING_REVIEW = "AWAITING_REVIEW"
    AWAITING_INTEGRATION = "AWAITING_INTEGRATION"
    REVISION_NEEDED = "REVISION_NEEDED"
    DONE = "DONE"
    CLOSED = "CLOSED"


@strawberry.enum(description="The state as judged now: expiry needs no background job.")
class EffectiveTaskState(Enum):
    OPEN = "OPEN"
    BLOCKED = "BLOCKED"
    IN_PROGRESS = "IN_PROGRESS"
    RECOVERY_CANDIDATE = "RECOVERY_CANDIDATE"
    AWAITING_REVIEW = "AWAITING_REVIEW"
    AWAITING_INTEGRATION = "AWAITING_INTEGRATION"
    REVISION_NEEDED = "REVISION_NEEDED"
    DONE = "DONE"
    CLOSED = "CLOSED"


@strawberry.enum
class AttemptState(Enum):
    ACTIVE = "ACTIVE"
    SUBMITTED = "SUBMITTED"
    RELINQUISHED = "RELINQUISHED"
    SUPERSEDED = "SUPERSEDED"
    COMPLETED = "COMPLETED"


@strawberry.enum
class AttemptKind(Enum):
    FRESH = "FRESH"
    RECOVERY = "RECOVERY"


@strawberry.enum
class CloseReason(Enum):
    REJECTED = "REJECTED"
    SUPERSEDED = "SUPERSEDED"
    DUPLICATE = "DUPLICATE"
    DEFERRED = "DEFERRED"


@strawberry.enum
class LinkKind(Enum):
    DUPLICATE_OF = "DUPLICATE_OF"
    RELATED = "RELATED"
    SUPERSEDES = "SUPERSEDES"


@strawberry.enum
class SubmissionOutcome(Enum):
    DELIVERED = "DELIVERED"
    PARTIAL = "PARTIAL"


@strawberry.enum
class RecoveryDisposition(Enum):
    RESUME_SAVED_WORK = "RESUME_SAVED_WORK"
    RECONCILE_DELIVERED = "RECONCILE_DELIVERED"
    RESTART = "RESTART"
    BLOCKED = "BLOCKED"


@strawberry.enum
class AdapterEvent(Enum):
    TURN_ENDED = "TURN_ENDED"
    COMPACTED = "COMPACTED"
    DISCONNECTED = "DISCONNECTED"
    RESUMED = "RESUMED"
    RELINQUISHED = "RELINQUISHED"
    COMPLETED = "COMPLETED"


@strawberry.type(description="Temporary authority over an attempt; its deadline is the service's.")
class Lease:
    attempt_id: strawberry.ID
    generation: int
    expires_at: datetime
    heartbeat_seconds: int

    @classmethod
    def of(cls, lease: views.LeaseView) -> Lease:
        return cls(
            attempt_id=strawberry.ID(lease.attempt_id),
            generation=lease.generation,
            expires_at=lease.expires_at,
            heartbeat_seconds=lease.heartbeat_seconds,
        )


@strawberry.type
class Attempt:
    id: strawberry.ID
    project_id: strawberry.ID
    task_id: strawberry.ID
    session_id: strawberry.ID
    principal_id: strawberry.ID
    workstation: str
    kind: AttemptKind
    generation: int
    state: AttemptState
    is_current: bool
    lease_expired: bool = strawberry.field(
        description=(
            "Judged at read time: coordinator time has reached expiresAt (equality is "
            "expired). Ending an attempt ends its lease, so this is true for every ended "
            "attempt."
        )
    )
    holds_authority: bool = strawberry.field(
        description=(
            "Judged at read time: the task's live, current attempt at its current "
            "generation, whose session may make ownership-dependent changes now."
        )
    )
    stale_progress: bool = strawberry.field(
        description=(
            "Judged at read time: live, but no checkpoint or heartbeat from the agent for "
            "the stale-progress threshold. A warning only: it changes nothing."
        )
    )
    expires_at: datetime = strawberry.field(
        description="When the lease ends (for an ended attempt: when it ended, at the latest)."
    )
    lease_seconds: int
    heartbeat_seconds: int
    criteria_revision: int
    recovers_attempt_id: strawberry.ID | None
    disposition: RecoveryDisposition | None
    disposition_reason: str | None
    acceptance: JSON | None
    started_at: datetime
    last_progress_at: datetime
    ended_at: datetime | None
    end_reason: str | None
    revoked_at: datetime | None = strawberry.field(
        description="An operator ended this lease early (revokeAttempt)."
    )
    revoked_by: strawberry.ID | None
    revoke_reason: str | None
    lease: Lease

    @classmethod
    def of(cls, view: views.AttemptView) -> Attempt:
        return cls(
            id=strawberry.ID(view.id),
            project_id=strawberry.ID(view.project_id),
            task_id=strawberry.ID(view.task_id),
            session_id=strawberry.ID(view.session_id),
            principal_id=strawberry.ID(view.principal_id),
            workstation=view.workstation,
            kind=AttemptKind(view.kind),
            generation=view.generation,
            state=AttemptState(view.state),
            is_current=view.is_current,
            lease_expired=view.lease_expired,
            holds_authority=view.holds_authority,
            stale_progress=view.stale_progress,
            expires_at=view.expires_at,
            lease_seconds=view.lease_seconds,
            heartbeat_seconds=view.heartbeat_seconds,
            criteria_revision=view.criteria_revision,
            recovers_attempt_id=strawberry.ID(view.recovers_attempt_id)
            if view.recovers_attempt_id
            else None,
            disposition=RecoveryDisposition(view.disposition) if view.disposition else None,
            disposition_reason=view.disposition_reason,
            acceptance=cast(JSON, view.acceptance),
            started_at=view.started_at,
            last_progress_at=view.last_progress_at,
            ended_at=view.ended_at,
            end_reason=view.end_reason,
            revoked_at=view.revoked_at,
            revoked_by=strawberry.ID(view.revoked_by) if view.revoked_by else None,
            revoke_reason=view.revoke_reason,
            lease=Lease.of(view.lease),
        )


@strawberry.type
class Task:
    id: strawberry.ID
    project_id: strawberry.ID
    kind: TaskKind
    title: str
    outcome: str
    priority: int
    state: TaskState
    effective_state: EffectiveTaskState
    parent_id: strawberry.ID | None
    required: bool
    source_system: str | None
    source_id: str | None
    revision: int = strawberry.field(description="Edit revision: pass it as expectedRevision.")
    criteria_revision: int
    acceptance_criteria: list[str]
    generation: int = strawberry.field(description="Ownership generation: +1 per claim.")
    current_attempt_id: strawberry.ID | None
    blocked_count: int
    prerequisite_ids: list[strawberry.ID]
    close_reason: CloseReason | None
    close_note: str | None
    reopen_condition: str | None
    created_at: datetime
    updated_at: datetime
    created_by: strawberry.ID
    subject_submission_id: strawberry.ID | None = strawberry.field(
        description="The submission a REVIEW or INTEGRATION task was opened for."
    )

    @strawberry.field
    async def current_attempt(self, info: Info[HubContext, Any]) -> Attempt | None:
        if self.current_attempt_id is None:
            return None
        attempt_id = str(self.current_attempt_id)
        view = await read(info, lambda uow, _: work.get_attempt(uow, attempt_id))
        return Attempt.of(view)

    @strawberry.field(description="The tasks this one waits for, as they are now.")
    async def prerequisites(self, info: Info[HubContext, Any]) -> list[Task]:
        ids = [str(p) for p in self.prerequisite_ids]
        if not ids:
            return []
        found = await read(info, lambda uow, _: [work.get_task(uow, i) for i in ids])
        return [Task.of(view) for view in found]

    @strawberry.field(
        description="What its attempts delivered, oldest first (review and integration "
        "follow the newest)."
    )
    async def submissions(self, info: Info[HubContext, Any]) -> list[Submission]:
        task_id = str(self.id)
        found = await read(info, lambda uow, _: work.list_submissions(uow, task_id))
        return [Submission.of(view) for view in found]

    @strawberry.field(description="Links recorded from or to this task, oldest first.")
    async def links(self, info: Info[HubContext, Any]) -> list[TaskLink]:
        task_id = str(self.id)
        found = await read(info, lambda uow, _: work.task_links(uow, task_id))
        return [TaskLink.of(view) for view in found]

    @classmethod
    def of(cls, view: views.TaskView) -> Task:
        return cls(
            id=strawberry.ID(view.id),
            project_id=strawberry.ID(view.project_id),
            kind=TaskKind(view.kind),
            title=view.title,
            outcome=view.outcome,
            priority=view.priority,
            state=TaskState(view.state),
            effective_state=EffectiveTaskState(view.effective_state),
            parent_id=strawberry.ID(view.parent_id) if view.parent_id else None,
            required=view.required,
            source_system=view.source_system,
            source_id=view.source_id,
            revision=view.revision,
            criteria_revision=view.criteria_revision,
            acceptance_criteria=list(view.criteria),
            generation=view.generation,
            current_attempt_id=strawberry.ID(view.current_attempt_id)
            if view.current_attempt_id
            else None,
            blocked_count=view.blocked_count,
            prerequisite_ids=[strawberry.ID(p) for p in view.prerequisite_ids],
            close_reason=CloseReason(view.close_reason) if view.close_reason else None,
            close_note=view.close_note,
            reopen_condition=view.reopen_condition,
            created_at=view.created_at,
            updated_at=view.updated_at,
            created_by=strawberry.ID(view.created_by),
            subject_submission_id=strawberry.ID(view.subject_submission_id)
            if view.subject_submission_id
            else None,
        )


@strawberry.type(description="`taskId kind otherTaskId`, e.g. A SUPERSEDES B.")
class TaskLink:
    task_id: strawberry.ID
    kind: LinkKind
    other_task_id: strawberry.ID
    created_at: datetime
    created_by: strawberry.ID

    @classmethod
    def of(cls, view: views.LinkView) -> TaskLink:
        return cls(
            task_id=strawberry.ID(view.task_id),
            kind=LinkKind(view.kind),
            other_task_id=strawberry.ID(view.other_id),
            created_at=view.created_at,
            created_by=strawberry.ID(view.created_by),
        )


@strawberry.type
class Checkpoint:
    id: strawberry.ID
    attempt_id: strawberry.ID
    task_id: strawberry.ID
    summary: str
    revision: str | None
    branch: str | None
    published: bool = strawberry.field(
        description="Pushed to the shared remote; unpublished work is not recoverable elsewhere."
    )
    created_at: datetime

    @classmethod
    def of(cls, view: views.CheckpointView) -> Checkpoint:
        return cls(
            id=strawberry.ID(view.id),
            attempt_id=strawberry.ID(view.attempt_id),
            task_id=strawberry.ID(view.task_id),
            summary=view.summary,
            revision=view.revision,
            branch=view.branch,
            published=view.published,
            created_at=view.created_at,
        )


@strawberry.type
class Worktree:
    id: strawberry.ID
    task_id: strawberry.ID
    attempt_id: strawberry.ID
    repository_id: strawberry.ID
    worktree_id: str
    path: str = strawberry.field(description="Descriptive only: other workstations can't read it.")
    branch: str
    base_revision: str
    workstation: str
    registered_at: datetime
    released_at: datetime | None

    @classmethod
    def of(cls, view: views.WorktreeView) -> Worktree:
        return cls(
            id=strawberry.ID(view.id),
            task_id=strawberry.ID(view.task_id),
            attempt_id=strawberry.ID(view.attempt_id),
            repository_id=strawberry.ID(view.repository_id),
            worktree_id=view.identity,
            path=view.path,
            branch=view.branch,
            base_revision=view.base_revision,
            workstation=view.workstation,
            registered_at=view.registered_at,
            released_at=view.released_at,
        )


@strawberry.type
class Submission:
    id: strawberry.ID
    project_id: strawberry.ID
    task_id: strawberry.ID
    attempt_id: strawberry.ID
    session_id: strawberry.ID
    principal_id: strawberry.ID
    generation: int
    outcome: SubmissionOutcome
    result: str
    handoff: str
    candidate_revision: str | None
    criteria_revision: int = strawberry.field(description="The criteria revision the work used.")
    policy_revision: int = strawberry.field(description="The project policy pinned at submit.")
    referenced_lessons: list[str]
    new_lessons: JSON
    created_at: datetime

    @classmethod
    def of(cls, view: views.SubmissionView) -> Submission:
        return cls(
            id=strawberry.ID(view.id),
            project_id=strawberry.ID(view.project_id),
            task_id=strawberry.ID(view.task_id),
            attempt_id=strawberry.ID(view.attempt_id),
            session_id=strawberry.ID(view.session_id),
            principal_id=strawberry.ID(view.principal_id),
            generation=view.generation,
            outcome=SubmissionOutcome(view.outcome),
            result=view.result,
            handoff=view.handoff,
            candidate_revision=view.candidate_revision,
            criteria_revision=view.criteria_revision,
            policy_revision=view.policy_revision,
            referenced_lessons=list(view.referenced_lessons),
            new_lessons=cast(JSON, list(view.new_lessons)),
            created_at=view.created_at,
        )


@strawberry.type
class AttemptNote:
    id: strawberry.ID
    attempt_id: strawberry.ID
    kind: str
    body: str
    author_id: strawberry.ID
    created_at: datetime

    @classmethod
    def of(cls, view: views.NoteView) -> AttemptNote:
        return cls(
            id=strawberry.ID(view.id),
            attempt_id=strawberry.ID(view.attempt_id),
            kind=view.kind,
            body=view.body,
            author_id=strawberry.ID(view.author_id),
            created_at=view.created_at,
        )


@strawberry.type(description="What a recovering agent checks before it records a disposition.")
class RecoveryPacket:
    task: Task
    attempts: list[Attempt]
    checkpoints: list[Checkpoint]
    submissions: list[Submission]
    worktrees: list[Worktree]
    published_revisions: list[str]
    notes: list[AttemptNote]

    @strawberry.field(description="Jobs the task's attempts launched, freshness judged now.")
    async def jobs(self, info: Info[HubContext, Any]) -> list[Job]:
        task_id = str(self.task.id)
        found = await read(info, lambda uow, _: jobs_service.jobs_for_task(uow, task_id))
        return [Job.of(view) for view in found]

    @strawberry.field(description="The task's reservations in a recovery hold now.")
    async def holds(self, info: Info[HubContext, Any]) -> list[Reservation]:
        task_id = str(self.task.id)
        found = await read(info, lambda uow, _: resources_service.task_holds(uow, task_id))
        return [Reservation.of(view) for view in found]

    @strawberry.field(
        description=(
            "Integrations carried out under this task (or of its submissions), with their "
            "reports: what was published and what is not known yet. An unfinished one is "
            "inherited by whoever holds the task next."
        )
    )
    async def integrations(
        self, info: Info[HubContext, Any]
    ) -> list[Annotated[Integration, strawberry.lazy("hub.api.review")]]:
        from hub.api.review import Integration as IntegrationType  # a cycle at import time

        task_id = str(self.task.id)
        found = await read(
            info, lambda uow, _: integration_service.integrations_of(uow, task_id)
        )
        return [IntegrationType.of(view) for view in found]

    @classmethod
    def of(cls, packet: views.RecoveryPacket) -> RecoveryPacket:
        return cls(
            task=Task.of(packet.task),
            attempts=[Attempt.of(a) for a in packet.attempts],
            checkpoints=[Checkpoint.of(c) for c in packet.checkpoints],
            submissions=[Submission.of(s) for s in packet.submissions],
            worktrees=[Worktree.of(w) for w in packet.worktrees],
            published_revisions=list(packet.published_revisions),
            notes=[AttemptNote.of(n) for n in packet.notes],
        )
