"""`hub agent …`: the agent client's command line, talking to a running server over HTTP.

Each command calls one `AgentClient` method and renders its result: one JSON object on
stdout with `--json` (for agents), rich text otherwise. Messages name `hub agent`
commands, never the API's operations (`hub.client.advice`). Exit codes:

    0  done; also "nothing to do": `next` (and `review next`) found no task ready to
       claim. It prints "nothing to do in project …"; with `--json`
       `{"ok": true, "nothingToDo": true, "task": null, "attempt": null, …}`.
    1  a problem: the server refused (code and message printed), or the client refused
       locally (past the conservative deadline, the attempt has ended or expired, the
       checkout is dirty)
    2  usage, or the local state file (no session, an unresolved earlier operation)
    3  transport failure: no definite answer. Run the same command again; a keyed
       operation reuses its recorded idempotency key, so the retry cannot apply twice.
       (The few changes the API takes without a key say so, and how to check first.)

`hub agent review …` is in `hub.cli.agent_review`, `hub agent integrate …` in
`hub.cli.agent_integrate`, and `hub agent worktree|recover|job|resources …` in
`hub.cli.agent_work`. docs/agent-cli.md walks through them.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer
from rich.markup import escape

from hub.cli import agent_render
from hub.cli.agent_render import (
    brief_json,
    brief_task_json,
    console,
    error_json,
    errors,
    iso,
    print_brief,
    print_json,
    print_status,
    print_submitted,
    status_json,
)
from hub.cli.watch import watch
from hub.client.advice import cli_message
from hub.client.agent import AgentClient, AttemptOutcome, Claimed
from hub.client.deadline import LocalClock, SystemLocalClock
from hub.client.errors import (
    ClientError,
    NothingToClaim,
    StateError,
    TransportFailure,
    UsageError,
)
from hub.client.state import STATE_ENV, AttemptRecord, StateFile, default_state_path

app = typer.Typer(
    help="The agent client: sessions, claims, heartbeats, worktrees, submissions, reviews, "
    "integrations, recovery, jobs and resources over the API.",
    no_args_is_help=True,
)

# The seams tests plug into: the HTTP transport, and this workstation's clocks.
transport: httpx.BaseTransport | None = None
clock: LocalClock = SystemLocalClock()

app.command()(watch)  # `hub agent watch`: the renewal helper (hub.cli.watch)


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
LeaveExpired = Annotated[
    bool,
    typer.Option(
        "--leave-expired",
        help="Claim new work even though the state file's attempt expired still holding its "
        "task: leave that task (and what it holds) for whoever recovers it.",
    ),
]
Project = Annotated[
    str, typer.Option("--project", "-p", help="Project id, alias or repository remote.")
]
ObservedTarget = Annotated[
    str | None,
    typer.Option(
        "--observed-target",
        help="Integration: the target branch's revision as you see it now (default: read "
        "from the remote with `git ls-remote`).",
    ),
]
TargetBranch = Annotated[
    str | None,
    typer.Option(
        "--branch", help="Integration: the target branch (default: the repository's default)."
    ),
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
            print_json({"ok": False, "exitCode": code, "error": error_json(error)})
        else:
            errors.print(f"[red]{escape(error.code)}[/red]: {escape(cli_message(error))}")
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
    """Open a session and keep its session token in the state file."""
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
    observed_target: ObservedTarget = None,
    branch: TargetBranch = None,
    leave_expired: LeaveExpired = False,
    abandon_pending: AbandonPending = False,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Claim the next eligible task of a project and show what it asks for: outcome,
    acceptance criteria, repository and branch, open findings. An integration task comes
    with its target's reservation."""
    with reporting(as_json):
        claimed = open_client(state).claim(
            project=project,
            kinds=[k.value for k in kind or []],
            abandon_pending=abandon_pending,
            leave_expired=leave_expired,
            observed_target=observed_target,
            target_branch=branch,
        )
        render_claimed(claimed, as_json)


@app.command()
def claim(
    task_id: Annotated[str, typer.Argument(help="The task to claim.")],
    project: Project,
    observed_target: ObservedTarget = None,
    branch: TargetBranch = None,
    leave_expired: LeaveExpired = False,
    abandon_pending: AbandonPending = False,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Claim a named task and show what it asks for."""
    with reporting(as_json):
        claimed = open_client(state).claim(
            project=project,
            task_id=task_id,
            abandon_pending=abandon_pending,
            leave_expired=leave_expired,
            observed_target=observed_target,
            target_branch=branch,
        )
        render_claimed(claimed, as_json)


@app.command()
def show(
    task_id: Annotated[
        str | None, typer.Argument(help="The task (default: the current attempt's).")
    ] = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Show a task: outcome, acceptance criteria, repository and branch, open findings."""
    with reporting(as_json):
        brief = open_client(state).show(task_id)
        if as_json:
            print_json({"ok": True, "task": brief_task_json(brief), "brief": brief_json(brief)})
        else:
            task = brief.task
            console.print(
                f"task [bold]{task.id}[/bold] {escape(task.title)} ({task.kind}, "
                f"{task.effective_state})"
            )
            print_brief(brief)


@app.command()
def heartbeat(
    abandon_pending: AbandonPending = False, state: StatePath = None, as_json: AsJson = False
) -> None:
    """Renew the current attempt's lease."""
    with reporting(as_json):
        outcome = open_client(state).heartbeat(abandon_pending=abandon_pending)
        render_attempt(outcome, "renewed", as_json)


@app.command()
def checkpoint(
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
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Record progress on the current attempt."""
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
    """Record that a non-code task meets its acceptance criteria."""
    with reporting(as_json):
        outcome = open_client(state).accept(
            evidence=evidence, note=note, criteria_revision=criteria_revision
        )
        render_attempt(outcome, "acceptance recorded", as_json)


@app.command("reconcile-criteria")
def reconcile_criteria(
    note: Annotated[str, typer.Option(help="How the work meets the criteria as they are now.")],
    criteria_revision: Annotated[
        int | None, typer.Option(help="The revision adopted (default: the task's current).")
    ] = None,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Adopt the task's changed acceptance criteria before delivering against them."""
    with reporting(as_json):
        outcome = open_client(state).reconcile_criteria(
            note=note, criteria_revision=criteria_revision
        )
        render_attempt(outcome, "criteria reconciled", as_json)


@app.command()
def submit(
    result: Annotated[str, typer.Option(help="What was delivered.")],
    outcome: Annotated[Outcome, typer.Option(help="DELIVERED or PARTIAL.")] = Outcome.DELIVERED,
    handoff: Annotated[str, typer.Option(help="For whoever continues (PARTIAL needs it).")] = "",
    candidate_revision: Annotated[
        str | None,
        typer.Option(
            help="The commit delivered (implementation tasks; default: the registered "
            "worktree's HEAD, which must be committed)."
        ),
    ] = None,
    abandon_pending: AbandonPending = False,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Submit the current attempt's result; prints the submission and what comes next."""
    with reporting(as_json):
        done = open_client(state).submit(
            result=result,
            outcome=outcome.value,
            handoff=handoff,
            candidate_revision=candidate_revision,
            abandon_pending=abandon_pending,
        )
        render_attempt(done, "submitted", as_json)
        if not as_json:
            print_submitted(done)


@app.command()
def relinquish(
    reason: Annotated[str, typer.Option(help="Why the task goes back.")],
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """Give the current attempt's task back."""
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
    """Show the session, the current attempt, its lease, the conservative local deadline,
    and what to do next."""
    with reporting(as_json):
        client = open_client(state)
        report = client.status(refresh=refresh)
        if as_json:
            print_json({"ok": True, **status_json(report, client.state_file.path)})
        else:
            print_status(report, client.state_file.path)


@app.command()
def end(
    reason: Annotated[str, typer.Option(help="Why the session ends.")] = "",
    abandon_pending: AbandonPending = False,
    state: StatePath = None,
    as_json: AsJson = False,
) -> None:
    """End the session; its token stops working at once."""
    with reporting(as_json):
        ended = open_client(state).end(reason=reason, abandon_pending=abandon_pending)
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


# --- rendering: `hub.cli.agent_render`, with this module's clock ------------------------


def deadline_json(record: AttemptRecord) -> dict[str, Any]:
    return agent_render.deadline_json(record, clock.wall())


def render_attempt(
    outcome: AttemptOutcome, verb: str, as_json: bool, extra: dict[str, Any] | None = None
) -> None:
    agent_render.render_attempt(outcome, verb, as_json, clock.wall(), extra)


def print_lease(record: AttemptRecord) -> None:
    agent_render.print_lease(record, clock.wall())


def render_claimed(claimed: Claimed, as_json: bool, *, verb: str = "claimed") -> None:
    agent_render.render_claimed(claimed, as_json, clock.wall(), verb=verb)


# The other command groups live in their own modules and use the helpers above.
from hub.cli.agent_integrate import integrate_app  # noqa: E402
from hub.cli.agent_review import review_app  # noqa: E402
from hub.cli.agent_work import job_app, recover, resources_app, worktree_app  # noqa: E402

app.add_typer(review_app, name="review")
app.add_typer(integrate_app, name="integrate")
app.add_typer(worktree_app, name="worktree")
app.add_typer(job_app, name="job")
app.add_typer(resources_app, name="resources")
app.command()(recover)
