"""`hub agent start|status|end`: the session, and where the state file's attempt stands.

`status` shows the session, the current attempt, its lease, the conservative local
deadline and what to do next; `status --refresh` asks the server first.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from hub.cli.agent.command import command
from hub.cli.agent.options import AbandonPending
from hub.cli.agent.output import deadline_json, iso
from hub.cli.output import console, errors, print_json
from hub.client.advice import command_for, for_cli
from hub.client.agent import AgentClient, Status, standing
from hub.client.deadline import seconds_left
from hub.client.results import Session
from hub.client.state import AttemptRecord, SessionRecord

app = typer.Typer()


@command(app)
def start(
    client: AgentClient,
    as_json: bool,
    server: Annotated[str, typer.Option(envvar="HUB_SERVER", help="Base URL of the hub.")],
    token: Annotated[
        str,
        typer.Option(
            envvar="HUB_TOKEN",
            help="Personal token (hub_pat_…); prefer the HUB_TOKEN variable to the command "
            "line, which other users can see. It is not stored.",
            show_default=False,
        ),
    ],
    harness: Annotated[str, typer.Option(help="The agent harness, e.g. claude-code.")],
    instance: Annotated[str, typer.Option(help="Id of this harness process or run.")],
    workstation: Annotated[
        str | None, typer.Option(help="Label of this machine (default: the host name).")
    ] = None,
    replace: Annotated[
        bool, typer.Option(help="Forget a session already in the state file.")
    ] = False,
) -> None:
    """Open a session and keep its session token in the state file."""
    session = client.start(
        server=server,
        token=token,
        workstation=workstation or socket.gethostname(),
        harness=harness,
        instance=instance,
        replace=replace,
    )
    if as_json:
        print_json(
            {"ok": True, "session": session_json(session), "stateFile": str(client.state_file.path)}
        )
    else:
        console.print(
            f"session [bold]{session.id}[/bold] on {escape(session.workstation)} "
            f"({escape(session.harness)}); state in {client.state_file.path}"
        )


@command(app)
def status(
    client: AgentClient,
    as_json: bool,
    refresh: Annotated[
        bool,
        typer.Option(
            help="Ask the server first: reconcile the attempt and compute a fresh deadline."
        ),
    ] = False,
) -> None:
    """Show the session, the current attempt, its lease, the conservative local deadline,
    and what to do next."""
    report = client.status(refresh=refresh)
    if as_json:
        print_json({"ok": True, **status_json(report, client.state_file.path)})
    else:
        print_status(report, client.state_file.path)


@command(app)
def end(
    client: AgentClient,
    as_json: bool,
    reason: Annotated[str, typer.Option(help="Why the session ends.")] = "",
    abandon_pending: AbandonPending = False,
) -> None:
    """End the session; its token stops working at once."""
    ended = client.end(reason=reason, abandon_pending=abandon_pending)
    left = ended.abandoned_attempt
    if as_json:
        print_json(
            {
                "ok": True,
                "session": {"id": ended.session.id, "endedAt": iso(ended.session.ended_at)},
                "abandonedAttempt": left.id if left else None,
            }
        )
        return
    console.print(f"session {ended.session.id} ended")
    if left is not None:
        errors.print(
            f"[yellow]attempt {left.id} was still active[/yellow]: it becomes a recovery "
            f"candidate when its lease expires ({left.expires_at.isoformat()} server time)"
        )


# --- rendering ---------------------------------------------------------------------------


def status_json(report: Status, path: Path) -> dict[str, Any]:
    state = report.state
    session = state.session
    attempt = state.attempt
    return {
        "stateFile": str(path),
        "refreshed": report.refreshed,
        "server": state.server,
        "session": None if session is None else session_json(session),
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


def session_json(session: Session | SessionRecord) -> dict[str, Any]:
    """The session as printed: never its token."""
    return {
        "id": session.id,
        "principalId": session.principal_id,
        "workstation": session.workstation,
        "harness": session.harness,
        "harnessInstance": session.harness_instance,
        "startedAt": session.started_at.isoformat(),
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
