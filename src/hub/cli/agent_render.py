"""How `hub agent` prints what its commands did: one JSON object on stdout with `--json`,
rich text otherwise. Times that depend on this workstation's clock are passed in (`now`),
so the command line's clock seam stays in `hub.cli.agent`.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hub.client.advice import cli_message, command_for, for_cli
from hub.client.agent import AttemptOutcome, Claimed, Status, standing
from hub.client.deadline import has_passed, seconds_left
from hub.client.errors import ClientError, ProblemError, TransportFailure
from hub.client.results import Finding, ReviewStatus, SubmissionReview, TaskBrief
from hub.client.state import AttemptRecord

console = Console(soft_wrap=True)
errors = Console(stderr=True, soft_wrap=True)


def print_json(value: dict[str, Any]) -> None:
    print(json.dumps(value, default=str, sort_keys=True))


def error_json(error: ClientError) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": type(error).__name__,
        "code": error.code,
        "message": cli_message(error),
    }
    if body["message"] != error.message:
        body["serverMessage"] = error.message  # the API's own words
    if isinstance(error, TransportFailure):
        body["uncertain"] = error.uncertain
    if isinstance(error, ProblemError):
        body["problem"] = error.typename
        body["details"] = error.details
    return body


def iso(value: Any) -> str | None:
    return None if value is None else str(value.isoformat())


def deadline_json(record: AttemptRecord, now: datetime) -> dict[str, Any]:
    where = standing(record, now)
    return {
        "localDeadline": record.local_deadline.isoformat(),
        "secondsLeft": round(seconds_left(record.local_deadline, now), 3),
        "pastLocalDeadline": has_passed(record.local_deadline, now),
        "leaseStanding": where.lease,
        "advice": where.advice,
    }


def render_attempt(
    outcome: AttemptOutcome,
    verb: str,
    as_json: bool,
    now: datetime,
    extra: dict[str, Any] | None = None,
) -> None:
    result, record = outcome.result, outcome.record
    if as_json:
        payload = {k: v for k, v in result.raw.items() if k != "__typename"}
        print_json({"ok": True, **payload, **deadline_json(record, now), **(extra or {})})
        return
    task, attempt = result.task, result.attempt
    replay = " [dim](a replay of the earlier request)[/dim]" if result.replay else ""
    console.print(
        f"{verb}: task [bold]{task.id}[/bold] {escape(task.title)} ({task.state}), "
        f"attempt {attempt.id} generation {attempt.generation} {attempt.state}{replay}"
    )
    print_lease(record, now)


def print_lease(record: AttemptRecord, now: datetime) -> None:
    where = standing(record, now)
    if where.lease == "ENDED":
        console.print(f"attempt {record.id} is {record.state}: it holds no lease any more")
        return
    if where.lease == "HOLDS":
        when = f"{seconds_left(record.local_deadline, now):.0f}s left"
    else:
        when = f"[red]{escape(where.advice or '')}[/red]"
    console.print(
        f"lease: server expiresAt {record.expires_at.isoformat()}; local deadline "
        f"{record.local_deadline.isoformat()} ({when}); heartbeat every "
        f"{record.heartbeat_seconds}s"
    )


def render_claimed(
    claimed: Claimed, as_json: bool, now: datetime, *, verb: str = "claimed"
) -> None:
    """A claim, its brief, and the integration reservation taken with it."""
    outcome = claimed.integration or claimed.claim
    if as_json:
        extra: dict[str, Any] = {}
        brief = claimed.brief
        if brief is not None:
            extra["brief"] = brief_json(brief)
            extra["review"] = brief.subject.raw if brief.subject is not None else None
        if claimed.brief_error is not None:
            extra["briefError"] = error_json(claimed.brief_error)
            extra["reviewError"] = extra["briefError"]
        if claimed.integration_error is not None:
            extra["integrationError"] = error_json(claimed.integration_error)
        if claimed.left_expired is not None:
            extra["leftExpired"] = {
                "attemptId": claimed.left_expired.id,
                "taskId": claimed.left_expired.task_id,
            }
        render_attempt(outcome, verb, as_json, now, extra=extra)
        return
    if claimed.left_expired is not None:
        left = claimed.left_expired
        errors.print(
            f"[yellow]left expired attempt {left.id}[/yellow]: task {left.task_id} stays a "
            f"recovery candidate (`hub agent recover {left.task_id}` takes it back)"
        )
    render_attempt(outcome, verb, as_json, now)
    brief = claimed.brief
    if brief is not None:
        print_brief(brief)
    elif claimed.brief_error is not None:
        errors.print(
            f"[yellow]the task's content could not be read[/yellow] "
            f"({escape(claimed.brief_error.code)}: {escape(cli_message(claimed.brief_error))}):"
            " `hub agent show` reads it again"
        )
    if claimed.integration is not None:
        record = claimed.integration.record
        console.print(
            f"integration [bold]{record.integration_id}[/bold] into "
            f"{escape(record.target_branch or '-')}: the target is reserved for you"
        )
    if claimed.integration_error is not None:
        errors.print(f"[yellow]{escape(cli_message(claimed.integration_error))}[/yellow]")
    hint = next_step(claimed)
    if hint:
        console.print(f"next: {hint}")


def next_step(claimed: Claimed) -> str | None:
    """The command a newcomer would run next on this task."""
    task = claimed.claim.result.task
    record = (claimed.integration or claimed.claim).record
    if record.state != "ACTIVE":
        return None
    if task.kind == "IMPLEMENTATION":
        if record.kind == "RECOVERY" and record.disposition is None:
            return "`hub agent recover --disposition …` first (see the packet)"
        if record.worktree_path is not None:
            return (
                f"carry on in the task's worktree {record.worktree_path} (branch "
                f"{record.worktree_branch}): commit, then `hub agent submit --result \"…\"`"
            )
        return (
            "work on a branch in a clean checkout of the repository, run "
            "`hub agent worktree register` there, commit, then "
            '`hub agent submit --result "…"`'
        )
    if task.kind == "REVIEW":
        return (
            '`hub agent review approve --summary "…"` or `hub agent review reject '
            '--summary "…" --finding SEVERITY:title:remedy`'
        )
    if task.kind == "INTEGRATION":
        if record.integration_id is None:
            return None
        return (
            "publish the candidate onto the target, then `hub agent integrate publish --base "
            "BASE --result RESULT`, record evidence of the result (`hub agent job evidence`) "
            "and `hub agent integrate validate --result RESULT`"
        )
    return '`hub agent accept --evidence "…"`, then `hub agent submit --result "…"`'


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
    status = found.status
    if task.state == "DONE":
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


def print_submitted(done: AttemptOutcome) -> None:
    submission = done.result.raw.get("submission") or {}
    task = done.result.task
    if not submission:
        return
    candidate = submission.get("candidateRevision")
    console.print(
        f"submission [bold]{submission['id']}[/bold] ({submission.get('outcome')}"
        f"{', candidate ' + candidate if candidate else ''})"
    )
    after = {
        "AWAITING_REVIEW": "waiting for review: a reviewer runs `hub agent review next`",
        "AWAITING_INTEGRATION": "approved, waiting for integration: an integrator runs "
        "`hub agent integrate next`",
        "DONE": "the task is done",
        "REVISION_NEEDED": "partial: the task waits for revision",
        "OPEN": "partial: the task is open for whoever continues",
    }.get(task.state)
    if after:
        console.print(f"next: {after}")


def status_json(report: Status, path: Path) -> dict[str, Any]:
    state = report.state
    session = state.session
    attempt = state.attempt
    return {
        "stateFile": str(path),
        "refreshed": report.refreshed,
        "server": state.server,
        "session": None
        if session is None
        else {  # never the token
            "id": session.id,
            "principalId": session.principal_id,
            "workstation": session.workstation,
            "harness": session.harness,
            "harnessInstance": session.harness_instance,
            "startedAt": session.started_at.isoformat(),
        },
        "attempt": None
        if attempt is None
        else {
            "id": attempt.id,
            "taskId": attempt.task_id,
            "projectId": attempt.project_id,
            "generation": attempt.generation,
            "state": attempt.state,
            "kind": attempt.kind,
            "isCurrent": attempt.is_current,
            "leaseExpired": attempt.lease_expired,
            "holdsAuthority": attempt.holds_authority,
            "disposition": attempt.disposition,
            "criteriaRevision": attempt.criteria_revision,
            "leaseSeconds": attempt.lease_seconds,
            "heartbeatSeconds": attempt.heartbeat_seconds,
            "expiresAt": attempt.expires_at.isoformat(),
            "serverTime": attempt.server_time.isoformat(),
            "sentAt": attempt.sent_at.isoformat(),
            "taskKind": attempt.task_kind,
            "subjectSubmissionId": attempt.subject_submission_id,
            "integrationId": attempt.integration_id,
            "targetBranch": attempt.target_branch,
            "repositoryId": attempt.repository_id,
            "worktree": None
            if attempt.worktree_id is None
            else {
                "id": attempt.worktree_id,
                "path": attempt.worktree_path,
                "branch": attempt.worktree_branch,
            },
            "jobIds": attempt.job_ids,
            "reservationIds": attempt.reservation_ids,
            "evidence": attempt.evidence,
            **deadline_json(attempt, report.now),
            **_standing_json(report, attempt),
        },
        "pending": [
            {
                "operation": op.operation,
                "command": command_for(op.operation),
                "key": op.key,
                "arguments": op.arguments,
                "sends": op.sends,
                "createdAt": op.created_at.isoformat(),
            }
            for op in state.pending.values()
        ],
    }


def _standing_json(report: Status, attempt: AttemptRecord) -> dict[str, Any]:
    where = standing(attempt, report.now, refreshed=report.refreshed)
    return {"leaseStanding": where.lease, "advice": where.advice}


def print_status(report: Status, path: Path) -> None:
    state = report.state
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    table.add_row("state file", str(path))
    table.add_row("server", escape(state.server or "-"))
    session = state.session
    table.add_row(
        "session",
        "none: run `hub agent start`"
        if session is None
        else f"{session.id} ({escape(session.workstation)}, {escape(session.harness)} "
        f"{escape(session.harness_instance)})",
    )
    attempt = state.attempt
    where = None
    if attempt is None:
        table.add_row("attempt", "none")
    else:
        now = report.now
        where = standing(attempt, now, refreshed=report.refreshed)
        current = "" if attempt.is_current else ", no longer current"
        table.add_row(
            "attempt",
            f"{attempt.id} on task {attempt.task_id} ({attempt.kind} {attempt.state}{current})",
        )
        table.add_row("generation", str(attempt.generation))
        table.add_row("server expiresAt", attempt.expires_at.isoformat())
        table.add_row("local deadline", attempt.local_deadline.isoformat())
        if where.lease == "HOLDS":
            table.add_row("seconds left", f"{seconds_left(attempt.local_deadline, now):.0f}")
        elif where.lease == "ENDED":
            table.add_row("seconds left", "none: the attempt holds no lease any more")
        elif where.lease == "EXPIRED":
            table.add_row("seconds left", "[red]none: the lease expired[/red]")
        else:
            table.add_row("seconds left", "[red]none: past the local deadline[/red]")
        table.add_row("heartbeat", f"every {attempt.heartbeat_seconds}s")
        if attempt.kind == "RECOVERY":
            table.add_row("disposition", attempt.disposition or "not recorded yet")
        if attempt.subject_submission_id:
            table.add_row(
                "subject", f"submission {attempt.subject_submission_id} ({attempt.task_kind})"
            )
        if attempt.integration_id:
            table.add_row(
                "integration",
                f"{attempt.integration_id} into {escape(attempt.target_branch or '-')}",
            )
        if attempt.worktree_id:
            table.add_row(
                "worktree",
                f"{escape(attempt.worktree_path or '-')} on "
                f"{escape(attempt.worktree_branch or '-')}",
            )
        if attempt.job_ids:
            table.add_row("jobs", ", ".join(attempt.job_ids))
        if attempt.reservation_ids:
            table.add_row("reservations", ", ".join(attempt.reservation_ids))
        if attempt.evidence:
            table.add_row(
                "evidence",
                ", ".join(f"{e} of {r or 'a dirty snapshot'}" for e, r in attempt.evidence.items()),
            )
        if where.advice:
            table.add_row("[yellow]next[/yellow]", escape(where.advice))
    for op in state.pending.values():
        table.add_row(
            "[yellow]pending[/yellow]",
            f"{escape(for_cli(op.operation))} {escape(json.dumps(op.arguments, sort_keys=True))} "
            f"(key {op.key}, sent {op.sends}x): rerun that command to resolve it",
        )
    console.print(table)
    if report.refreshed:
        said = {
            None: "no attempt",
            "HOLDS": "the lease holds",
            "LOCAL_DEADLINE_PASSED": "the lease holds, within the safety margin",
            "EXPIRED": "the lease has expired",
            "ENDED": "the attempt has ended",
        }[where.lease if where else None]
        console.print(f"[dim]reconciled with the server: {said}[/dim]")
