"""`hub agent review …` and `hub agent integrate …`: from a submission to done.

A reviewer claims a review task (`review next`), reads the submission, and records its
decision under that attempt (`review approve|reject`). An integrator claims the
integration of an approved submission and the target's exclusive reservation
(`integrate claim`), reports what happened to the target (`publish`, `moved`,
`conflict`, `uncertain`, `abandon`), reconciles an uncertain publish, and validates the
integrated result (`integrate validate`), which alone completes the implementation task.

Output, exit codes and the local-deadline refusal are those of `hub.cli.agent`; the
current attempt, its subject submission and its integration live in the same state file.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.markup import escape

from hub.cli.agent import (
    AbandonPending,
    AsJson,
    Project,
    StatePath,
    console,
    errors,
    open_client,
    print_json,
    print_lease,
    render_attempt,
    reporting,
)
from hub.client.agent import Recorded
from hub.client.api import FindingDraft
from hub.client.errors import UsageError
from hub.client.results import (
    Integration,
    IntegrationReported,
    ReviewRecorded,
    ReviewStatus,
    SubmissionReview,
)
from hub.client.state import AttemptRecord

review_app = typer.Typer(
    help="Review submissions: claim a review task, read the candidate, approve or reject.",
    no_args_is_help=True,
)
integrate_app = typer.Typer(
    help="Integrate approved submissions: reserve the target, report, reconcile, validate.",
    no_args_is_help=True,
)


class Severity(StrEnum):
    BLOCKER = "BLOCKER"
    MAJOR = "MAJOR"
    MINOR = "MINOR"
    NOTE = "NOTE"


class Verification(StrEnum):
    CLIENT_REPORTED = "CLIENT_REPORTED"
    VERIFIED_BY_REVIEWER = "VERIFIED_BY_REVIEWER"
    VERIFIED_BY_JOB = "VERIFIED_BY_JOB"
    VERIFIED_BY_HOST = "VERIFIED_BY_HOST"


Summary = Annotated[str, typer.Option(help="The decision in a few sentences.")]
Findings = Annotated[
    list[str] | None,
    typer.Option(
        "--finding",
        "-f",
        help="SEVERITY:title:remedy, severity one of BLOCKER, MAJOR, MINOR, NOTE; the remedy "
        "is what would resolve it (repeatable; a rejection needs one).",
    ),
]
Evidence = Annotated[
    list[str] | None,
    typer.Option("--evidence", "-e", help="What you inspected: checks, logs (repeatable)."),
]
VerifiedHow = Annotated[
    Verification,
    typer.Option("--verified-how", help="How the reported revisions were verified."),
]
Branch = Annotated[
    str | None,
    typer.Option(
        "--branch", help="The target branch (default: the one the integration was claimed for)."
    ),
]
Note = Annotated[str, typer.Option(help="Anything a reader should know.")]


def parse_finding(text: str) -> FindingDraft:
    """`SEVERITY:title:remedy`; the remedy may itself contain colons."""
    parts = text.split(":", 2)
    if len(parts) != 3 or not all(part.strip() for part in parts):
        raise UsageError(f"--finding {text!r} is not SEVERITY:title:remedy")
    severity, title, remedy = (part.strip() for part in parts)
    if severity.upper() not in Severity.__members__:
        raise UsageError(
            f"--finding severity {severity!r} is not one of {', '.join(Severity.__members__)}"
        )
    return FindingDraft(severity=severity.upper(), title=title, remedy=remedy)


# --- review ------------------------------------------------------------------------------


@review_app.command("next")
def review_next(
    project: Project,
    abandon_pending: AbandonPending = False,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Claim the next review task of a project (claimTask) and show the submission."""
    with reporting(as_json):
        claimed = open_client(state).review_next(project=project, abandon_pending=abandon_pending)
        problem = claimed.subject_error
        if as_json:
            body: dict[str, Any] = {"review": claimed.subject.raw if claimed.subject else None}
            if problem is not None:
                body["reviewError"] = {"code": problem.code, "message": problem.message}
            render_attempt(claimed.claim, "claimed", as_json, extra=body)
            return
        render_attempt(claimed.claim, "claimed review", as_json)
        if claimed.subject is not None:
            _print_submission(claimed.subject)
        elif problem is not None:
            errors.print(
                f"[yellow]the submission could not be read[/yellow] ({escape(problem.code)}: "
                f"{escape(problem.message)}): `hub agent review show` reads it again"
            )


@review_app.command("show")
def review_show(
    submission_id: Annotated[
        str | None,
        typer.Argument(help="The submission (default: the current attempt's subject)."),
    ] = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Show a submission: its task, candidate, handoff, reviews, findings and status."""
    with reporting(as_json):
        found = open_client(state).review_show(submission_id)
        if as_json:
            print_json({"ok": True, **found.raw})
        else:
            _print_submission(found)


@review_app.command("approve")
def approve(
    summary: Summary,
    finding: Findings = None,
    evidence: Evidence = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Approve the current review attempt's submission (submitReview APPROVE)."""
    _decide("APPROVE", summary, finding, evidence, state, as_json)


@review_app.command("reject")
def reject(
    summary: Summary,
    finding: Findings = None,
    evidence: Evidence = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Reject the current review attempt's submission (submitReview REJECT): the task goes
    back for revision."""
    _decide("REJECT", summary, finding, evidence, state, as_json)


def _decide(
    decision: str,
    summary: str,
    finding: list[str] | None,
    evidence: list[str] | None,
    state: StatePath,
    as_json: bool,
) -> None:
    with reporting(as_json):
        drafts = [parse_finding(text) for text in finding or []]
        done = open_client(state).review(
            decision=decision, summary=summary, findings=drafts, evidence=evidence or []
        )
        recorded: ReviewRecorded = done.answer
        if as_json:
            print_json({"ok": True, **recorded.raw, "attempt": _attempt_json(done.record)})
            return
        review = recorded.review
        console.print(
            f"{review.decision}: review [bold]{review.id}[/bold] of submission "
            f"{review.submission_id} (candidate {review.candidate_revision or '-'})"
        )
        for item in review.findings:
            console.print(f"  finding {item.id} {item.severity}: {escape(item.title)}")
        _print_status(recorded.status)


@review_app.command("request-human")
def request_human(
    submission_id: Annotated[str, typer.Argument(help="The submission a human should review.")],
    context: Annotated[str, typer.Option(help="What the human should look at, and why.")],
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Ask for a human review decision (requestHumanReview); it shows on the dashboard."""
    with reporting(as_json):
        reported = open_client(state).request_human_review(submission_id, context=context)
        if as_json:
            print_json({"ok": True, **reported.raw})
        else:
            console.print(f"human review requested for submission {submission_id}")
            _print_status(reported.status)


@review_app.command("resolve")
def resolve(
    finding_id: Annotated[str, typer.Argument(help="The finding addressed.")],
    resolution: Annotated[str, typer.Option(help="How it was addressed.")],
    evidence: Annotated[
        list[str],
        typer.Option("--evidence", "-e", help="E.g. the fixing commit (repeatable)."),
    ],
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Record how a finding was resolved, with evidence. On your own work a BLOCKER or
    MAJOR finding is only proposed as resolved, until its author, an operator or the
    reviewer of a later submission clears it."""
    with reporting(as_json):
        resolved = open_client(state).resolve_finding(
            finding_id, resolution=resolution, evidence=evidence
        )
        if as_json:
            print_json({"ok": True, **resolved.raw})
        else:
            item = resolved.finding
            if item.resolved_at is None:
                console.print(
                    f"finding {item.id} ({item.severity}: {escape(item.title)}): resolution "
                    "proposed; a BLOCKER or MAJOR finding on your own work is cleared by its "
                    "author, an operator or the reviewer of a later submission"
                )
            else:
                console.print(
                    f"finding {item.id} ({item.severity}: {escape(item.title)}) resolved: "
                    f"{escape(item.resolution or '')}"
                )


# --- integrate ---------------------------------------------------------------------------


@integrate_app.command("claim")
def integrate_claim(
    submission_id: Annotated[str, typer.Argument(help="The approved submission to integrate.")],
    observed_target: Annotated[
        str,
        typer.Option("--observed-target", help="The target branch's revision as you see it now."),
    ],
    branch: Annotated[
        str | None,
        typer.Option("--branch", help="The target branch (default: the repository's default)."),
    ] = None,
    abandon_pending: AbandonPending = False,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Claim a submission's integration and the target's reservation (claimIntegration)."""
    with reporting(as_json):
        outcome = open_client(state).integrate_claim(
            submission_id,
            observed_target_revision=observed_target,
            target_branch=branch,
            abandon_pending=abandon_pending,
        )
        render_attempt(outcome, "claimed integration", as_json)
        if not as_json:
            record = outcome.record
            console.print(
                f"integration [bold]{record.integration_id}[/bold] into "
                f"{escape(record.target_branch or '-')}: the target is reserved for you"
            )


@integrate_app.command("publish")
def publish(
    base: Annotated[str, typer.Option(help="The target revision the result is based on.")],
    result: Annotated[str, typer.Option(help="The target revision after the publish.")],
    verified_how: VerifiedHow = Verification.CLIENT_REPORTED,
    branch: Branch = None,
    note: Note = "",
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Report that the candidate landed on the target (PUBLISHED); validate it next."""
    _report("PUBLISHED", base, result, verified_how, branch, note, state, as_json)


@integrate_app.command("moved")
def moved(
    base: Annotated[str, typer.Option(help="Where the target is now.")],
    verified_how: VerifiedHow = Verification.CLIENT_REPORTED,
    branch: Branch = None,
    note: Note = "",
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Report that the target moved (TARGET_MOVED): rebase on it, publish, validate."""
    _report("TARGET_MOVED", base, None, verified_how, branch, note, state, as_json)


@integrate_app.command("conflict")
def conflict(
    base: Annotated[str | None, typer.Option(help="The target revision tried.")] = None,
    branch: Branch = None,
    note: Note = "",
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Report a conflict (CONFLICT): the implementation goes back for revision."""
    _report("CONFLICT", base, None, Verification.CLIENT_REPORTED, branch, note, state, as_json)


@integrate_app.command("uncertain")
def uncertain(
    base: Annotated[str | None, typer.Option(help="The target revision pushed onto.")] = None,
    result: Annotated[str | None, typer.Option(help="The revision that may have landed.")] = None,
    branch: Branch = None,
    note: Note = "",
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Report that nobody knows whether the push landed (UNCERTAIN): the target stays
    reserved until `integrate reconcile` records what the remote holds."""
    _report("UNCERTAIN", base, result, Verification.CLIENT_REPORTED, branch, note, state, as_json)


@integrate_app.command("abandon")
def abandon(
    branch: Branch = None,
    note: Note = "",
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Give the integration up (ABANDONED): the reservation is released and the integration
    task reopens for someone else."""
    _report("ABANDONED", None, None, Verification.CLIENT_REPORTED, branch, note, state, as_json)


def _report(
    outcome: str,
    base: str | None,
    result: str | None,
    verified_how: Verification,
    branch: str | None,
    note: str,
    state: StatePath,
    as_json: bool,
) -> None:
    with reporting(as_json):
        done = open_client(state).integrate_report(
            outcome=outcome,
            base_revision=base,
            result_revision=result,
            target_branch=branch,
            verified_how=verified_how.value,
            note=note,
        )
        _render_integration(done, f"reported {outcome}", as_json)


@integrate_app.command("reconcile")
def reconcile(
    remote: Annotated[str, typer.Option(help="What the remote target holds now.")],
    published: Annotated[
        bool,
        typer.Option("--published/--not-published", help="Did the candidate land on the target?"),
    ],
    integration_id: Annotated[
        str | None,
        typer.Option("--integration", help="Default: the state file's current integration."),
    ] = None,
    verified_how: VerifiedHow = Verification.CLIENT_REPORTED,
    note: Note = "",
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Record what the remote holds after an uncertain publish (reconcileIntegration).
    Allowed past the local deadline: reconciling is what comes after it."""
    with reporting(as_json):
        done = open_client(state).integrate_reconcile(
            remote_revision=remote,
            published=published,
            integration_id=integration_id,
            verified_how=verified_how.value,
            note=note,
        )
        _render_integration(done, "reconciled", as_json)


@integrate_app.command("validate")
def validate(
    result: Annotated[str, typer.Option(help="The integrated result revision validated.")],
    evidence: Annotated[
        list[str],
        typer.Option(
            "--evidence",
            "-e",
            help="An evidence record (its id) of checks run on the integrated result; a pass "
            "cites at least one, each a pass for exactly that revision (repeatable).",
        ),
    ],
    failed: Annotated[
        bool, typer.Option("--failed", help="The validation failed: the task goes back.")
    ] = False,
    summary: Annotated[str, typer.Option(help="What was validated.")] = "",
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Record the validation of the integrated result (recordValidation); a pass completes
    the implementation task."""
    with reporting(as_json):
        done = open_client(state).integrate_validate(
            result_revision=result, evidence_ids=evidence, passed=not failed, summary=summary
        )
        _render_integration(done, "validation failed" if failed else "validated", as_json)


@integrate_app.command("show")
def integrate_show(
    integration_id: Annotated[
        str | None,
        typer.Argument(help="The integration (default: the state file's current one)."),
    ] = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Show an integration: target, revisions, reports and validations."""
    with reporting(as_json):
        found = open_client(state).integrate_show(integration_id)
        if as_json:
            print_json({"ok": True, "integration": _integration_json(found)})
        else:
            _print_integration(found)


# --- rendering ---------------------------------------------------------------------------


def _attempt_json(record: AttemptRecord | None) -> dict[str, Any] | None:
    if record is None:
        return None
    return {
        "id": record.id,
        "taskId": record.task_id,
        "generation": record.generation,
        "state": record.state,
        "isCurrent": record.is_current,
    }


def _integration_json(integration: Integration) -> dict[str, Any]:
    return {
        "id": integration.id,
        "submissionId": integration.submission_id,
        "taskId": integration.task_id,
        "integrationTaskId": integration.integration_task_id,
        "attemptId": integration.attempt_id,
        "binding": integration.binding,
        "targetBranch": integration.target_branch,
        "candidateRevision": integration.candidate_revision,
        "expectedBaseRevision": integration.expected_base_revision,
        "resultRevision": integration.result_revision,
        "state": integration.state,
        "reservationHeld": integration.reservation_held,
        "validations": [
            {"id": v.id, "resultRevision": v.result_revision, "passed": v.passed}
            for v in integration.validations
        ],
    }


def _render_integration(done: Recorded[IntegrationReported], verb: str, as_json: bool) -> None:
    if as_json:
        print_json({"ok": True, **done.answer.raw, "attempt": _attempt_json(done.record)})
        return
    console.print(f"{verb}:")
    _print_integration(done.answer.integration)
    record = done.record
    if record is not None:
        print_lease(record)


def _print_integration(integration: Integration) -> None:
    held = "reserved" if integration.reservation_held else "not reserved"
    console.print(
        f"integration [bold]{integration.id}[/bold] {integration.state}: "
        f"{escape(integration.binding)}#{escape(integration.target_branch)} ({held})\n"
        f"  candidate {integration.candidate_revision}, expected base "
        f"{integration.expected_base_revision}, result {integration.result_revision or '-'}"
    )
    for validation in integration.validations:
        verdict = "passed" if validation.passed else "[red]failed[/red]"
        console.print(f"  validation {validation.id} of {validation.result_revision}: {verdict}")


def _print_submission(found: SubmissionReview) -> None:
    submission, task = found.submission, found.task
    console.print(
        f"submission [bold]{submission.id}[/bold] ({submission.outcome}) of task {task.id} "
        f"{escape(task.title)} ({task.state})\n"
        f"  candidate revision {submission.candidate_revision or '-'}, criteria revision "
        f"{submission.criteria_revision}, policy revision {submission.policy_revision}\n"
        f"  result: {escape(submission.result)}\n"
        f"  handoff: {escape(submission.handoff or '-')}"
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
    _print_status(found.status)


def _print_status(status: ReviewStatus) -> None:
    if status.ready_for_integration:
        where = "[green]ready for integration[/green]"
    elif status.rejected:
        where = "[red]rejected[/red]"
    else:
        where = f"waiting: {escape(status.waiting_reason or '-')}"
    console.print(
        f"  policy {status.review_policy}: agent approvals {status.agent_approvals}/"
        f"{status.required_agent_approvals}, human {status.human_approvals}/"
        f"{status.required_human_approvals}; {where}"
    )
    if status.unresolved_required_findings:
        console.print(
            "  unresolved required findings: " + ", ".join(status.unresolved_required_findings)
        )
