"""Workflow relationships: review and integration as typed tasks of their own.

An implementation submission is not a finished deliverable. Review and integration
tasks become eligible from the immutable submission id and candidate revision, not
from the implementation task being done — that task is itself waiting for them
(docs/design.md, "Submissions, review and independence"). A new candidate is a new
submission; tasks opened for an older one are closed as superseded and their reviews
stay history.

The review and integration modules decide; this module moves the tasks.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from hub.errors import InvalidTransition, NotFound
from hub.events.service import About, record_event
from hub.ids import new_id
from hub.projects.service import PolicyView
from hub.projects.vocabulary import ReviewPolicy
from hub.storage.unit_of_work import UnitOfWork
from hub.work._lifecycle import end_attempt, mark_done, require_current_criteria
from hub.work._reading import task_view
from hub.work._rows import lock_task, require_task
from hub.work.tables import Attempt, Submission, Task, TaskCriteria, Worktree
from hub.work.views import (
    SubmissionView,
    TaskView,
    WorktreeView,
    submission_view,
    worktree_view,
)
from hub.work.vocabulary import (
    CANDIDATE_OUTCOMES,
    AttemptState,
    CloseReason,
    SubmissionOutcome,
    TaskKind,
    TaskState,
    WorkEvent,
)

OPEN_STATES = (TaskState.OPEN, TaskState.IN_PROGRESS, TaskState.REVISION_NEEDED)


@dataclass(frozen=True)
class Contributors:
    """Everyone recorded as having worked on a task's candidates, across recoveries and
    resubmissions (who may only propose resolutions of required findings). Reviewer
    independence has its own definition: `work._independence`."""

    session_ids: frozenset[str]
    attempt_ids: frozenset[str]
    principal_ids: frozenset[str]


def open_after_submission(
    uow: UnitOfWork, task: Task, submission: Submission, policy: PolicyView
) -> TaskState:
    """The implementation task's next state, opening the workflow tasks it waits on."""
    agent_reviews = (
        policy.required_agent_approvals
        if policy.review_policy in (ReviewPolicy.AGENT, ReviewPolicy.AGENT_AND_HUMAN)
        else 0
    )
    for index in range(agent_reviews):
        suffix = f" ({index + 1} of {agent_reviews})" if agent_reviews > 1 else ""
        _workflow_task(uow, task, submission, TaskKind.REVIEW, f"Review: {task.title}{suffix}")
    if policy.review_policy == ReviewPolicy.NONE:
        if submission.outcome == SubmissionOutcome.ALREADY_SATISFIED:
            return TaskState.DONE  # no review asked, and nothing to integrate
        _workflow_task(uow, task, submission, TaskKind.INTEGRATION, f"Integrate: {task.title}")
        return TaskState.AWAITING_INTEGRATION
    return TaskState.AWAITING_REVIEW


def _workflow_task(
    uow: UnitOfWork, task: Task, submission: Submission, kind: TaskKind, title: str
) -> Task:
    now = uow.now()
    row = Task(
        id=new_id("tsk"),
        project_id=task.project_id,
        kind=kind,
        title=title[:300],
        outcome=f"{kind.lower()} of submission {submission.id} "
        f"(candidate {submission.candidate_revision})",
        priority=task.priority,
        state=TaskState.OPEN,
        required=True,
        subject_submission_id=submission.id,
        revision=1,
        criteria_revision=1,
        generation=0,
        blocked_count=0,
        created_at=now,
        created_by=submission.principal_id,
        updated_at=now,
    )
    uow.session.add(row)
    uow.session.flush()
    uow.session.add(
        TaskCriteria(
            task_id=row.id,
            revision=1,
            project_id=row.project_id,
            criteria=[f"{kind.lower()} recorded for submission {submission.id}"],
            created_at=now,
            created_by=submission.principal_id,
        )
    )
    record_event(
        uow,
        WorkEvent.TASK_CREATED,
        About(task.project_id, row.id),
        by=submission.principal_id,
        payload={"kind": kind, "submission": submission.id, "for": task.id},
    )
    return row


def task_worktrees(uow: UnitOfWork, task_id: str) -> list[WorktreeView]:
    rows = uow.session.scalars(
        select(Worktree).where(Worktree.task_id == task_id).order_by(Worktree.registered_at)
    ).all()
    return [worktree_view(row) for row in rows]


def get_submission(uow: UnitOfWork, submission_id: str) -> SubmissionView:
    row = uow.session.get(Submission, submission_id)
    if row is None:
        raise NotFound("submission", submission_id)
    return submission_view(row)


def lock_submission(uow: UnitOfWork, submission_id: str) -> SubmissionView:
    """The submission, its task row locked: decisions about it (a human review) are made
    one at a time, on the task's current state."""
    submission = get_submission(uow, submission_id)
    lock_task(uow, submission.task_id)
    return submission


def current_submission(uow: UnitOfWork, task_id: str) -> SubmissionView | None:
    """The newest delivery of a task (or finding that it was already satisfied): the only
    one a review or integration may apply to."""
    row = uow.session.scalar(
        select(Submission)
        .where(Submission.task_id == task_id, Submission.outcome.in_(CANDIDATE_OUTCOMES))
        .order_by(Submission.created_at.desc(), Submission.id.desc())
        .limit(1)
    )
    return submission_view(row) if row is not None else None


def list_submissions(uow: UnitOfWork, task_id: str) -> list[SubmissionView]:
    rows = uow.session.scalars(
        select(Submission).where(Submission.task_id == task_id).order_by(Submission.id)
    ).all()
    return [submission_view(row) for row in rows]


def contributors(uow: UnitOfWork, task_id: str) -> Contributors:
    rows = uow.session.execute(
        select(Attempt.id, Attempt.session_id, Attempt.principal_id).where(
            Attempt.task_id == task_id
        )
    ).all()
    return Contributors(
        session_ids=frozenset(r.session_id for r in rows),
        attempt_ids=frozenset(r.id for r in rows),
        principal_ids=frozenset(r.principal_id for r in rows),
    )


def subject_of(uow: UnitOfWork, task_id: str) -> SubmissionView:
    """The submission a review or integration task was opened for."""
    task = require_task(uow, task_id)
    if task.subject_submission_id is None:
        raise InvalidTransition(f"task {task.id} is not a review or integration task")
    return get_submission(uow, task.subject_submission_id)


def workflow_tasks(uow: UnitOfWork, submission_id: str, kind: TaskKind) -> list[TaskView]:
    rows = uow.session.scalars(
        select(Task)
        .where(Task.subject_submission_id == submission_id, Task.kind == kind)
        .order_by(Task.id)
    ).all()
    return [task_view(uow, row) for row in rows]


def open_workflow_task(uow: UnitOfWork, submission_id: str, kind: TaskKind) -> str | None:
    """The submission's newest workflow task of `kind` that is not closed, if any."""
    found = uow.session.scalar(
        select(Task.id)
        .where(
            Task.subject_submission_id == submission_id,
            Task.kind == kind,
            Task.state != TaskState.CLOSED,
        )
        .order_by(Task.id.desc())
        .limit(1)
    )
    return None if found is None else str(found)


def workflow_sessions(uow: UnitOfWork, submission_id: str, kind: TaskKind) -> frozenset[str]:
    """The sessions that have held an attempt on the submission's review (or
    integration) tasks."""
    rows = uow.session.scalars(
        select(Attempt.session_id)
        .join(Task, Task.id == Attempt.task_id)
        .where(Task.subject_submission_id == submission_id, Task.kind == kind)
    ).all()
    return frozenset(rows)


def repin_submission(
    uow: UnitOfWork, submission_id: str, policy: PolicyView, *, reason: str
) -> SubmissionView:
    """Pin a submission waiting for review to another policy revision (an operator's
    decision, made in the review module): open the agent reviews it now needs, close
    the unclaimed review tasks it no longer needs."""
    row = uow.session.get_one(Submission, submission_id)
    task = lock_task(uow, row.task_id)
    if task.state != TaskState.AWAITING_REVIEW:
        raise InvalidTransition(f"task {task.id} is {task.state}, not awaiting review")
    row.policy_revision = policy.revision
    needed = (
        policy.required_agent_approvals
        if policy.review_policy in (ReviewPolicy.AGENT, ReviewPolicy.AGENT_AND_HUMAN)
        else 0
    )
    reviews = uow.session.scalars(
        select(Task)
        .where(
            Task.subject_submission_id == row.id,
            Task.kind == TaskKind.REVIEW,
            Task.state != TaskState.CLOSED,
        )
        .order_by(Task.id)
    ).all()
    for index in range(len(reviews), needed):
        _workflow_task(
            uow, task, row, TaskKind.REVIEW, f"Review: {task.title} ({index + 1} of {needed})"
        )
    unclaimed = [r for r in reviews if r.state == TaskState.OPEN]
    for surplus in unclaimed[: max(0, len(reviews) - needed)]:
        surplus = lock_task(uow, surplus.id)
        surplus.state = TaskState.CLOSED
        surplus.close_reason = CloseReason.SUPERSEDED
        surplus.close_note = f"policy re-pinned: {reason}"
        surplus.updated_at = uow.now()
    uow.session.flush()
    return submission_view(row)


def finish_workflow_attempt(
    uow: UnitOfWork, attempt_id: str, reason: str, *, actor_id: str
) -> None:
    """A review or integration attempt delivered its decision: the attempt completes and
    so does its task (which unblocks whatever depends on it). Called inside the operation
    that checked the attempt's authority."""
    attempt = uow.session.get_one(Attempt, attempt_id)
    task = lock_task(uow, attempt.task_id)
    end_attempt(attempt, AttemptState.COMPLETED, reason, uow.now())
    uow.session.flush()
    mark_done(uow, task, actor_id=actor_id, reason=reason)


def return_for_revision(uow: UnitOfWork, task_id: str, *, reason: str, actor_id: str) -> None:
    """A rejection, a conflict or a failed validation sends the implementation back.
    Earlier submissions stay; open workflow tasks for them close as superseded."""
    task = lock_task(uow, task_id)
    if task.state not in (TaskState.AWAITING_REVIEW, TaskState.AWAITING_INTEGRATION):
        raise InvalidTransition(f"task {task.id} is {task.state}, not awaiting review/integration")
    task.state = TaskState.REVISION_NEEDED
    task.updated_at = uow.now()
    _close_open_workflow_tasks(uow, task.id, reason)
    record_event(uow, WorkEvent.TASK_REVISION_NEEDED, task, by=actor_id, payload={"reason": reason})


def advance_to_integration(
    uow: UnitOfWork, task_id: str, submission_id: str, *, actor_id: str
) -> TaskView:
    """Review is satisfied: the implementation awaits integration, through its own task."""
    task = lock_task(uow, task_id)
    if task.state != TaskState.AWAITING_REVIEW:
        raise InvalidTransition(f"task {task.id} is {task.state}, not awaiting review")
    submission = uow.session.get_one(Submission, submission_id)
    task.state = TaskState.AWAITING_INTEGRATION
    task.updated_at = uow.now()
    # Reviews still open for it are no longer needed (a re-pinned policy asks fewer):
    # close them, ending any attempt on them, rather than strand a reviewer.
    _close_open_workflow_tasks(
        uow, task.id, f"review of submission {submission_id} is satisfied", only=submission_id
    )
    integration = _workflow_task(
        uow, task, submission, TaskKind.INTEGRATION, f"Integrate: {task.title}"
    )
    record_event(
        uow,
        WorkEvent.TASK_AWAITING_INTEGRATION,
        task,
        by=actor_id,
        payload={"submission": submission_id, "integrationTask": integration.id},
    )
    return task_view(uow, integration)


def review_satisfied(uow: UnitOfWork, task_id: str, submission_id: str, *, actor_id: str) -> None:
    """Review approves the task's current submission: a delivery awaits integration
    (`advance_to_integration`); an ALREADY_SATISFIED one is done now, since nothing
    changed and there is nothing to integrate."""
    submission = uow.session.get_one(Submission, submission_id)
    if submission.outcome != SubmissionOutcome.ALREADY_SATISFIED:
        advance_to_integration(uow, task_id, submission_id, actor_id=actor_id)
        return
    task = lock_task(uow, task_id)
    if task.state != TaskState.AWAITING_REVIEW:
        raise InvalidTransition(f"task {task.id} is {task.state}, not awaiting review")
    require_current_criteria(submission.criteria_revision, task)
    _close_open_workflow_tasks(
        uow, task.id, f"review of submission {submission_id} is satisfied", only=submission_id
    )
    mark_done(
        uow,
        task,
        actor_id=actor_id,
        reason=f"submission {submission_id} approved: already satisfied at "
        f"{submission.candidate_revision}",
    )


def reopen_workflow_task(uow: UnitOfWork, task_id: str, *, reason: str, actor_id: str) -> None:
    """An abandoned integration: its task goes back to ready work for another attempt."""
    task = lock_task(uow, task_id)
    now = uow.now()
    if task.current_attempt_id is not None:
        attempt = uow.session.get_one(Attempt, task.current_attempt_id)
        end_attempt(attempt, AttemptState.RELINQUISHED, reason, now)
        uow.session.flush()
        task.current_attempt_id = None
    task.state = TaskState.OPEN
    task.updated_at = now
    record_event(uow, WorkEvent.TASK_REOPENED, task, by=actor_id, payload={"reason": reason})


def complete_delivery(uow: UnitOfWork, task_id: str, *, actor_id: str, reason: str) -> None:
    """Integrated and validated on the target branch: only now is code done."""
    task = lock_task(uow, task_id)
    if task.state != TaskState.AWAITING_INTEGRATION:
        raise InvalidTransition(f"task {task.id} is {task.state}, not awaiting integration")
    delivered = current_submission(uow, task.id)
    if delivered is None:
        raise InvalidTransition(f"task {task.id} has no delivered submission")
    require_current_criteria(delivered.criteria_revision, task)
    mark_done(uow, task, actor_id=actor_id, reason=reason)


def awaiting_review(uow: UnitOfWork) -> list[tuple[TaskView, SubmissionView]]:
    """Implementation tasks waiting on review, across all projects, with their candidate."""
    rows = uow.session.scalars(
        select(Task).where(Task.state == TaskState.AWAITING_REVIEW).order_by(Task.updated_at)
    ).all()
    waiting = []
    for row in rows:
        submission = current_submission(uow, row.id)
        if submission is not None:
            waiting.append((task_view(uow, row), submission))
    return waiting


def close_superseded(uow: UnitOfWork, task_id: str, submission_id: str) -> None:
    _close_open_workflow_tasks(
        uow, task_id, f"superseded by submission {submission_id}", keep=submission_id
    )


def _close_open_workflow_tasks(
    uow: UnitOfWork,
    task_id: str,
    reason: str,
    *,
    keep: str | None = None,
    only: str | None = None,
) -> None:
    """Close the open workflow tasks of the task's submissions (all but `keep`, or just
    `only`), ending their attempts."""
    submissions = select(Submission.id).where(
        Submission.task_id == task_id, Submission.id != (keep or "")
    )
    if only is not None:
        submissions = submissions.where(Submission.id == only)
    for row in uow.session.scalars(
        select(Task).where(Task.subject_submission_id.in_(submissions), Task.state.in_(OPEN_STATES))
    ):
        row = lock_task(uow, row.id)
        if row.current_attempt_id is not None:
            attempt = uow.session.get_one(Attempt, row.current_attempt_id)
            end_attempt(attempt, AttemptState.SUPERSEDED, reason, uow.now())
            uow.session.flush()
            row.current_attempt_id = None
        row.state = TaskState.CLOSED
        row.close_reason = CloseReason.SUPERSEDED
        row.close_note = reason
        row.updated_at = uow.now()
