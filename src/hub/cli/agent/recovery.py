"""`hub agent worktree register` and `hub agent recover`: the checkout a task is worked
in, and taking over a task whose lease expired.

    worktree register   register the checkout you are in for the current attempt: its
                        identity, branch, HEAD and repository are read from git; a dirty
                        checkout is refused (nothing is ever stashed or reset)
    recover [TASK]      claim an expired task and show its recovery packet; with
                        --disposition, record what the recovery does with it
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from hub.cli.agent.command import command
from hub.cli.agent.options import AbandonPending, LeaveExpired
from hub.cli.agent.output import render_attempt
from hub.cli.output import console, print_json
from hub.client.agent import AgentClient
from hub.client.results import RecoveryClaimed, RecoveryPacket

app = typer.Typer()  # `hub agent recover`
worktree_app = typer.Typer(
    help="Register the checkout you work in for the current attempt.", no_args_is_help=True
)


class Disposition(StrEnum):
    RESUME_SAVED_WORK = "RESUME_SAVED_WORK"
    RECONCILE_DELIVERED = "RECONCILE_DELIVERED"
    RESTART = "RESTART"
    BLOCKED = "BLOCKED"


# --- worktree ---------------------------------------------------------------------------


@command(worktree_app, "register")
def worktree_register(
    client: AgentClient,
    as_json: bool,
    path: Annotated[
        Path | None, typer.Option(help="The checkout (default: the current directory).")
    ] = None,
    repository: Annotated[
        str | None,
        typer.Option(
            help="The project's repository, if the checkout's remotes name several or none."
        ),
    ] = None,
) -> None:
    """Register the checkout for the current implementation attempt: identity (its git
    directory), branch, HEAD and repository are read from git. A checkout with
    uncommitted changes is refused unless it is this task's own worktree."""
    done = client.worktree_register(path=path, repository=repository)
    checkout = done.checkout
    facts: dict[str, Any] = {
        "worktreeId": done.identity,
        "path": str(checkout.toplevel),
        "branch": checkout.branch,
        "baseRevision": checkout.head,
        "repositoryId": done.repository.id,
        "dirty": checkout.dirty,
        "resumed": done.resumed,
    }
    if as_json:
        render_attempt(done.outcome, "worktree registered", True, extra={"registered": facts})
        return
    render_attempt(done.outcome, "worktree registered", False)
    saved = " (this task's saved work, with uncommitted changes)" if checkout.dirty else ""
    console.print(
        f"  {escape(str(checkout.toplevel))} on {escape(checkout.branch or '-')} at "
        f"{checkout.head}{saved}\n  repository {done.repository.id} "
        f"{escape(done.repository.remote_url)}; identity {escape(done.identity)}"
    )
    console.print('next: commit your work, then `hub agent submit --result "…"` (it delivers HEAD)')


# --- recover ------------------------------------------------------------------------------


@command(app)
def recover(
    client: AgentClient,
    as_json: bool,
    task_id: Annotated[
        str | None,
        typer.Argument(help="The expired task to take over (default: the current attempt's)."),
    ] = None,
    disposition: Annotated[
        Disposition | None,
        typer.Option(help="What the recovery does with what the earlier attempts left."),
    ] = None,
    reason: Annotated[str, typer.Option(help="Why (RESTART and BLOCKED need one).")] = "",
    leave_expired: LeaveExpired = False,
    abandon_pending: AbandonPending = False,
) -> None:
    """Take over a task whose lease expired and show its recovery packet (attempts,
    checkpoints, submissions, worktrees, jobs, holds, integrations); with --disposition,
    record what the recovery does, which must come before any other change."""
    held = client.state_file.read().attempt
    claiming = task_id is not None and not (
        held is not None
        and held.task_id == task_id
        and held.kind == "RECOVERY"
        and held.state == "ACTIVE"
        and held.is_current
    )
    body: dict[str, Any] = {}
    if claiming:
        assert task_id is not None
        claimed = client.recover(
            task_id, abandon_pending=abandon_pending, leave_expired=leave_expired
        )
        if disposition is None:
            if as_json:
                render_attempt(claimed, "recovery claimed", True)
                return
            render_attempt(claimed, "recovery claimed", False)
            if isinstance(claimed.result, RecoveryClaimed):
                _print_packet(claimed.result.recovery_packet)
            console.print(
                "next: choose what to do with it: `hub agent recover --disposition "
                'RESUME_SAVED_WORK|RECONCILE_DELIVERED|RESTART|BLOCKED --reason "…"`'
            )
            return
        body["recoveryPacket"] = claimed.result.raw.get("recoveryPacket")
        if not as_json:
            render_attempt(claimed, "recovery claimed", False)
    if disposition is None:
        packet = client.recovery_packet(task_id)
        if as_json:
            print_json({"ok": True, "recoveryPacket": packet.raw})
        else:
            _print_packet(packet)
        return
    recorded = client.recover_disposition(disposition=disposition.value, reason=reason)
    if as_json:
        render_attempt(recorded, "disposition recorded", True, extra=body)
        return
    render_attempt(recorded, f"disposition {disposition.value} recorded", False)
    console.print(f"next: {_after_disposition(disposition)}")


def _after_disposition(disposition: Disposition) -> str:
    return {
        Disposition.RESUME_SAVED_WORK: "go on from the saved work: in its worktree, run "
        "`hub agent worktree register`, then carry on",
        Disposition.RECONCILE_DELIVERED: "check what was delivered against the criteria, "
        'then `hub agent submit --result "…"`',
        Disposition.RESTART: "start over in a clean worktree: `hub agent worktree register` there",
        Disposition.BLOCKED: "say what blocks it (`hub agent checkpoint --summary …`), or "
        "give it back (`hub agent relinquish --reason …`)",
    }[disposition]


def _print_packet(packet: RecoveryPacket) -> None:
    task = packet.task
    console.print(
        f"recovery packet of task [bold]{task.id}[/bold] {escape(task.title)} ({task.kind}, "
        f"criteria revision {task.criteria_revision})"
    )
    for attempt in packet.attempts:
        disposition = f", disposition {attempt.disposition}" if attempt.disposition else ""
        console.print(
            f"  attempt {attempt.id} {attempt.kind} generation {attempt.generation}: "
            f"{attempt.state}{', lease expired' if attempt.lease_expired else ''}{disposition}"
        )
    for checkpoint in packet.checkpoints:
        published = "published" if checkpoint.published else "not published"
        console.print(
            f"  checkpoint {checkpoint.created_at:%Y-%m-%d %H:%M}: {escape(checkpoint.summary)}"
            f" ({checkpoint.revision or '-'} on {escape(checkpoint.branch or '-')}, {published})"
        )
    for submission in packet.submissions:
        console.print(
            f"  submission {submission.id} {submission.outcome}: candidate "
            f"{submission.candidate_revision or '-'}"
        )
    for worktree in packet.worktrees:
        released = " (released)" if worktree.released_at else ""
        console.print(
            f"  worktree {escape(worktree.path)} on {escape(worktree.branch)} from "
            f"{worktree.base_revision} at {escape(worktree.workstation)}{released}"
        )
    if packet.published_revisions:
        console.print(f"  published revisions: {', '.join(packet.published_revisions)}")
    for note in packet.notes:
        console.print(f"  note: {escape(note.body)}")
    for job in packet.jobs:
        exit_status = "" if job.exit_status is None else f" exit {job.exit_status}"
        console.print(
            f"  job {job.id} ({escape(job.job_id)}) {escape(job.operation)}: {job.status}"
            f"{exit_status}, {job.freshness}"
        )
    for hold in packet.holds:
        console.print(
            f"  [yellow]hold[/yellow] {hold.id} on {escape(hold.resource_key)} (kept while job "
            f"{hold.job_id or 'of the attempt'} may run)"
        )
    for made in packet.integrations:
        held = ", target reserved" if made.reservation_held else ""
        console.print(
            f"  integration {made.id} {made.state} into {escape(made.target_branch)}{held}"
        )
        for report in made.reports:
            console.print(
                f"    {report.outcome} base {report.base_revision or '-'} result "
                f"{report.result_revision or '-'}: {escape(report.note)}"
            )
