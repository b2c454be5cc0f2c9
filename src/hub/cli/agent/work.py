"""`hub agent next|claim|show|heartbeat|checkpoint|accept|reconcile-criteria|submit|relinquish`:
claiming a task and the changes an attempt makes under its lease.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer
from rich.markup import escape

from hub.cli.agent.briefs import brief_json, brief_task_json, print_brief
from hub.cli.agent.command import command
from hub.cli.agent.options import (
    AbandonPending,
    LeaveExpired,
    ObservedTarget,
    TargetBranch,
)
from hub.cli.agent.output import render_attempt, render_claimed
from hub.cli.options import Project, TaskKind
from hub.cli.output import console, print_json
from hub.client.agent import AgentClient, AttemptOutcome
from hub.client.results import AttemptChanged

app = typer.Typer()


class Outcome(StrEnum):
    DELIVERED = "DELIVERED"
    PARTIAL = "PARTIAL"
    ALREADY_SATISFIED = "ALREADY_SATISFIED"


@command(app, "next")
def next_task(
    client: AgentClient,
    as_json: bool,
    project: Project,
    kind: Annotated[
        list[TaskKind] | None, typer.Option("--kind", "-k", help="Only these kinds (repeatable).")
    ] = None,
    observed_target: ObservedTarget = None,
    branch: TargetBranch = None,
    leave_expired: LeaveExpired = False,
    abandon_pending: AbandonPending = False,
) -> None:
    """Claim the next eligible task of a project and show what it asks for: outcome,
    acceptance criteria, repository and branch, open findings. An integration task comes
    with its target's reservation."""
    kinds = [k.value for k in kind or []]
    _claim(client, as_json, project, observed_target, branch, leave_expired, abandon_pending, kinds)


@command(app)
def claim(
    client: AgentClient,
    as_json: bool,
    task_id: Annotated[str, typer.Argument(help="The task to claim.")],
    project: Project,
    observed_target: ObservedTarget = None,
    branch: TargetBranch = None,
    leave_expired: LeaveExpired = False,
    abandon_pending: AbandonPending = False,
) -> None:
    """Claim a named task and show what it asks for."""
    _claim(
        client, as_json, project, observed_target, branch, leave_expired, abandon_pending, task_id
    )


def _claim(
    client: AgentClient,
    as_json: bool,
    project: str,
    observed_target: str | None,
    branch: str | None,
    leave_expired: bool,
    abandon_pending: bool,
    wanted: str | list[str],  # the task named, or the kinds of the next one
) -> None:
    claimed = client.claim(
        project=project,
        task_id=wanted if isinstance(wanted, str) else None,
        kinds=wanted if isinstance(wanted, list) else (),
        abandon_pending=abandon_pending,
        leave_expired=leave_expired,
        observed_target=observed_target,
        target_branch=branch,
    )
    render_claimed(claimed, as_json)


@command(app)
def show(
    client: AgentClient,
    as_json: bool,
    task_id: Annotated[
        str | None, typer.Argument(help="The task (default: the current attempt's).")
    ] = None,
) -> None:
    """Show a task: outcome, acceptance criteria, repository and branch, open findings."""
    brief = client.show(task_id)
    if as_json:
        print_json({"ok": True, "task": brief_task_json(brief), "brief": brief_json(brief)})
    else:
        task = brief.task
        console.print(
            f"task [bold]{task.id}[/bold] {escape(task.title)} ({task.kind}, "
            f"{task.effective_state})"
        )
        print_brief(brief)


@command(app)
def heartbeat(
    client: AgentClient,
    as_json: bool,
    abandon_pending: AbandonPending = False,
) -> None:
    """Renew the current attempt's lease."""
    outcome = client.heartbeat(abandon_pending=abandon_pending)
    render_attempt(outcome, "renewed", as_json)


@command(app)
def checkpoint(
    client: AgentClient,
    as_json: bool,
    summary: Annotated[str, typer.Option(help="What is done and what is next.")],
    revision: Annotated[
        str | None,
        typer.Option(
            help="The commit it refers to (with --published, default: the registered "
            "worktree's HEAD)."
        ),
    ] = None,
    branch: Annotated[str | None, typer.Option(help="The branch it is on.")] = None,
    published: Annotated[
        bool, typer.Option(help="The revision is pushed to the shared remote.")
    ] = False,
    abandon_pending: AbandonPending = False,
) -> None:
    """Record progress on the current attempt."""
    outcome = client.checkpoint(
        summary=summary,
        revision=revision,
        branch=branch,
        published=published,
        abandon_pending=abandon_pending,
    )
    render_attempt(outcome, "checkpoint recorded", as_json)


@command(app)
def accept(
    client: AgentClient,
    as_json: bool,
    evidence: Annotated[
        list[str],
        typer.Option("--evidence", "-e", help="How a criterion was checked (repeatable)."),
    ],
    note: Annotated[str, typer.Option(help="Anything a reader should know.")] = "",
    criteria_revision: Annotated[
        int | None,
        typer.Option(help="The criteria revision met (default: the one the attempt uses)."),
    ] = None,
) -> None:
    """Record that a non-code task meets its acceptance criteria."""
    outcome = client.accept(evidence=evidence, note=note, criteria_revision=criteria_revision)
    render_attempt(outcome, "acceptance recorded", as_json)


@command(app, "reconcile-criteria")
def reconcile_criteria(
    client: AgentClient,
    as_json: bool,
    note: Annotated[str, typer.Option(help="How the work meets the criteria as they are now.")],
    criteria_revision: Annotated[
        int | None, typer.Option(help="The revision adopted (default: the task's current).")
    ] = None,
) -> None:
    """Adopt the task's changed acceptance criteria before delivering against them."""
    outcome = client.reconcile_criteria(note=note, criteria_revision=criteria_revision)
    render_attempt(outcome, "criteria reconciled", as_json)


@command(app)
def submit(
    client: AgentClient,
    as_json: bool,
    result: Annotated[str, typer.Option(help="What was delivered.")],
    outcome: Annotated[
        Outcome,
        typer.Option(
            help="DELIVERED, PARTIAL, or ALREADY_SATISFIED: the criteria already held when "
            "the task was claimed (name the revision checked and --evidence-id)."
        ),
    ] = Outcome.DELIVERED,
    handoff: Annotated[str, typer.Option(help="For whoever continues (PARTIAL needs it).")] = "",
    candidate_revision: Annotated[
        str | None,
        typer.Option(
            help="The commit delivered, or for ALREADY_SATISFIED the one on which the "
            "criteria already hold (implementation tasks; default: the registered "
            "worktree's HEAD, which must be committed)."
        ),
    ] = None,
    evidence_id: Annotated[
        list[str] | None,
        typer.Option(
            "--evidence-id",
            help="An evidence record the submission cites (evd_…, from `hub agent job "
            "evidence`; repeatable; ALREADY_SATISFIED needs one).",
            show_default=False,
        ),
    ] = None,
    abandon_pending: AbandonPending = False,
) -> None:
    """Submit the current attempt's result; prints the submission and what comes next.

    Found the work already done after claiming it? Record evidence of the check on the
    revision where the criteria hold, then submit ALREADY_SATISFIED citing it: review
    judges it like a delivery, and an approval completes the task with nothing to
    integrate.
    """
    done = client.submit(
        result=result,
        outcome=outcome.value,
        handoff=handoff,
        candidate_revision=candidate_revision,
        evidence_ids=evidence_id or [],
        abandon_pending=abandon_pending,
    )
    render_attempt(done, "submitted", as_json)
    if not as_json:
        print_submitted(done)


@command(app)
def relinquish(
    client: AgentClient,
    as_json: bool,
    reason: Annotated[str, typer.Option(help="Why the task goes back.")],
) -> None:
    """Give the current attempt's task back."""
    outcome = client.relinquish(reason=reason)
    render_attempt(outcome, "relinquished", as_json)


# --- rendering ---------------------------------------------------------------------------


def print_submitted(done: AttemptOutcome) -> None:
    result = done.result
    submission = result.submission if isinstance(result, AttemptChanged) else None
    if submission is None:
        return
    candidate = submission.candidate_revision
    console.print(
        f"submission [bold]{submission.id}[/bold] ({submission.outcome}"
        f"{', candidate ' + candidate if candidate else ''})"
    )
    after = {
        "AWAITING_REVIEW": "waiting for review: a reviewer runs `hub agent review next`",
        "AWAITING_INTEGRATION": "approved, waiting for integration: an integrator runs "
        "`hub agent integrate next`",
        "DONE": "the task is done",
        "REVISION_NEEDED": "partial: the task waits for revision",
        "OPEN": "partial: the task is open for whoever continues",
    }.get(result.task.state)
    if after:
        console.print(f"next: {after}")
