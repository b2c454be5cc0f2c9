"""GraphQL types of the work module: tasks, attempts, leases, submissions, recovery."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.integration.types import Integration
from hub.api.jobs.types import Job
from hub.api.knowledge.types import Lesson
from hub.api.loaders import each, load, load_many
from hub.api.mapping import from_view, shows
from hub.api.resources.types import Reservation
from hub.api.work.enums import (
    AttemptKind,
    AttemptState,
    CloseReason,
    EffectiveTaskState,
    LinkKind,
    RecoveryDisposition,
    SubmissionOutcome,
    TaskKind,
    TaskState,
)
from hub.integration import service as integration
from hub.jobs import service as jobs
from hub.knowledge import service as knowledge
from hub.resources import service as resources
from hub.work import service as work

# Nested fields, read for every parent in a list at once (`hub.api.loaders`).
_ATTEMPTS = work.get_attempts
_TASKS = work.get_tasks
_SUBMISSIONS = each(work.list_submissions)
_LINKS = each(work.task_links)
_JOBS = each(jobs.jobs_for_task)
_HOLDS = each(resources.task_holds)
_INTEGRATIONS = each(integration.integrations_of)
_LESSONS = each(knowledge.submission_lessons)


@strawberry.type(description="Temporary authority over an attempt; its deadline is the service's.")
class Lease:
    attempt_id: strawberry.ID
    generation: int
    expires_at: datetime
    heartbeat_seconds: int


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
    acceptance_criteria: list[str] = strawberry.field(metadata=shows("criteria"))
    generation: int = strawberry.field(description="Ownership generation: +1 per claim.")
    current_attempt_id: strawberry.ID | None
    blocked_count: int
    prerequisite_ids: list[strawberry.ID]
    labels: list[str] = strawberry.field(description="Words it is filed under (imported).")
    close_reason: CloseReason | None
    close_note: str | None
    reopen_condition: str | None = strawberry.field(
        description=(
            "A DEFERRED task's condition for coming back. Kept when it is reopened, so "
            "whoever picks it up sees what it waited for; its next close sets its own."
        )
    )
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
        return from_view(Attempt, await load(info, _ATTEMPTS, str(self.current_attempt_id)))

    @strawberry.field(description="The tasks this one waits for, as they are now.")
    async def prerequisites(self, info: Info[HubContext, Any]) -> list[Task]:
        found = await load_many(info, _TASKS, [str(p) for p in self.prerequisite_ids])
        return [from_view(Task, view) for view in found]

    @strawberry.field(
        description="What its attempts delivered, oldest first (review and integration "
        "follow the newest)."
    )
    async def submissions(self, info: Info[HubContext, Any]) -> list[Submission]:
        found = await load(info, _SUBMISSIONS, str(self.id))
        return [from_view(Submission, view) for view in found]

    @strawberry.field(description="Links recorded from or to this task, oldest first.")
    async def links(self, info: Info[HubContext, Any]) -> list[TaskLink]:
        found = await load(info, _LINKS, str(self.id))
        return [from_view(TaskLink, view) for view in found]

    @strawberry.field(
        description=(
            "The task this one duplicates (its newest DUPLICATE_OF link; closing as "
            "DUPLICATE records one), as it is now. While that original is neither done "
            "nor closed, this task is not claimable."
        )
    )
    async def duplicate_of(self, info: Info[HubContext, Any]) -> Task | None:
        found = await load(info, _LINKS, str(self.id))
        originals = [
            link.other_id
            for link in found
            if link.kind == LinkKind.DUPLICATE_OF and link.task_id == str(self.id)
        ]
        if not originals:
            return None
        return from_view(Task, await load(info, _TASKS, originals[-1]))


@strawberry.type(
    description=(
        "A task like the text searched for, and how alike: informational only, "
        "similarity never decides identity (a source id does). Ranked by the text's "
        "words the task holds, then full-text relevance."
    )
)
class SimilarTask:
    task: Task
    rank: int
    relevance: float = strawberry.field(
        description="Full-text relevance as a share of the best match's: 1 for the best."
    )
    shared_words: int = strawberry.field(
        description="How many of the text's distinct words (stop words aside) the task's "
        "title, outcome and criteria hold."
    )
    query_words: int = strawberry.field(
        description="How many distinct words the text has (its first 20 are searched)."
    )
    likely_duplicate: bool = strawberry.field(
        description="Holds at least three quarters of the text's words, and two at least."
    )
    unfinished: bool = strawberry.field(
        description="Neither DONE nor CLOSED: work that may still be done twice."
    )


@strawberry.type(description="`taskId kind otherTaskId`, e.g. A SUPERSEDES B.")
class TaskLink:
    task_id: strawberry.ID
    kind: LinkKind
    other_task_id: strawberry.ID = strawberry.field(metadata=shows("other_id"))
    created_at: datetime
    created_by: strawberry.ID


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


@strawberry.type
class Worktree:
    id: strawberry.ID
    task_id: strawberry.ID
    attempt_id: strawberry.ID
    repository_id: strawberry.ID
    worktree_id: str = strawberry.field(metadata=shows("identity"))
    path: str = strawberry.field(description="Descriptive only: other workstations can't read it.")
    branch: str
    base_revision: str
    workstation: str
    registered_at: datetime
    released_at: datetime | None


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
    referenced_lessons: list[str] = strawberry.field(description="Ids of existing lessons.")
    new_lessons: JSON = strawberry.field(
        description="The lessons it proposed, as written; each was published (`lessons`)."
    )
    evidence_ids: list[strawberry.ID] = strawberry.field(
        description="Evidence records it cites (ALREADY_SATISFIED cites one at least)."
    )
    created_at: datetime

    @strawberry.field(description="The lessons published from this submission.")
    async def lessons(self, info: Info[HubContext, Any]) -> list[Lesson]:
        found = await load(info, _LESSONS, str(self.id))
        return [from_view(Lesson, view) for view in found]


@strawberry.type
class AttemptNote:
    id: strawberry.ID
    attempt_id: strawberry.ID
    kind: str
    body: str
    author_id: strawberry.ID
    created_at: datetime


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
        found = await load(info, _JOBS, str(self.task.id))
        return [from_view(Job, view) for view in found]

    @strawberry.field(description="The task's reservations in a recovery hold now.")
    async def holds(self, info: Info[HubContext, Any]) -> list[Reservation]:
        found = await load(info, _HOLDS, str(self.task.id))
        return [from_view(Reservation, view) for view in found]

    @strawberry.field(
        description=(
            "Integrations carried out under this task (or of its submissions), with their "
            "reports: what was published and what is not known yet. An unfinished one is "
            "inherited by whoever holds the task next."
        )
    )
    async def integrations(self, info: Info[HubContext, Any]) -> list[Integration]:
        found = await load(info, _INTEGRATIONS, str(self.task.id))
        return [from_view(Integration, view) for view in found]
