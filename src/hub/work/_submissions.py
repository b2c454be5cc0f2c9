"""Submissions: what an attempt delivers, and what a delivery needs first.

An implementation attempt registers its worktree before changing code; a non-code
attempt records its acceptance against the task's current criteria; changed criteria
are reconciled explicitly. The submission saves result, handoff, lessons and outcome and
moves the task in one transaction: an implementation goes on to review or integration
(per the policy pinned now) and is never done here; a non-code task completes here. An
implementation found already satisfied after its claim (ALREADY_SATISFIED, citing the
revision and evidence) goes to review like a delivery, and completes when approved,
without integration. See docs/workflow.md, "Completion".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from hub.errors import (
    Conflict,
    DependencyNotMet,
    InvalidTransition,
    ValidationFailed,
    raises,
)
from hub.events.service import (
    record_event,
)
from hub.idempotency import service as idempotency
from hub.identity.views import Actor
from hub.ids import new_id
from hub.inputs import (
    clean_branch,
    clean_choice,
    clean_label,
    clean_list,
    clean_revision,
    clean_text,
)
from hub.projects import service as projects
from hub.projects.vocabulary import ReviewPolicy
from hub.storage.row_writes import insert_row, update_row
from hub.storage.unit_of_work import UnitOfWork
from hub.work import _workflow as workflow
from hub.work._authority import (
    HOLDING,
    Held,
    attempt_result,
    check_authority,
    end_held_attempt,
    find_attempt,
    hold,
)
from hub.work._lifecycle import mark_done, require_current_criteria
from hub.work._rows import has_delivery
from hub.work.tables import Attempt, AttemptNote, Submission, Task, Worktree
from hub.work.views import AttemptResult, submission_view, worktree_view
from hub.work.vocabulary import (
    CANDIDATE_OUTCOMES,
    AttemptNoteKind,
    AttemptState,
    SubmissionOutcome,
    TaskKind,
    TaskState,
    WorkEvent,
)

NON_CODE_KINDS = (TaskKind.GENERAL, TaskKind.OBJECTIVE)


@dataclass(frozen=True)
class SubmitRequest:
    attempt_id: str
    generation: int
    outcome: str
    result: str
    handoff: str = ""
    candidate_revision: str | None = None
    # Lesson ids, and the lessons this submission proposes, as the knowledge module
    # cleaned them: it checks the ids and publishes the lessons in the same transaction
    # (`knowledge.service.submit_attempt`, the operation the API runs).
    referenced_lessons: Sequence[str] = ()
    new_lessons: Sequence[dict[str, Any]] = ()
    # Evidence records the submission cites; ALREADY_SATISFIED needs one at least. The
    # operation that wraps this one checks they are the project's (`review.service`).
    evidence_ids: Sequence[str] = ()
    idempotency_key: str | None = None


@dataclass(frozen=True)
class WorktreeRequest:
    attempt_id: str
    generation: int
    repository_id: str
    worktree_id: str
    path: str
    branch: str
    base_revision: str
    workstation: str


@raises(*HOLDING, DependencyNotMet, ValidationFailed, *idempotency.KEYED)
def submit_attempt(uow: UnitOfWork, actor: Actor, cmd: SubmitRequest) -> AttemptResult:
    """Save result, handoff, lessons, outcome and the task's transition in one transaction.

    An implementation submission moves the task to review or integration (per the
    policy pinned now); it never marks code done. A non-code task completes here when
    acceptance was recorded against its current criteria.
    """

    def replay(held: Held, prior: dict[str, str]) -> AttemptResult:
        # Acknowledge the original; reopen nothing, move nothing.
        original = uow.session.get(Submission, prior["submission_id"])
        return attempt_result(
            uow, held, replay=True, submission=submission_view(original) if original else None
        )

    return idempotency.run_keyed(
        uow,
        actor,
        "submitAttempt",
        cmd.idempotency_key,
        idempotency.request_of(cmd),
        authorize=lambda: find_attempt(uow, actor, cmd.attempt_id, reporter_ok=False),
        replay=replay,
        execute=lambda held: _submit(uow, actor, held, cmd),
        receipt=lambda made: {"submission_id": made.submission.id if made.submission else None},
    ).value


def _submit(uow: UnitOfWork, actor: Actor, held: Held, cmd: SubmitRequest) -> AttemptResult:
    check_authority(held, cmd.generation)
    task, attempt = held.task, held.attempt
    outcome = clean_choice("outcome", cmd.outcome, SubmissionOutcome)
    result = clean_text("result", cmd.result, 50_000)
    handoff = clean_text(
        "handoff", cmd.handoff, 50_000, required=outcome == SubmissionOutcome.PARTIAL
    )
    referenced = clean_list(
        "referencedLessons", cmd.referenced_lessons, max_items=50, max_length=60
    )
    candidate = (
        clean_revision("candidateRevision", cmd.candidate_revision)
        if cmd.candidate_revision
        else None
    )
    evidence_ids = list(
        dict.fromkeys(clean_list("evidenceIds", cmd.evidence_ids, max_items=50, max_length=40))
    )
    if outcome == SubmissionOutcome.ALREADY_SATISFIED:
        if candidate is None:
            raise ValidationFailed(
                "candidateRevision",
                "ALREADY_SATISFIED names the revision on which the criteria already hold",
            )
        if not evidence_ids:
            raise ValidationFailed(
                "evidenceIds", "ALREADY_SATISFIED cites the evidence that the criteria hold"
            )
    policy = projects.get_policy(uow, task.project_id)
    next_state = _state_after_submission(
        uow, task, attempt, outcome, candidate, policy.review_policy
    )
    submission = Submission(
        id=new_id("sub"),
        project_id=task.project_id,
        task_id=task.id,
        attempt_id=attempt.id,
        session_id=attempt.session_id,
        principal_id=attempt.principal_id,
        generation=attempt.generation,
        outcome=outcome,
        result=result,
        handoff=handoff,
        candidate_revision=candidate,
        criteria_revision=attempt.criteria_revision,
        policy_revision=policy.revision,
        referenced_lessons=referenced,
        new_lessons=list(cmd.new_lessons),
        evidence_ids=evidence_ids,
        created_at=held.now,
    )
    insert_row(uow.session, submission)
    end_held_attempt(uow, held, AttemptState.SUBMITTED, f"submitted {outcome}")
    task.state = next_state  # with the attempt ended, in the same flush (CHECK current_attempt)
    if task.kind == TaskKind.IMPLEMENTATION and outcome in CANDIDATE_OUTCOMES:
        # A new candidate: reviews and integrations of earlier ones no longer apply.
        workflow.close_superseded(uow, task.id, submission.id)
        next_state = task.state = workflow.open_after_submission(uow, task, submission, policy)
    if next_state == TaskState.DONE:
        mark_done(uow, task, actor_id=actor.principal_id, reason=f"submission {submission.id}")
    uow.session.flush()
    record_event(
        uow,
        WorkEvent.ATTEMPT_SUBMITTED,
        task,
        by=actor,
        payload={
            "attempt": attempt.id,
            "submission": submission.id,
            "outcome": outcome,
            "state": next_state,
        },
    )
    return attempt_result(uow, held, submission=submission_view(submission))


def _state_after_submission(
    uow: UnitOfWork,
    task: Task,
    attempt: Attempt,
    outcome: SubmissionOutcome,
    candidate: str | None,
    review_policy: ReviewPolicy,
) -> TaskState:
    if outcome == SubmissionOutcome.PARTIAL:
        return TaskState.REVISION_NEEDED if has_delivery(uow, task.id) else TaskState.OPEN
    # A delivery is judged against the criteria it was made for; changed criteria are
    # reconciled explicitly first, whatever the task's kind.
    require_current_criteria(attempt.criteria_revision, task)
    if outcome == SubmissionOutcome.ALREADY_SATISFIED:
        # The criteria hold on a revision already there: nothing was changed, so no
        # worktree is needed, and nothing will be integrated. Review judges the claim
        # (`_workflow.open_after_submission`).
        if task.kind != TaskKind.IMPLEMENTATION:
            raise InvalidTransition(
                f"ALREADY_SATISFIED is for implementation tasks; a {task.kind} task that "
                "already meets its criteria records acceptance (recordAcceptance, with "
                "evidence) and submits DELIVERED"
            )
        return TaskState.AWAITING_REVIEW
    if task.kind == TaskKind.IMPLEMENTATION:
        if candidate is None:
            raise ValidationFailed(
                "candidateRevision", "an implementation delivery names its commit"
            )
        worktree = uow.session.scalar(
            select(Worktree.id).where(Worktree.task_id == task.id, Worktree.released_at.is_(None))
        )
        if worktree is None:
            raise InvalidTransition(
                f"task {task.id} has no registered worktree: "
                "registerWorktree before delivering code"
            )
        return (
            TaskState.AWAITING_INTEGRATION
            if review_policy == ReviewPolicy.NONE
            else TaskState.AWAITING_REVIEW
        )
    if task.kind in NON_CODE_KINDS:
        acceptance = attempt.acceptance or {}
        if acceptance.get("criteria_revision") != task.criteria_revision:
            raise InvalidTransition(
                f"record acceptance against criteria revision {task.criteria_revision} "
                "(recordAcceptance) before delivering a non-code task"
            )
        if task.blocked_count > 0:
            raise DependencyNotMet(f"task {task.id} still has incomplete required work")
        return TaskState.DONE
    raise InvalidTransition(
        f"a {task.kind} task completes through its workflow (review or integration), "
        "not by submitAttempt DELIVERED"
    )


@raises(*HOLDING, Conflict, ValidationFailed)
def register_worktree(uow: UnitOfWork, actor: Actor, cmd: WorktreeRequest) -> AttemptResult:
    """Record the implementation attempt's worktree before code changes."""
    held = hold(uow, actor, cmd.attempt_id, cmd.generation)
    task = held.task
    if task.kind != TaskKind.IMPLEMENTATION:
        raise InvalidTransition(
            f"only implementation tasks have worktrees; {task.id} is {task.kind}"
        )
    repository = projects.get_repository(
        uow, project_id=task.project_id, repository_id=cmd.repository_id
    )
    identity_key = clean_label("worktreeId", cmd.worktree_id, 300)
    path = clean_label("path", cmd.path, 1000)
    branch = clean_branch("branch", cmd.branch)
    base = clean_revision("baseRevision", cmd.base_revision)
    workstation = clean_label("workstation", cmd.workstation, 200)
    in_use = uow.session.scalar(
        select(Worktree).where(Worktree.identity == identity_key, Worktree.released_at.is_(None))
    )
    if in_use is not None and in_use.task_id != task.id:
        raise Conflict(
            f"worktree {identity_key!r} is registered to task {in_use.task_id}, which is not "
            "finished: use a separate worktree per implementation task"
        )
    row = in_use or Worktree(id=new_id("wt"), project_id=task.project_id, task_id=task.id)
    row.attempt_id = held.attempt.id
    row.repository_id = repository.id
    row.identity = identity_key
    row.path = path
    row.branch = branch
    row.base_revision = base
    row.workstation = workstation
    row.registered_at = held.now
    uow.session.add(row)
    uow.session.flush()
    record_event(
        uow,
        WorkEvent.WORKTREE_REGISTERED,
        task,
        by=actor,
        payload={"attempt": held.attempt.id, "worktree": identity_key, "branch": branch},
    )
    return attempt_result(uow, held, worktree=worktree_view(row))


@raises(*HOLDING, Conflict, DependencyNotMet, ValidationFailed)
def record_acceptance(
    uow: UnitOfWork,
    actor: Actor,
    *,
    attempt_id: str,
    generation: int,
    criteria_revision: int,
    evidence: Sequence[str],
    note: str = "",
) -> AttemptResult:
    """The owner records that a non-code task meets its current criteria, with evidence."""
    held = hold(uow, actor, attempt_id, generation)
    task, attempt = held.task, held.attempt
    if task.kind not in NON_CODE_KINDS:
        raise InvalidTransition(
            f"a {task.kind} task completes through review, integration and validation"
        )
    require_current_criteria(attempt.criteria_revision, task)
    if criteria_revision != task.criteria_revision:
        raise Conflict(
            f"criteria are at revision {task.criteria_revision}, not {criteria_revision}"
        )
    if task.blocked_count > 0:
        raise DependencyNotMet(f"task {task.id} has incomplete required children or prerequisites")
    acceptance = {
        "criteria_revision": criteria_revision,
        "evidence": clean_list("evidence", evidence, max_items=50, max_length=2000),
        "note": clean_text("note", note, 10_000, required=False),
        "recorded_at": held.now.isoformat(),
    }
    update_row(uow.session, attempt, {"acceptance": acceptance, "last_progress_at": held.now})
    record_event(
        uow,
        WorkEvent.ACCEPTANCE_RECORDED,
        task,
        by=actor,
        payload={"attempt": attempt.id, "criteriaRevision": criteria_revision},
    )
    return attempt_result(uow, held)


@raises(*HOLDING, Conflict, ValidationFailed)
def reconcile_criteria(
    uow: UnitOfWork,
    actor: Actor,
    *,
    attempt_id: str,
    generation: int,
    criteria_revision: int,
    note: str,
) -> AttemptResult:
    """Explicitly move an attempt onto the task's current criteria revision."""
    held = hold(uow, actor, attempt_id, generation)
    task, attempt = held.task, held.attempt
    if criteria_revision != task.criteria_revision:
        raise Conflict(
            f"criteria are at revision {task.criteria_revision}, not {criteria_revision}"
        )
    note = clean_text("note", note, 10_000)
    previous = attempt.criteria_revision
    attempt.criteria_revision = criteria_revision
    if attempt.acceptance and attempt.acceptance.get("criteria_revision") != criteria_revision:
        attempt.acceptance = None  # acceptance against old criteria no longer applies
    uow.session.add(
        AttemptNote(
            id=new_id("note"),
            project_id=task.project_id,
            attempt_id=attempt.id,
            kind=AttemptNoteKind.CRITERIA_RECONCILED,
            body=note,
            detail={"from": previous, "to": criteria_revision},
            author_id=actor.principal_id,
            created_at=held.now,
        )
    )
    uow.session.flush()
    record_event(
        uow,
        WorkEvent.CRITERIA_RECONCILED,
        task,
        by=actor,
        payload={"attempt": attempt.id, "from": previous, "to": criteria_revision},
    )
    return attempt_result(uow, held)
