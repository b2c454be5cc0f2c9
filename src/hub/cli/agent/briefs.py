"""What `hub agent` shows of a task an agent holds: its brief (outcome, acceptance
criteria of a revision, repository and branch, open findings) and, for a review or
integration task, the submission it is for with its review status.
"""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from hub.cli.output import console
from hub.client.results import Finding, ReviewStatus, SubmissionReview, TaskBrief


def brief_task_json(brief: TaskBrief) -> dict[str, Any]:
    task = brief.task
    return {
        "id": task.id,
        "projectId": task.project_id,
        "kind": task.kind,
        "title": task.title,
        "state": task.state,
        "effectiveState": task.effective_state,
        "outcome": task.outcome,
        "acceptanceCriteria": list(task.acceptance_criteria),
        "criteriaRevision": task.criteria_revision,
        "subjectSubmissionId": task.subject_submission_id,
    }


def finding_json(item: Finding) -> dict[str, Any]:
    return {
        "id": item.id,
        "submissionId": item.submission_id,
        "severity": item.severity,
        "title": item.title,
        "detail": item.detail,
        "remedy": item.remedy,
        "required": item.required,
        "proposedResolution": item.proposed_resolution,
    }


def brief_json(brief: TaskBrief) -> dict[str, Any]:
    """What the task asks for, beside the task as the claim reported it."""
    task, repository = brief.task, brief.repository
    return {
        "outcome": task.outcome,
        "acceptanceCriteria": list(task.acceptance_criteria),
        "criteriaRevision": task.criteria_revision,
        "repository": None
        if repository is None
        else {
            "id": repository.id,
            "remoteUrl": repository.remote_url,
            "defaultBranch": repository.default_branch,
        },
        "branch": brief.branch,
        "openFindings": [finding_json(f) for f in brief.open_findings],
    }


def print_brief(brief: TaskBrief) -> None:
    task = brief.task
    if brief.subject is not None:
        print_submission(brief.subject)
    else:
        print_content(task.outcome, task.acceptance_criteria, task.criteria_revision)
    repository = brief.repository
    if repository is not None:
        console.print(
            f"  repository: {repository.id} {escape(repository.remote_url)} (default branch "
            f"{escape(repository.default_branch)})"
        )
    if brief.branch:
        console.print(f"  work branch: {escape(brief.branch)}")
    if brief.open_findings and brief.subject is None:  # a submission lists its own
        console.print("  open findings to address (from earlier reviews):")
        for item in brief.open_findings:
            proposed = " [dim](resolution proposed)[/dim]" if item.proposed_resolution else ""
            console.print(
                f"    - {item.severity} {escape(item.title)} — remedy: {escape(item.remedy)} "
                f"({item.id}){proposed}"
            )


def print_content(outcome: str, criteria: tuple[str, ...], revision: int) -> None:
    console.print(f"  outcome: {escape(outcome or '-')}")
    if criteria:
        console.print(f"  acceptance criteria (revision {revision}):")
        for number, criterion in enumerate(criteria, start=1):
            console.print(f"    {number}. {escape(criterion)}")
    else:
        console.print(f"  acceptance criteria (revision {revision}): none")


def print_submission(found: SubmissionReview) -> None:
    submission, task = found.submission, found.task
    console.print(
        f"submission [bold]{submission.id}[/bold] ({submission.outcome}) of task {task.id} "
        f"{escape(task.title)} ({task.state})\n"
        f"  candidate revision {submission.candidate_revision or '-'}, criteria revision "
        f"{submission.criteria_revision}, policy revision {submission.policy_revision}"
    )
    print_content(task.outcome, task.acceptance_criteria, task.criteria_revision)
    if submission.criteria_revision != task.criteria_revision:
        console.print(
            f"  [yellow]delivered against criteria revision {submission.criteria_revision}; "
            f"they are at revision {task.criteria_revision} now[/yellow]"
        )
    console.print(
        f"  result: {escape(submission.result)}\n  handoff: {escape(submission.handoff or '-')}"
    )
    for review in found.reviews:
        console.print(
            f"  review {review.id} {review.decision} ({review.reviewer_kind}): "
            f"{escape(review.summary)}"
        )
    for item in found.findings:
        done = f"resolved: {escape(item.resolution or '')}" if item.resolved_at else "open"
        console.print(
            f"  finding {item.id} {item.severity} {escape(item.title)} — remedy: "
            f"{escape(item.remedy)} ({done})"
        )
    print_review_status(found.status, done=task.state == "DONE")


def print_review_status(status: ReviewStatus, *, done: bool = False) -> None:
    """The approvals against the pinned policy, and where the submission stands."""
    if done:
        where = "[green]integrated and validated: done[/green]"
    elif status.rejected:
        where = "[red]rejected: revision needed[/red]"
    elif status.ready_for_integration:
        where = "[green]approved: ready for integration[/green]"
    else:
        where = f"waiting: {escape(status.waiting_reason or '-')}"
    console.print(f"  {review_counts(status)}; {where}")
    if status.unresolved_required_findings:
        console.print(
            "  unresolved required findings: " + ", ".join(status.unresolved_required_findings)
        )


def review_counts(status: ReviewStatus) -> str:
    """The approvals a submission has of those its pinned policy asks for; a kind of
    review the policy does not ask for is said so, not counted as 0 of 0."""
    parts = []
    for kind, got, needed in (
        ("agent", status.agent_approvals, status.required_agent_approvals),
        ("human", status.human_approvals, status.required_human_approvals),
    ):
        parts.append(f"{kind} approvals {got} of {needed}" if needed else f"no {kind} review asked")
    return f"policy {status.review_policy}: " + ", ".join(parts)
