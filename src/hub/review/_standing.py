"""Where a submission stands under its pinned review policy, and its reviews, findings
and the review queue as readers see them."""

from __future__ import annotations

from collections.abc import Collection
from datetime import timedelta

from sqlalchemy import func, select

from hub.mapping import Shortlist, view_of
from hub.projects import service as projects
from hub.projects.vocabulary import ReviewPolicy
from hub.review import vocabulary
from hub.review.tables import Finding, HumanReviewRequest, Review
from hub.review.views import FindingView as FindingView
from hub.review.views import HumanReviewRequestView as HumanReviewRequestView
from hub.review.views import QueueItem as QueueItem
from hub.review.views import RecordedReview as RecordedReview
from hub.review.views import ReviewStatus as ReviewStatus
from hub.review.views import ReviewView as ReviewView
from hub.review.views import SubmissionReview as SubmissionReview
from hub.review.vocabulary import REQUIRED_SEVERITIES, ReviewerKind
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work

_APPROVE = vocabulary.ReviewDecision.APPROVE


def review_status(uow: UnitOfWork, submission_id: str) -> ReviewStatus:
    subject = work.get_submission(uow, submission_id)
    policy = projects.get_policy(uow, subject.project_id, subject.policy_revision)
    reviews = uow.session.scalars(select(Review).where(Review.submission_id == subject.id)).all()
    # Required approvals are distinct reviewers: one person or session counts once.
    agent_approvals = len(
        {
            r.session_id
            for r in reviews
            if r.reviewer_kind == ReviewerKind.AGENT and r.decision == _APPROVE
        }
    )
    human_approvals = len(
        {
            r.principal_id
            for r in reviews
            if r.reviewer_kind == ReviewerKind.HUMAN and r.decision == _APPROVE
        }
    )

    rejected = any(r.decision == vocabulary.ReviewDecision.REJECT for r in reviews)
    needs_agent = policy.review_policy in (ReviewPolicy.AGENT, ReviewPolicy.AGENT_AND_HUMAN)
    needs_human = policy.review_policy in (ReviewPolicy.HUMAN, ReviewPolicy.AGENT_AND_HUMAN)
    required_agent = policy.required_agent_approvals if needs_agent else 0
    required_human = policy.required_human_approvals if needs_human else 0
    unresolved = unresolved_required_findings(uow, subject.task_id)
    approved = (
        not rejected and agent_approvals >= required_agent and human_approvals >= required_human
    )
    requests = tuple(
        view_of(HumanReviewRequestView, row)
        for row in uow.session.scalars(
            select(HumanReviewRequest)
            .where(HumanReviewRequest.submission_id == subject.id)
            .order_by(HumanReviewRequest.created_at, HumanReviewRequest.id)
        )
    )
    reason = None
    if rejected:
        reason = "rejected: revision needed"
    elif agent_approvals < required_agent:
        reason = f"waiting for agent review ({agent_approvals} of {required_agent} approvals)"
    elif human_approvals < required_human:
        reason = f"waiting for a human reviewer ({human_approvals} of {required_human} approvals)"
    elif unresolved:
        reason = f"unresolved required findings: {', '.join(unresolved)}"
    return ReviewStatus(
        submission_id=subject.id,
        task_id=subject.task_id,
        policy_revision=policy.revision,
        review_policy=policy.review_policy,
        agent_approvals=agent_approvals,
        required_agent_approvals=required_agent,
        human_approvals=human_approvals,
        required_human_approvals=required_human,
        rejected=rejected,
        unresolved_required_findings=tuple(unresolved),
        human_review_requested=bool(requests),
        human_review_requests=requests,
        approved=approved,
        ready_for_integration=approved and not unresolved,
        waiting_reason=reason,
    )


def submission_review(uow: UnitOfWork, submission_id: str) -> SubmissionReview:
    """A submission as a reviewer reads it: its task, status, reviews and findings."""
    subject = work.get_submission(uow, submission_id)
    return SubmissionReview(
        submission=subject,
        task=work.get_task(uow, subject.task_id),
        status=review_status(uow, subject.id),
        reviews=tuple(list_reviews(uow, subject.id)),
        findings=tuple(list_findings(uow, subject.task_id)),
    )


def unresolved_required_findings(uow: UnitOfWork, task_id: str) -> list[str]:
    return list(
        uow.session.scalars(
            select(Finding.id)
            .where(
                Finding.task_id == task_id,
                Finding.severity.in_(REQUIRED_SEVERITIES),
                Finding.resolved_at.is_(None),
            )
            .order_by(Finding.id)
        ).all()
    )


def open_findings_counts(uow: UnitOfWork, task_ids: Collection[str]) -> dict[str, int]:
    """How many unresolved findings (of any severity) each task has, in one grouped
    statement; a task with none is absent."""
    if not task_ids:
        return {}
    rows = uow.session.execute(
        select(Finding.task_id, func.count())
        .where(Finding.task_id.in_(sorted(set(task_ids))), Finding.resolved_at.is_(None))
        .group_by(Finding.task_id)
    ).tuples()
    return {task_id: int(count) for task_id, count in rows}


def list_reviews(uow: UnitOfWork, submission_id: str) -> list[ReviewView]:
    rows = uow.session.scalars(
        select(Review).where(Review.submission_id == submission_id).order_by(Review.id)
    ).all()
    return [review_view_of(uow, row) for row in rows]


def list_findings(uow: UnitOfWork, task_id: str) -> list[FindingView]:
    rows = uow.session.scalars(
        select(Finding).where(Finding.task_id == task_id).order_by(Finding.id)
    ).all()
    return [finding_view_of(row) for row in rows]


def review_queue(uow: UnitOfWork) -> list[QueueItem]:
    """What waits for review across all projects, since when, why; flagged past the
    review-wait warning threshold (the policy never weakens: it only escalates)."""
    now = uow.now()
    threshold = timedelta(seconds=uow.settings.review_wait_warning_seconds)
    items = []
    for task, submission in work.awaiting_review(uow):
        status = review_status(uow, submission.id)
        items.append(
            QueueItem(
                task=task,
                submission=submission,
                status=status,
                waiting_since=submission.created_at,
                escalated=now - submission.created_at >= threshold,
            )
        )
    return sorted(items, key=lambda item: item.waiting_since)


def waiting_for_human(uow: UnitOfWork, *, limit: int) -> Shortlist[QueueItem]:
    """The review queue's submissions a person can act on now, the longest-waiting
    first: those whose policy still needs a human approval, and those an agent asked a
    human to review (`requestHumanReview`) that no human has decided yet. A rejected
    submission waits for its revision, not for anyone's review."""
    waiting = [item for item in review_queue(uow) if _waits_for_human(item.status)]
    return Shortlist(waiting[: max(limit, 0)], len(waiting))


def count_waiting_for_human_past_warning(uow: UnitOfWork) -> dict[str, int]:
    """Each project's submissions waiting for a human (as `waiting_for_human` judges
    them) for at least the review-wait warning threshold, in coordinator time. Only
    the submissions waiting that long have their review status judged."""
    cutoff = uow.now() - timedelta(seconds=uow.settings.review_wait_warning_seconds)
    counts: dict[str, int] = {}
    for task, submission in work.awaiting_review(uow):
        if submission.created_at <= cutoff and _waits_for_human(
            review_status(uow, submission.id)
        ):
            counts[task.project_id] = counts.get(task.project_id, 0) + 1
    return counts


def _waits_for_human(status: ReviewStatus) -> bool:
    """A person can act on it now: the policy still needs a human approval, or an agent
    asked a human to review it and none has decided; a rejected submission waits for
    its revision, not for anyone's review."""
    return not status.rejected and (
        status.human_approvals < status.required_human_approvals
        or (status.human_review_requested and not status.human_approvals)
    )


def review_view_of(uow: UnitOfWork, row: Review) -> ReviewView:
    findings = uow.session.scalars(
        select(Finding).where(Finding.review_id == row.id).order_by(Finding.id)
    ).all()
    return view_of(ReviewView, row, findings=tuple(finding_view_of(f) for f in findings))


def finding_view_of(row: Finding) -> FindingView:
    return view_of(FindingView, row, required=row.severity in REQUIRED_SEVERITIES)
