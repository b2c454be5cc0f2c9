"""What the work module returns: plain, immutable views, detached from the session."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from hub.mapping import view_of
from hub.work.tables import Attempt, Checkpoint, Submission, Task, Worktree
from hub.work.vocabulary import (
    FINISHED_STATES,
    AttemptKind,
    AttemptNoteKind,
    AttemptState,
    BoardGroup,
    EffectiveTaskState,
    LinkKind,
    RecoveryDisposition,
    SubmissionOutcome,
    TaskKind,
    TaskState,
    WaitKind,
)


@dataclass(frozen=True)
class LeaseView:
    attempt_id: str
    generation: int
    expires_at: datetime
    heartbeat_seconds: int


@dataclass(frozen=True)
class AttemptView:
    id: str
    project_id: str
    task_id: str
    session_id: str
    principal_id: str
    workstation: str
    kind: AttemptKind
    generation: int
    state: AttemptState
    lease_seconds: int
    heartbeat_seconds: int
    expires_at: datetime
    criteria_revision: int
    recovers_attempt_id: str | None
    disposition: RecoveryDisposition | None
    disposition_reason: str | None
    acceptance: dict[str, Any] | None
    started_at: datetime
    last_progress_at: datetime
    ended_at: datetime | None
    end_reason: str | None
    revoked_at: datetime | None
    revoked_by: str | None
    revoke_reason: str | None
    is_current: bool
    # Judged at read time, each meaning one thing (see docs/workflow.md):
    lease_expired: bool  # coordinator time has reached expires_at (ended attempts: always)
    holds_authority: bool  # the live, current attempt at the task's generation: may act
    stale_progress: bool  # live, but no progress for the stale-progress threshold

    @property
    def lease(self) -> LeaseView:
        return LeaseView(self.id, self.generation, self.expires_at, self.heartbeat_seconds)


@dataclass(frozen=True)
class LinkView:
    """A link between two tasks of a project, read from `task_id`'s side."""

    task_id: str
    other_id: str
    kind: LinkKind  # DUPLICATE_OF, RELATED or SUPERSEDES, as recorded (task_id KIND other_id)
    created_at: datetime
    created_by: str


@dataclass(frozen=True)
class TaskView:
    id: str
    project_id: str
    kind: TaskKind
    title: str
    outcome: str
    priority: int
    state: TaskState
    effective_state: EffectiveTaskState
    parent_id: str | None
    required: bool
    source_system: str | None
    source_id: str | None
    revision: int
    criteria_revision: int
    criteria: tuple[str, ...]
    generation: int
    current_attempt_id: str | None
    blocked_count: int
    prerequisite_ids: tuple[str, ...]
    labels: tuple[str, ...]
    close_reason: str | None
    close_note: str | None
    reopen_condition: str | None
    created_at: datetime
    updated_at: datetime
    created_by: str
    # The submission a REVIEW or INTEGRATION task was opened for; None for other kinds.
    subject_submission_id: str | None = None


@dataclass(frozen=True)
class SimilarTask:
    """A task like a piece of text, and how alike (`work._similar`): informational only."""

    task: TaskView
    rank: int
    relevance: float  # full-text relevance as a share of the best match's (1 for the best)
    shared_words: int  # how many of the text's distinct words the task holds
    query_words: int  # how many distinct words the text has (at most MAX_TERMS)
    likely_duplicate: bool  # shares enough of them: `_similar.likely_duplicate`

    @property
    def unfinished(self) -> bool:
        """Neither done nor closed: work that someone may still do twice."""
        return self.task.state not in FINISHED_STATES


@dataclass(frozen=True)
class BoardHolder:
    """Who holds a task on the board: its current attempt, judged at read time."""

    attempt_id: str
    principal_id: str
    session_id: str
    workstation: str
    expires_at: datetime
    last_progress_at: datetime
    stale_at: datetime  # when the attempt's progress goes stale (a warning, never an end)
    stale_progress: bool
    lease_expired: bool


@dataclass(frozen=True)
class BoardCard:
    """One task as a card of its project's board (`work._board`)."""

    id: str
    project_id: str
    kind: TaskKind
    title: str
    priority: int
    state: TaskState
    effective_state: EffectiveTaskState
    group: BoardGroup | None  # None: done long ago, on no group of the board
    updated_at: datetime
    holder: BoardHolder | None
    last_checkpoint_at: datetime | None


@dataclass(frozen=True)
class BoardPage:
    """A page of a project's board: each wanted group's cards and every group's count."""

    now: datetime  # coordinator time the board was judged at
    counts: dict[BoardGroup, int]
    cards: dict[BoardGroup, tuple[BoardCard, ...]]
    text_matches_capped: bool  # a text filter found more tasks than the board searches


@dataclass(frozen=True)
class CreatedTask:
    """A created task, with the project's tasks most like it at the time."""

    task: TaskView
    similar: tuple[SimilarTask, ...]


@dataclass(frozen=True)
class CheckpointView:
    id: str
    attempt_id: str
    task_id: str
    summary: str
    revision: str | None
    branch: str | None
    published: bool
    created_at: datetime


@dataclass(frozen=True)
class WorktreeView:
    id: str
    task_id: str
    attempt_id: str
    repository_id: str
    identity: str
    path: str
    branch: str
    base_revision: str
    workstation: str
    registered_at: datetime
    released_at: datetime | None


@dataclass(frozen=True)
class SubmissionView:
    id: str
    project_id: str
    task_id: str
    attempt_id: str
    session_id: str
    principal_id: str
    generation: int
    outcome: SubmissionOutcome
    result: str
    handoff: str
    candidate_revision: str | None
    criteria_revision: int
    policy_revision: int
    referenced_lessons: tuple[str, ...]
    new_lessons: tuple[dict[str, Any], ...]
    evidence_ids: tuple[str, ...]
    created_at: datetime


@dataclass(frozen=True)
class NoteView:
    id: str
    attempt_id: str
    kind: AttemptNoteKind
    body: str
    author_id: str
    created_at: datetime


@dataclass(frozen=True)
class ClaimResult:
    """A claim's answer. `task` is None when the caller said it will not read it
    (`UnitOfWork.unread`): the view costs a read of its own."""

    task: TaskView | None
    attempt: AttemptView
    replay: bool


@dataclass(frozen=True)
class HeldAttempt:
    """An attempt the caller holds, checked, and its task: what other modules' operations
    act under (`work.hold_attempt`)."""

    task: TaskView
    attempt: AttemptView


@dataclass(frozen=True)
class AttemptResult:
    """The outcome of an ownership-dependent mutation: the attempt as it is now. `task`
    is None when the caller said it will not read it (`UnitOfWork.unread`)."""

    task: TaskView | None
    attempt: AttemptView
    replay: bool = False
    checkpoint: CheckpointView | None = None
    worktree: WorktreeView | None = None
    submission: SubmissionView | None = None


@dataclass(frozen=True)
class RecoveryPacket:
    task: TaskView
    attempts: tuple[AttemptView, ...]
    checkpoints: tuple[CheckpointView, ...]
    submissions: tuple[SubmissionView, ...]
    worktrees: tuple[WorktreeView, ...]
    published_revisions: tuple[str, ...]
    notes: tuple[NoteView, ...]


@dataclass(frozen=True)
class RecoveryClaim:
    """A recovery claim's answer: the new attempt, and what the recovering agent needs to
    decide what to do with the saved work."""

    claim: ClaimResult
    packet: RecoveryPacket


def attempt_view(
    row: Attempt, task: Task, now: datetime, *, stale_progress_seconds: int
) -> AttemptView:
    is_current = task.current_attempt_id == row.id
    live = row.state == AttemptState.ACTIVE and row.lease_valid_at(now)
    return view_of(
        AttemptView,
        row,
        is_current=is_current,
        lease_expired=not row.lease_valid_at(now),
        holds_authority=live and is_current and task.generation == row.generation,
        # A warning only: it never ends a lease or changes anything.
        stale_progress=live
        and now - row.last_progress_at >= timedelta(seconds=stale_progress_seconds),
    )


def checkpoint_view(row: Checkpoint) -> CheckpointView:
    return view_of(CheckpointView, row)


def worktree_view(row: Worktree) -> WorktreeView:
    return view_of(WorktreeView, row)


def submission_view(row: Submission) -> SubmissionView:
    return view_of(SubmissionView, row)


@dataclass(frozen=True)
class CriteriaRevisionView:
    """One revision of a task's acceptance criteria, as it was set."""

    task_id: str
    revision: int
    criteria: tuple[str, ...]
    created_at: datetime
    created_by: str


@dataclass(frozen=True)
class WaitEdge:
    """`task_id` waits for `other_id`: its prerequisite, or (kind CHILD) its child."""

    task_id: str
    other_id: str
    kind: WaitKind


@dataclass(frozen=True)
class TaskGraph:
    """Tasks and what they wait for among themselves (`work._family`)."""

    tasks: tuple[TaskView, ...]
    edges: tuple[WaitEdge, ...]
    # Tasks left out to keep the picture readable: 0 when it shows everything asked for.
    left_out: int
