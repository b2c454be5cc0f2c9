"""`hub agent integrate …`: from an approved submission to a validated integration.

An integrator lists the approved submissions waiting (`integrate list`) and claims the
oldest one's integration with the target's exclusive reservation (`integrate next`, or
`integrate claim SUBMISSION`); the target's current revision is read with
`git ls-remote` unless given. It reports what happened to the target (`publish`,
`moved`, `conflict`, `uncertain`, `abandon`), reconciles an uncertain publish, and
validates the integrated result citing evidence (`integrate validate`), which alone
completes the implementation task.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.markup import escape

from hub.cli.agent.command import command
from hub.cli.agent.options import (
    AbandonPending,
    LeaveExpired,
    ObservedTarget,
    TargetBranch,
)
from hub.cli.agent.output import (
    attempt_json,
    error_json,
    print_lease,
    render_attempt,
)
from hub.cli.options import Project
from hub.cli.output import console, errors, print_json
from hub.client.advice import cli_message
from hub.client.agent import AgentClient, AttemptOutcome
from hub.client.engine import Recorded
from hub.client.integrating import Waiting
from hub.client.results import Integration, IntegrationClaimed, IntegrationReported, Task

app = typer.Typer(
    help="Integrate approved submissions: list them, reserve the target, report, reconcile, "
    "validate.",
    no_args_is_help=True,
)


class Verification(StrEnum):
    CLIENT_REPORTED = "CLIENT_REPORTED"
    VERIFIED_BY_REVIEWER = "VERIFIED_BY_REVIEWER"
    VERIFIED_BY_JOB = "VERIFIED_BY_JOB"
    VERIFIED_BY_HOST = "VERIFIED_BY_HOST"


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


@command(app, "list")
def integrate_list(
    client: AgentClient,
    as_json: bool,
    project: Project,
) -> None:
    """List the approved submissions waiting for integration, oldest first."""
    waiting = client.integrate_waiting(project)
    if as_json:
        print_json({"ok": True, **_waiting_json(waiting)})
    else:
        _print_waiting(waiting)


@command(app, "next")
def integrate_next(
    client: AgentClient,
    as_json: bool,
    project: Project,
    observed_target: ObservedTarget = None,
    branch: TargetBranch = None,
    leave_expired: LeaveExpired = False,
    abandon_pending: AbandonPending = False,
) -> None:
    """List the approved submissions waiting for integration and claim the oldest one's
    integration, with the target's reservation. Nothing waiting is no error (exit 0)."""
    chosen = client.integrate_next(
        project=project,
        observed_target=observed_target,
        target_branch=branch,
        abandon_pending=abandon_pending,
        leave_expired=leave_expired,
    )
    passed_over = [
        {"submissionId": sid, "error": error_json(error)} for sid, error in chosen.passed_over
    ]
    if as_json:
        body = {**_waiting_json(chosen.waiting), "passedOver": passed_over}
        if chosen.claimed is None:
            print_json({"ok": True, "claimed": False, **body})
        else:
            render_attempt(chosen.claimed, "claimed", True, extra={"claimed": True, **body})
        return
    _print_waiting(chosen.waiting)
    for sid, error in chosen.passed_over:
        errors.print(f"[yellow]passed over submission {sid}[/yellow]: {escape(cli_message(error))}")
    if chosen.claimed is None:
        console.print("nothing claimed: no approved submission is free to integrate")
        return
    _print_claimed(chosen.claimed)


@command(app, "claim")
def integrate_claim(
    client: AgentClient,
    as_json: bool,
    submission_id: Annotated[str, typer.Argument(help="The approved submission to integrate.")],
    observed_target: ObservedTarget = None,
    branch: TargetBranch = None,
    leave_expired: LeaveExpired = False,
    abandon_pending: AbandonPending = False,
) -> None:
    """Claim a submission's integration and the target's reservation; with its integration
    task already held (`hub agent next --kind INTEGRATION`), take the reservation."""
    outcome = client.integrate_claim(
        submission_id,
        observed_target_revision=observed_target,
        target_branch=branch,
        abandon_pending=abandon_pending,
        leave_expired=leave_expired,
    )
    if as_json:
        render_attempt(outcome, "claimed integration", as_json)
    else:
        _print_claimed(outcome)


@command(app, "publish")
def publish(
    client: AgentClient,
    as_json: bool,
    base: Annotated[str, typer.Option(help="The target revision the result is based on.")],
    result: Annotated[str, typer.Option(help="The target revision after the publish.")],
    verified_how: VerifiedHow = Verification.CLIENT_REPORTED,
    branch: Branch = None,
    note: Note = "",
) -> None:
    """Report that the candidate landed on the target (PUBLISHED); validate it next."""
    _report(client, as_json, "PUBLISHED", base, result, verified_how, branch, note)


@command(app, "moved")
def moved(
    client: AgentClient,
    as_json: bool,
    base: Annotated[str, typer.Option(help="Where the target is now.")],
    verified_how: VerifiedHow = Verification.CLIENT_REPORTED,
    branch: Branch = None,
    note: Note = "",
) -> None:
    """Report that the target moved (TARGET_MOVED): rebase on it, publish, validate."""
    _report(client, as_json, "TARGET_MOVED", base, None, verified_how, branch, note)


@command(app, "conflict")
def conflict(
    client: AgentClient,
    as_json: bool,
    base: Annotated[str | None, typer.Option(help="The target revision tried.")] = None,
    branch: Branch = None,
    note: Note = "",
) -> None:
    """Report a conflict (CONFLICT): the implementation goes back for revision."""
    _report(client, as_json, "CONFLICT", base, None, Verification.CLIENT_REPORTED, branch, note)


@command(app, "uncertain")
def uncertain(
    client: AgentClient,
    as_json: bool,
    base: Annotated[str | None, typer.Option(help="The target revision pushed onto.")] = None,
    result: Annotated[str | None, typer.Option(help="The revision that may have landed.")] = None,
    branch: Branch = None,
    note: Note = "",
) -> None:
    """Report that nobody knows whether the push landed (UNCERTAIN): the target stays
    reserved until `integrate reconcile` records what the remote holds."""
    _report(client, as_json, "UNCERTAIN", base, result, Verification.CLIENT_REPORTED, branch, note)


@command(app, "abandon")
def abandon(
    client: AgentClient,
    as_json: bool,
    branch: Branch = None,
    note: Note = "",
) -> None:
    """Give the integration up (ABANDONED): the reservation is released and the integration
    task reopens for someone else."""
    _report(client, as_json, "ABANDONED", None, None, Verification.CLIENT_REPORTED, branch, note)


def _report(
    client: AgentClient,
    as_json: bool,
    outcome: str,
    base: str | None,
    result: str | None,
    verified_how: Verification,
    branch: str | None,
    note: str,
) -> None:
    done = client.integrate_report(
        outcome=outcome,
        base_revision=base,
        result_revision=result,
        target_branch=branch,
        verified_how=verified_how.value,
        note=note,
    )
    _render_integration(done, f"reported {outcome}", as_json)


@command(app, "reconcile")
def reconcile(
    client: AgentClient,
    as_json: bool,
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
) -> None:
    """Record what the remote holds after an uncertain publish. Allowed past the local
    deadline: reconciling is what comes after it."""
    done = client.integrate_reconcile(
        remote_revision=remote,
        published=published,
        integration_id=integration_id,
        verified_how=verified_how.value,
        note=note,
    )
    _render_integration(done, "reconciled", as_json)


@command(app, "validate")
def validate(
    client: AgentClient,
    as_json: bool,
    result: Annotated[str, typer.Option(help="The integrated result revision validated.")],
    evidence: Annotated[
        list[str] | None,
        typer.Option(
            "--evidence",
            "-e",
            help="An evidence record (its id, printed by `hub agent job evidence`) of checks "
            "run on the integrated result; a pass cites at least one, each a pass for exactly "
            "that revision (repeatable; default: the evidence of that revision recorded "
            "under this attempt).",
        ),
    ] = None,
    failed: Annotated[
        bool, typer.Option("--failed", help="The validation failed: the task goes back.")
    ] = False,
    summary: Annotated[str, typer.Option(help="What was validated.")] = "",
) -> None:
    """Record the validation of the integrated result, citing its evidence; a pass
    completes the implementation task."""
    done = client.integrate_validate(
        result_revision=result,
        evidence_ids=evidence or [],
        passed=not failed,
        summary=summary,
    )
    _render_integration(done, "validation failed" if failed else "validated", as_json)


@command(app, "show")
def integrate_show(
    client: AgentClient,
    as_json: bool,
    integration_id: Annotated[
        str | None,
        typer.Argument(help="The integration (default: the state file's current one)."),
    ] = None,
) -> None:
    """Show an integration: target, revisions, reports and validations."""
    found = client.integrate_show(integration_id)
    if as_json:
        print_json({"ok": True, "integration": _integration_json(found)})
    else:
        _print_integration(found)


# --- rendering ---------------------------------------------------------------------------


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
        "reports": [
            {
                "outcome": r.outcome,
                "baseRevision": r.base_revision,
                "resultRevision": r.result_revision,
                "verifiedHow": r.verified_how,
                "note": r.note,
                "createdAt": r.created_at.isoformat(),
            }
            for r in integration.reports
        ],
    }


def _render_integration(done: Recorded[IntegrationReported], verb: str, as_json: bool) -> None:
    if as_json:
        print_json({"ok": True, **done.answer.raw, "attempt": attempt_json(done.record)})
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
    _print_reports(integration)
    for validation in integration.validations:
        verdict = "passed" if validation.passed else "[red]failed[/red]"
        console.print(f"  validation {validation.id} of {validation.result_revision}: {verdict}")


def _print_reports(integration: Integration) -> None:
    for report in integration.reports:
        note = f": {escape(report.note)}" if report.note else ""
        console.print(
            f"  reported {report.outcome} (base {report.base_revision or '-'}, result "
            f"{report.result_revision or '-'}, {report.verified_how}){note}"
        )


def _print_claimed(outcome: AttemptOutcome) -> None:
    render_attempt(outcome, "claimed integration", False)
    record = outcome.record
    result = outcome.result
    console.print(
        f"integration [bold]{record.integration_id}[/bold] of submission "
        f"{record.subject_submission_id} into {escape(record.target_branch or '-')}: the target "
        "is reserved for you"
    )
    if isinstance(result, IntegrationClaimed):
        made = result.integration
        console.print(
            f"  candidate {made.candidate_revision}, target observed at "
            f"{made.expected_base_revision}"
        )
        if result.inherited:
            console.print(
                "  [yellow]inherited from an earlier attempt that left it unfinished[/yellow]: "
                "read its reports before acting"
            )
            _print_reports(made)
    console.print(
        "next: publish the candidate onto the target, then `hub agent integrate publish --base "
        "BASE --result RESULT`, record evidence of the result (`hub agent job evidence`) and "
        "`hub agent integrate validate --result RESULT`"
    )


def _task_line(task: Task) -> dict[str, Any]:
    return {
        "taskId": task.id,
        "title": task.title,
        "submissionId": task.subject_submission_id,
        "priority": task.priority,
        "effectiveState": task.effective_state,
    }


def _waiting_json(waiting: Waiting) -> dict[str, Any]:
    return {
        "projectId": waiting.project_id,
        "waiting": [_task_line(t) for t in waiting.ready],
        "toRecover": [_task_line(t) for t in waiting.to_recover],
    }


def _print_waiting(waiting: Waiting) -> None:
    if not waiting.ready:
        console.print(f"no approved submission is waiting for integration in {waiting.project_id}")
    else:
        console.print(f"approved submissions waiting for integration ({len(waiting.ready)}):")
        for task in waiting.ready:
            console.print(
                f"  submission {task.subject_submission_id}: {escape(task.title)} "
                f"(integration task {task.id})"
            )
    for task in waiting.to_recover:
        console.print(
            f"  [yellow]integration task {task.id} ({escape(task.title)}) lost its integrator"
            f"[/yellow]: take it over with `hub agent recover {task.id}`"
        )
