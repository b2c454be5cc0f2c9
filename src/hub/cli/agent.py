"""`hub agent …`: the agent client's command line, talking to a running server over HTTP.

Each command calls one `AgentClient` method and renders its result: one JSON object on
stdout with `--json` (for agents), rich text otherwise. Exit codes:

    0  done; also "nothing to do": `next` (and `review next`) found no task ready to
       claim. It prints "nothing to do in project …"; with `--json`
       `{"ok": true, "nothingToDo": true, "task": null, "attempt": null, …}`.
    1  a problem: the server refused (code and message printed), or the client refused
       locally (past the conservative deadline, the attempt has ended)
    2  usage, or the local state file (no session, an unresolved earlier operation)
    3  transport failure: no definite answer. Run the same command again; a keyed
       operation reuses its recorded idempotency key, so the retry cannot apply twice.
       (The few changes the API takes without a key say so, and how to check first.)

`hub agent review …` and `hub agent integrate …` are in `hub.cli.agent_review`.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hub.cli.watch import watch
from hub.client.agent import AgentClient, AttemptOutcome, Status
from hub.client.deadline import LocalClock, SystemLocalClock, has_passed, seconds_left
from hub.client.errors import (
    ClientError,
    NothingToClaim,
    ProblemError,
    StateError,
    TransportFailure,
    UsageError,
)
from hub.client.state import STATE_ENV, AttemptRecord, StateFile, default_state_path

app = typer.Typer(
    help="The agent client: sessions, claims, heartbeats, submissions, reviews and "
    "integrations over the API.",
    no_args_is_help=True,
)

# The seams tests plug into: the HTTP transport, and this workstation's clocks.
transport: httpx.BaseTransport | None = None
clock: LocalClock = SystemLocalClock()

app.command()(watch)  # `hub agent watch`: the renewal helper (hub.cli.watch)

console = Console(soft_wrap=True)
errors = Console(stderr=True, soft_wrap=True)


class TaskKind(StrEnum):
    IMPLEMENTATION = "IMPLEMENTATION"
    REVIEW = "REVIEW"
    INTEGRATION = "INTEGRATION"
    GENERAL = "GENERAL"
    OBJECTIVE = "OBJECTIVE"


class Outcome(StrEnum):
    DELIVERED = "DELIVERED"
    PARTIAL = "PARTIAL"


StatePath = Annotated[
    Path | None,
    typer.Option(
        "--state",
        envvar=STATE_ENV,
        help="The agent state file (default ~/.config/hub/agent-state.json).",
        show_default=False,
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
AbandonPending = Annotated[
    bool,
    typer.Option(
        "--abandon-pending",
        help="Forget an unresolved earlier request of this kind and send this one instead. "
        "Only once you know the earlier one did not take effect.",
    ),
]
Project = Annotated[
    str, typer.Option("--project", "-p", help="Project id, alias or repository remote.")
]


def open_client(state: Path | None) -> AgentClient:
    return AgentClient(StateFile(state or default_state_path()), transport=transport, clock=clock)


def exit_code(error: ClientError) -> int:
    if isinstance(error, TransportFailure):
        return 3
    if isinstance(error, StateError | UsageError):
        return 2
    return 1


@contextmanager
def reporting(as_json: bool) -> Iterator[None]:
    """Turn a client error into its output and exit code, in one place."""
    try:
        yield
    except NothingToClaim as nothing:
        # An answer, not a failure: there is simply no work ready for this session now.
        render_nothing_to_do(nothing, as_json)
    except ClientError as error:
        code = exit_code(error)
        if as_json:
            body: dict[str, Any] = {
                "kind": type(error).__name__,
                "code": error.code,
                "message": error.message,
            }
            if isinstance(error, TransportFailure):
                body["uncertain"] = error.uncertain
            if isinstance(error, ProblemError):
                body["problem"] = error.typename
                body["details"] = error.details
            print_json({"ok": False, "exitCode": code, "error": body})
        else:
            errors.print(f"[red]{escape(error.code)}[/red]: {escape(error.message)}")
        raise typer.Exit(code) from None


def render_nothing_to_do(nothing: NothingToClaim, as_json: bool) -> None:
    hint = "`hub task ready --project …` lists the ready work; try again later"
    if as_json:
        print_json(
            {
                "ok": True,
                "nothingToDo": True,
                "task": None,
                "attempt": None,
                "code": nothing.code,
                "message": nothing.message,
            }
        )
    else:
        console.print(f"{escape(nothing.message)}\n[dim]{escape(hint)}[/dim]")


# --- commands ----------------------------------------------------------------------------


@app.command()
def start(
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
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Open a session (startSession) and keep its session token in the state file."""
    with reporting(as_json):
        client = open_client(state)
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
                {
                    "ok": True,
                    "session": {
                        "id": session.id,
                        "principalId": session.principal_id,
                        "workstation": session.workstation,
                        "harness": session.harness,
                        "harnessInstance": session.harness_instance,
                        "startedAt": session.started_at.isoformat(),
                    },
                    "stateFile": str(client.state_file.path),
                }
            )
        else:
            console.print(
                f"session [bold]{session.id}[/bold] on {escape(session.workstation)} "
                f"({escape(session.harness)}); state in {client.state_file.path}"
            )


@app.command("next")
def next_task(
    project: Project,
    kind: Annotated[
        list[TaskKind] | None, typer.Option("--kind", "-k", help="Only these kinds (repeatable).")
    ] = None,
    abandon_pending: AbandonPending = False,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Claim the next eligible task of a project (claimTask)."""
    with reporting(as_json):
        client = open_client(state)
        outcome = client.claim(
            project=project,
            kinds=[k.value for k in kind or []],
            abandon_pending=abandon_pending,
        )
        render_attempt(outcome, "claimed", as_json)


@app.command()
def claim(
    task_id: Annotated[str, typer.Argument(help="The task to claim.")],
    project: Project,
    abandon_pending: AbandonPending = False,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Claim a named task (claimTask)."""
    with reporting(as_json):
        outcome = open_client(state).claim(
            project=project, task_id=task_id, abandon_pending=abandon_pending
        )
        render_attempt(outcome, "claimed", as_json)


@app.command()
def heartbeat(
    abandon_pending: AbandonPending = False, state: StatePath = None, as_json: AsJson = False
) -> None:
    """Renew the current attempt's lease (renewLease)."""
    with reporting(as_json):
        outcome = open_client(state).heartbeat(abandon_pending=abandon_pending)
        render_attempt(outcome, "renewed", as_json)


@app.command()
def checkpoint(
    summary: Annotated[str, typer.Option(help="What is done and what is next.")],
    revision: Annotated[str | None, typer.Option(help="The commit it refers to.")] = None,
    branch: Annotated[str | None, typer.Option(help="The branch it is on.")] = None,
    published: Annotated[
        bool, typer.Option(help="The revision is pushed to the shared remote.")
    ] = False,
    abandon_pending: AbandonPending = False,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Record progress on the current attempt (recordCheckpoint)."""
    with reporting(as_json):
        outcome = open_client(state).checkpoint(
            summary=summary,
            revision=revision,
            branch=branch,
            published=published,
            abandon_pending=abandon_pending,
        )
        render_attempt(outcome, "checkpoint recorded", as_json)


@app.command()
def accept(
    evidence: Annotated[
        list[str],
        typer.Option("--evidence", "-e", help="How a criterion was checked (repeatable)."),
    ],
    note: Annotated[str, typer.Option(help="Anything a reader should know.")] = "",
    criteria_revision: Annotated[
        int | None,
        typer.Option(help="The criteria revision met (default: the one the attempt uses)."),
    ] = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Record that a non-code task meets its acceptance criteria (recordAcceptance)."""
    with reporting(as_json):
        outcome = open_client(state).accept(
            evidence=evidence, note=note, criteria_revision=criteria_revision
        )
        render_attempt(outcome, "acceptance recorded", as_json)


@app.command()
def submit(
    result: Annotated[str, typer.Option(help="What was delivered.")],
    outcome: Annotated[Outcome, typer.Option(help="DELIVERED or PARTIAL.")] = Outcome.DELIVERED,
    handoff: Annotated[str, typer.Option(help="For whoever continues (PARTIAL needs it).")] = "",
    candidate_revision: Annotated[
        str | None, typer.Option(help="The commit delivered (implementation tasks).")
    ] = None,
    abandon_pending: AbandonPending = False,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Submit the current attempt's result (submitAttempt)."""
    with reporting(as_json):
        done = open_client(state).submit(
            result=result,
            outcome=outcome.value,
            handoff=handoff,
            candidate_revision=candidate_revision,
            abandon_pending=abandon_pending,
        )
        render_attempt(done, "submitted", as_json)


@app.command()
def relinquish(
    reason: Annotated[str, typer.Option(help="Why the task goes back.")],
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Give the current attempt's task back (relinquishAttempt)."""
    with reporting(as_json):
        outcome = open_client(state).relinquish(reason=reason)
        render_attempt(outcome, "relinquished", as_json)


@app.command()
def status(
    refresh: Annotated[
        bool,
        typer.Option(
            help="Ask the server first: reconcile the attempt and compute a fresh deadline."
        ),
    ] = False,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Show the session, the current attempt, its lease and the conservative local deadline."""
    with reporting(as_json):
        client = open_client(state)
        report = client.status(refresh=refresh)
        if as_json:
            print_json({"ok": True, **_status_json(report, client.state_file.path)})
        else:
            _print_status(report, client.state_file.path)


@app.command()
def end(
    reason: Annotated[str, typer.Option(help="Why the session ends.")] = "",
    abandon_pending: AbandonPending = False,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """End the session (endSession); its token stops working at once."""
    with reporting(as_json):
        ended = open_client(state).end(reason=reason, abandon_pending=abandon_pending)
        left = ended.abandoned_attempt
        if as_json:
            print_json(
                {
                    "ok": True,
                    "session": {"id": ended.session.id, "endedAt": _iso(ended.session.ended_at)},
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


def print_json(value: dict[str, Any]) -> None:
    print(json.dumps(value, default=str, sort_keys=True))


def _iso(value: Any) -> str | None:
    return None if value is None else str(value.isoformat())


def deadline_json(record: AttemptRecord) -> dict[str, Any]:
    now = clock.wall()
    return {
        "localDeadline": record.local_deadline.isoformat(),
        "secondsLeft": round(seconds_left(record.local_deadline, now), 3),
        "pastLocalDeadline": has_passed(record.local_deadline, now),
    }


def render_attempt(
    outcome: AttemptOutcome, verb: str, as_json: bool, extra: dict[str, Any] | None = None
) -> None:
    result, record = outcome.result, outcome.record
    if as_json:
        payload = {k: v for k, v in result.raw.items() if k != "__typename"}
        print_json({"ok": True, **payload, **deadline_json(record), **(extra or {})})
        return
    task, attempt = result.task, result.attempt
    replay = " [dim](a replay of the earlier request)[/dim]" if result.replay else ""
    console.print(
        f"{verb}: task [bold]{task.id}[/bold] {escape(task.title)} ({task.state}), "
        f"attempt {attempt.id} generation {attempt.generation} {attempt.state}{replay}"
    )
    print_lease(record)


def print_lease(record: AttemptRecord) -> None:
    if record.state != "ACTIVE" or not record.is_current:
        console.print(f"attempt {record.id} is {record.state}: it holds no lease any more")
        return
    now = clock.wall()
    left = seconds_left(record.local_deadline, now)
    if has_passed(record.local_deadline, now):
        when = f"[red]passed {-left:.0f}s ago[/red]: reconcile (status --refresh)"
    else:
        when = f"{left:.0f}s left"
    console.print(
        f"lease: server expiresAt {record.expires_at.isoformat()}; local deadline "
        f"{record.local_deadline.isoformat()} ({when}); heartbeat every "
        f"{record.heartbeat_seconds}s"
    )


def _status_json(report: Status, path: Path) -> dict[str, Any]:
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
            **deadline_json(attempt),
        },
        "pending": [
            {
                "operation": op.operation,
                "key": op.key,
                "arguments": op.arguments,
                "sends": op.sends,
                "createdAt": op.created_at.isoformat(),
            }
            for op in state.pending.values()
        ],
    }


def _print_status(report: Status, path: Path) -> None:
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
    if attempt is None:
        table.add_row("attempt", "none")
    else:
        now = report.now
        left = seconds_left(attempt.local_deadline, now)
        current = "" if attempt.is_current else ", no longer current"
        table.add_row(
            "attempt", f"{attempt.id} on task {attempt.task_id} ({attempt.state}{current})"
        )
        table.add_row("generation", str(attempt.generation))
        table.add_row("server expiresAt", attempt.expires_at.isoformat())
        table.add_row("local deadline", attempt.local_deadline.isoformat())
        if attempt.state != "ACTIVE" or not attempt.is_current:
            table.add_row("seconds left", "none: the attempt holds no lease any more")
        elif has_passed(attempt.local_deadline, now):
            table.add_row(
                "seconds left", f"[red]{left:.0f} (passed: reconcile with --refresh)[/red]"
            )
        else:
            table.add_row("seconds left", f"{left:.0f}")
        table.add_row("heartbeat", f"every {attempt.heartbeat_seconds}s")
        if attempt.subject_submission_id:
            table.add_row(
                "subject", f"submission {attempt.subject_submission_id} ({attempt.task_kind})"
            )
        if attempt.integration_id:
            table.add_row(
                "integration",
                f"{attempt.integration_id} into {escape(attempt.target_branch or '-')}",
            )
    for op in state.pending.values():
        table.add_row(
            "[yellow]pending[/yellow]",
            f"{op.operation} {escape(json.dumps(op.arguments, sort_keys=True))} "
            f"(key {op.key}, sent {op.sends}x): rerun that command to resolve it",
        )
    console.print(table)
    if report.refreshed:
        console.print("[dim]reconciled with the server[/dim]")


# The review and integration commands live in their own module and use the helpers above.
from hub.cli.agent_review import integrate_app, review_app  # noqa: E402

app.add_typer(review_app, name="review")
app.add_typer(integrate_app, name="integrate")
