"""Reviews of immutable submissions, under the review policy pinned at submit time.

Independence: an agent reviewer's session and attempt differ from every session and
attempt recorded as a contributor to the candidate, across recoveries and
resubmissions. Human decisions come only from authenticated human principals. A
rejection sends the implementation back for revision; approvals apply only to the
submission they name; BLOCKER and MAJOR findings must be resolved before integration.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass

from sqlalchemy import select

from hub.errors import (
    Conflict,
    DependencyNotMet,
    InvalidTransition,
    NotFound,
    PermissionDenied,
    ValidationFailed,
    raises,
)
from hub.events.service import (
    record_event,
    task_of,
)
from hub.idempotency import service as idempotency
from hub.idempotency.service import Keyed
from hub.identity.views import Actor, require_full_credential
from hub.ids import new_id
from hub.inputs import clean_choice, clean_label, clean_list, clean_text
from hub.jobs import service as jobs
from hub.knowledge import service as knowledge
from hub.projects import service as projects
from hub.review import tables, vocabulary
from hub.review._standing import (
    count_waiting_for_human_past_warning as count_waiting_for_human_past_warning,
)
from hub.review._standing import (
    finding_view_of,
    review_view_of,
)
from hub.review._standing import (
    list_findings as list_findings,
)
from hub.review._standing import (
    list_reviews as list_reviews,
)
from hub.review._standing import (
    open_findings_counts as open_findings_counts,
)
from hub.review._standing import (
    review_queue as review_queue,
)
from hub.review._standing import (
    review_status as review_status,
)
from hub.review._standing import (
    submission_review as submission_review,
)
from hub.review._standing import (
    unresolved_required_findings as unresolved_required_findings,
)
from hub.review._standing import (
    waiting_for_human as waiting_for_human,
)
from hub.review.errors import ObsoleteSubmission
from hub.review.tables import Finding, HumanReviewRequest, Review
from hub.review.views import FindingView as FindingView
from hub.review.views import HumanReviewRequestView as HumanReviewRequestView
from hub.review.views import QueueItem as QueueItem
from hub.review.views import RecordedReview as RecordedReview
from hub.review.views import ReviewStatus as ReviewStatus
from hub.review.views import ReviewView as ReviewView
from hub.review.views import SubmissionReview as SubmissionReview
from hub.review.vocabulary import REQUIRED_SEVERITIES, FindingSeverity, ReviewerKind, ReviewEvent
from hub.storage.export import ExportRecord, export_tables, project_tables
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work
from hub.work.vocabulary import CANDIDATE_OUTCOMES, TaskKind, TaskState


@dataclass(frozen=True)
class NewFinding:
    severity: str
    title: str
    remedy: str
    detail: str = ""


@dataclass(frozen=True)
class ReviewDecision:
    submission_id: str
    decision: str
    summary: str
    findings: Sequence[NewFinding] = ()
    evidence: Sequence[str] = ()  # what was inspected, in words
    evidence_ids: Sequence[str] = ()  # evidence records of this project that were inspected
    # Artifacts the review cites: part of the request a key stands for; checked and
    # recorded by the artifacts module, which wraps these operations (`artifacts.service`).
    artifact_ids: Sequence[str] = ()
















# --- submissions ----------------------------------------------------------------------


@raises(*work.HOLDING, DependencyNotMet, ValidationFailed, *idempotency.KEYED)
def submit_attempt(uow: UnitOfWork, actor: Actor, cmd: work.SubmitRequest) -> work.AttemptResult:
    """`knowledge.submit_attempt` (the submission, with its lessons), with the evidence
    it cites checked: each record exists and is of the submission's project, as the
    evidence a review cites is (`NotFound` otherwise). ALREADY_SATISFIED cites some by
    rule; reviewers read them. A replay checks nothing again. The operation the API's
    `submitAttempt` runs."""
    made = knowledge.submit_attempt(uow, actor, cmd)
    if not made.replay and made.submission is not None:
        _existing_evidence(uow, made.submission.project_id, made.submission.evidence_ids)
    return made


# --- decisions ------------------------------------------------------------------------


def submit_review(
    uow: UnitOfWork,
    actor: Actor,
    *,
    attempt_id: str,
    generation: int,
    decision: ReviewDecision,
    idempotency_key: str | None = None,
) -> Keyed[ReviewView]:
    """An agent's review, made under its own attempt on the review task; a replay of a
    keyed retry changes nothing."""

    def execute(_: None) -> ReviewView:
        held = work.hold_attempt(uow, actor, attempt_id=attempt_id, generation=generation)
        review_task = held.task
        if review_task.kind != TaskKind.REVIEW:
            raise ValidationFailed("attemptId", f"attempt {attempt_id} is not on a review task")
        subject = work.subject_of(uow, review_task.id)
        if subject.id != decision.submission_id:
            raise ValidationFailed(
                "submissionId",
                f"this review task is for submission {subject.id}, not {decision.submission_id}",
            )
        _require_current(uow, subject)
        reviewer = work.Reviewer.agent(held.attempt.session_id, attempt_id)
        work.require_independent(uow, subject.id, reviewer)
        review = _record(
            uow, actor, subject, decision, kind=ReviewerKind.AGENT, attempt_id=attempt_id
        )
        work.finish_workflow_attempt(
            uow, attempt_id, f"reviewed: {decision.decision}", actor_id=actor.principal_id
        )
        _settle(uow, subject, actor)
        return review

    return idempotency.run_keyed(
        uow,
        actor,
        "submitReview",
        idempotency_key,
        {"attempt_id": attempt_id, "generation": generation, **asdict(decision)},
        # The review's session only, also for the replay.
        authorize=lambda: work.require_own_attempt(uow, actor, attempt_id),
        replay=lambda _, prior: review_view_of(
            uow, uow.session.get_one(Review, prior["review_id"])
        ),
        execute=execute,
        receipt=lambda review: {"review_id": review.id},
    )


def get_review(uow: UnitOfWork, review_id: str) -> ReviewView:
    """One review, with its findings (other modules cite reviews by id)."""
    row = uow.session.get(Review, review_id)
    if row is None:
        raise NotFound("review", review_id)
    return review_view_of(uow, row)


@raises(*work.HOLDING, Conflict, ValidationFailed, *idempotency.KEYED)
def submit_review_with_status(
    uow: UnitOfWork,
    actor: Actor,
    *,
    attempt_id: str,
    generation: int,
    decision: ReviewDecision,
    idempotency_key: str | None = None,
) -> RecordedReview:
    """`submit_review`, answered with the status the review leaves its submission in."""
    made = submit_review(
        uow,
        actor,
        attempt_id=attempt_id,
        generation=generation,
        decision=decision,
        idempotency_key=idempotency_key,
    )
    return RecordedReview(made.value, review_status(uow, made.value.submission_id), made.replayed)


@raises(NotFound, PermissionDenied, Conflict, InvalidTransition, ValidationFailed)
def record_human_review_with_status(
    uow: UnitOfWork, actor: Actor, decision: ReviewDecision
) -> RecordedReview:
    """`record_human_review`, answered with the status the decision leaves."""
    review = record_human_review(uow, actor, decision)
    return RecordedReview(review, review_status(uow, review.submission_id))


def record_human_review(uow: UnitOfWork, actor: Actor, decision: ReviewDecision) -> ReviewView:
    """A human's decision: only an authenticated human principal records one."""
    if not actor.is_human or actor.credential not in ("personal", "web"):
        raise PermissionDenied(
            "only an authenticated human records a human review; agents may requestHumanReview"
        )
    subject = work.lock_submission(uow, decision.submission_id)
    _require_current(uow, subject)
    policy = projects.get_policy(uow, subject.project_id, subject.policy_revision)
    work.require_independent(
        uow,
        subject.id,
        work.Reviewer.person(
            actor.principal_id,
            actor.principal_name,
            verb="approve" if decision.decision == vocabulary.ReviewDecision.APPROVE else "reject",
            own_work_allowed=policy.human_may_approve_own_agent,
        ),
    )
    earlier = uow.session.scalar(
        select(Review.id).where(
            Review.submission_id == subject.id,
            Review.reviewer_kind == ReviewerKind.HUMAN,
            Review.principal_id == actor.principal_id,
        )
    )
    if earlier is not None:
        raise Conflict(
            f"{actor.principal_name} already decided on submission {subject.id} (review "
            f"{earlier}); a second decision by the same person does not count again"
        )
    review = _record(uow, actor, subject, decision, kind=ReviewerKind.HUMAN, attempt_id=None)
    _settle(uow, subject, actor)
    return review


@raises(NotFound, PermissionDenied, Conflict, ValidationFailed)
def request_human_review(
    uow: UnitOfWork, actor: Actor, *, submission_id: str, context: str
) -> ReviewStatus:
    require_full_credential(actor)
    subject = work.lock_submission(uow, submission_id)
    _require_current(uow, subject)
    request = HumanReviewRequest(
        id=new_id("hrr"),
        project_id=subject.project_id,
        submission_id=subject.id,
        requested_by=actor.principal_id,
        context=clean_text("context", context, 10_000),
        created_at=uow.now(),
    )
    uow.session.add(request)
    uow.session.flush()
    record_event(
        uow,
        ReviewEvent.HUMAN_REQUESTED,
        task_of(subject),
        by=actor,
        payload={"submission": subject.id, "request": request.id},
    )
    return review_status(uow, subject.id)


@raises(NotFound, PermissionDenied, InvalidTransition, ValidationFailed)
def resolve_finding(
    uow: UnitOfWork, actor: Actor, *, finding_id: str, resolution: str, evidence: Sequence[str]
) -> FindingView:
    """Record how a finding was addressed, with evidence (e.g. the fixing commit).

    A finding is cleared by its author (the reviewer who raised it), an operator, or a
    reviewer of a later submission of the same task. The contributors whose work it
    blocks may clear a MINOR or NOTE finding, but for a BLOCKER or MAJOR one they can only
    propose a resolution, which stays unresolved until one of the others clears it.
    Anyone else is refused. See docs/workflow.md.
    """
    require_full_credential(actor)
    # Locked: two resolutions of one finding are decided one after the other.
    row = uow.session.get(Finding, finding_id, with_for_update=True)
    if row is None:
        raise NotFound("finding", finding_id)
    # Authority first: someone who may not touch the finding is refused even once it is
    # resolved, rather than told it succeeded.
    authority = _finding_authority(uow, actor, row)
    if row.resolved_at is not None:
        return finding_view_of(row)
    text = clean_text("resolution", resolution, 10_000)
    proof = clean_list("evidence", evidence, max_items=20, max_length=2000)
    if not proof:
        raise ValidationFailed("evidence", "a resolution names its evidence")
    now = uow.now()
    if authority == "propose" and row.severity in REQUIRED_SEVERITIES:
        row.proposed_resolution = text
        row.proposed_evidence = proof
        row.proposed_by = actor.principal_id
        row.proposed_at = now
        uow.session.flush()
        record_event(
            uow,
            ReviewEvent.FINDING_RESOLUTION_PROPOSED,
            task_of(row),
            by=actor,
            payload={"finding": row.id, "severity": row.severity},
        )
        return finding_view_of(row)
    row.resolution = text
    row.resolution_evidence = proof
    row.resolved_by = actor.principal_id
    row.resolved_at = now
    uow.session.flush()
    record_event(
        uow, ReviewEvent.FINDING_RESOLVED, task_of(row), by=actor, payload={"finding": row.id}
    )
    current = work.current_submission(uow, row.task_id)
    if current is not None:
        _settle(uow, current, actor)
    return finding_view_of(row)


def _finding_authority(uow: UnitOfWork, actor: Actor, row: Finding) -> str:
    """'clear' or 'propose'; refuses whoever may do neither."""
    if actor.is_operator:
        return "clear"
    team = work.contributors(uow, row.task_id)
    if actor.session_id is not None:
        contributed = actor.session_id in team.session_ids
    else:
        contributed = actor.principal_id in team.principal_ids
    if contributed:
        return "propose"
    author = uow.session.get_one(Review, row.review_id)
    if author.principal_id == actor.principal_id or _reviews_later_submission(uow, actor, row):
        return "clear"
    raise PermissionDenied(
        f"finding {row.id} is cleared by its author, an operator, or a reviewer of a later "
        f"submission of task {row.task_id}; {actor.principal_name} is none of them"
    )


def _reviews_later_submission(uow: UnitOfWork, actor: Actor, row: Finding) -> bool:
    """Whether the actor reviews (or reviewed) a submission of the finding's task made
    after the one the finding was raised on: the reviewer who checks the fix."""
    raised_on = work.get_submission(uow, row.submission_id)
    later = [
        s.id
        for s in work.list_submissions(uow, row.task_id)
        if (s.created_at, s.id) > (raised_on.created_at, raised_on.id)
        and s.outcome in CANDIDATE_OUTCOMES
    ]
    for submission_id in later:
        if actor.session_id is not None and actor.session_id in work.workflow_sessions(
            uow, submission_id, TaskKind.REVIEW
        ):
            return True
        reviewed = uow.session.scalar(
            select(Review.id)
            .where(Review.submission_id == submission_id, Review.principal_id == actor.principal_id)
            .limit(1)
        )
        if reviewed is not None and actor.session_id is None:
            return True
    return False


@raises(NotFound, PermissionDenied, Conflict, InvalidTransition, ValidationFailed)
def repin_submission_policy(
    uow: UnitOfWork, actor: Actor, *, submission_id: str, reason: str
) -> ReviewStatus:
    """An operator moves a submission waiting for review onto the project's current
    policy revision (submissions otherwise keep the revision they were made under). The
    reviews it still needs are opened; surplus unclaimed review tasks are closed."""
    if not actor.is_operator or actor.is_reporter:
        raise PermissionDenied("only an operator re-pins a submission's review policy")
    reason = clean_text("reason", reason, 2000)
    subject = work.lock_submission(uow, submission_id)
    task = work.get_task(uow, subject.task_id)
    if task.state != TaskState.AWAITING_REVIEW:
        raise InvalidTransition(
            f"task {task.id} is {task.state}: only a submission still awaiting review is re-pinned"
        )
    _require_current(uow, subject)
    policy = projects.get_policy(uow, subject.project_id)
    if policy.revision == subject.policy_revision:
        raise InvalidTransition(
            f"submission {subject.id} is already pinned to policy revision {policy.revision}"
        )
    work.repin_submission(uow, subject.id, policy, reason=reason)
    record_event(
        uow,
        ReviewEvent.POLICY_REPINNED,
        task_of(subject),
        by=actor,
        payload={
            "submission": subject.id,
            "from": subject.policy_revision,
            "to": policy.revision,
            "reason": reason,
        },
    )
    _settle(uow, work.get_submission(uow, subject.id), actor)
    return review_status(uow, subject.id)


def _existing_evidence(uow: UnitOfWork, project_id: str, evidence_ids: Sequence[str]) -> list[str]:
    """Evidence a review cites by id must exist, in the submission's project."""
    cited = list(dict.fromkeys(clean_list("evidenceIds", evidence_ids, max_items=50,
                                          max_length=40)))
    for evidence_id in cited:
        if jobs.get_evidence(uow, evidence_id).project_id != project_id:
            raise NotFound("evidence", evidence_id)
    return cited


def _record(
    uow: UnitOfWork,
    actor: Actor,
    subject: work.SubmissionView,
    decision: ReviewDecision,
    *,
    kind: ReviewerKind,
    attempt_id: str | None,
) -> ReviewView:
    if decision.decision not in tuple(vocabulary.ReviewDecision):
        raise ValidationFailed("decision", "must be APPROVE or REJECT")
    findings = [_clean_finding(index, f) for index, f in enumerate(decision.findings)]
    if len(findings) > 100:
        raise ValidationFailed("findings", "must have at most 100 items")
    if decision.decision == vocabulary.ReviewDecision.REJECT and not findings:
        raise ValidationFailed("findings", "a rejection names at least one finding")
    now = uow.now()
    review = Review(
        id=new_id("rev"),
        project_id=subject.project_id,
        submission_id=subject.id,
        task_id=subject.task_id,
        candidate_revision=subject.candidate_revision,
        reviewer_kind=kind,
        principal_id=actor.principal_id,
        session_id=actor.session_id,
        attempt_id=attempt_id,
        decision=vocabulary.ReviewDecision(decision.decision),
        summary=clean_text("summary", decision.summary, 20_000),
        evidence=clean_list("evidence", decision.evidence, max_items=50, max_length=2000),
        evidence_ids=_existing_evidence(uow, subject.project_id, decision.evidence_ids),
        policy_revision=subject.policy_revision,
        created_at=now,
    )
    uow.session.add(review)
    uow.session.flush()
    for finding in findings:
        uow.session.add(
            Finding(
                id=new_id("fnd"),
                project_id=subject.project_id,
                review_id=review.id,
                submission_id=subject.id,
                task_id=subject.task_id,
                severity=finding.severity,
                title=finding.title,
                detail=finding.detail,
                remedy=finding.remedy,
                created_at=now,
            )
        )
    uow.session.flush()
    record_event(
        uow,
        ReviewEvent.RECORDED,
        task_of(subject),
        by=actor,
        payload={
            "review": review.id,
            "submission": subject.id,
            "decision": decision.decision,
            "reviewer": kind,
            "findings": len(findings),
        },
    )
    return review_view_of(uow, review)


def _clean_finding(index: int, finding: NewFinding) -> NewFinding:
    field_name = f"findings[{index}]"
    return NewFinding(
        severity=clean_choice(f"{field_name}.severity", finding.severity, FindingSeverity),
        title=clean_label(f"{field_name}.title", finding.title, 300),
        remedy=clean_text(f"{field_name}.remedy", finding.remedy, 10_000),
        detail=clean_text(f"{field_name}.detail", finding.detail, 20_000, required=False),
    )


def _require_current(uow: UnitOfWork, subject: work.SubmissionView) -> None:
    if subject.outcome not in CANDIDATE_OUTCOMES:
        raise ValidationFailed("submissionId", f"submission {subject.id} delivered no candidate")
    current = work.current_submission(uow, subject.task_id)
    if current is None or current.id != subject.id:
        raise ObsoleteSubmission(subject.id, current.id if current else None)
    task = work.get_task(uow, subject.task_id)
    if task.state != TaskState.AWAITING_REVIEW:
        raise ObsoleteSubmission(subject.id, f"task is {task.state}")


def _settle(uow: UnitOfWork, subject: work.SubmissionView, actor: Actor) -> None:
    """Move the implementation on once the decisions so far settle it."""
    task = work.get_task(uow, subject.task_id)
    if task.state != TaskState.AWAITING_REVIEW:
        return
    status = review_status(uow, subject.id)
    if status.rejected:
        work.return_for_revision(
            uow,
            subject.task_id,
            reason=f"submission {subject.id} was rejected in review",
            actor_id=actor.principal_id,
        )
    elif status.ready_for_integration:
        # On to integration; or done, for a submission that found the work already done.
        work.review_satisfied(uow, subject.task_id, subject.id, actor_id=actor.principal_id)


# --- reading --------------------------------------------------------------------------
















def export_rows(uow: UnitOfWork, project_id: str) -> Iterator[ExportRecord]:
    """The project's reviews, findings and human review requests, for an export
    (docs/exports.md)."""
    return export_tables(
        uow,
        project_id,
        project_tables(tables),
        # Named without a foreign key in the schema; the export says what they name.
        references={
            "reviews": {"task_id": "tasks"},
            "findings": {"submission_id": "submissions", "task_id": "tasks"},
        },
    )
