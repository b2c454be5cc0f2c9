"""`hub agent hook EVENT` (run by the harness) and `hub agent hooks install|uninstall`
(run by you, once): the harness tells hub what happened to the agent's session.

`hook` always exits 0 and prints nothing but, at SessionStart, the context the harness
adds to the conversation: what this session holds on hub, the requests still
unresolved, and the project's orientation (its rules, and apart from them the lessons
suggested). What it did, or why it did nothing, is one line of `hooks.log` beside the
state file (`hub.client.hooks`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from hub.cli.agent import options
from hub.cli.agent.options import StatePath
from hub.cli.agent.output import reporting
from hub.cli.output import console, errors, print_json
from hub.client.adapter import Resumed, lease_words
from hub.client.advice import command_for
from hub.client.agent import AgentClient, standing
from hub.client.errors import ClientError
from hub.client.harness_settings import HookCommand, SettingsChange, install, uninstall
from hub.client.hooks import (
    DEFAULT_BUDGET_SECONDS,
    HOOK_EVENTS,
    MINIMUM_BUDGET_SECONDS,
    Harness,
    HookLog,
    HookRun,
    hook_event,
    remedy,
    run_hook,
    within,
)
from hub.client.knowledge import Orientation
from hub.client.state import PendingOperation, StateFile, default_state_path

app = typer.Typer()
hooks_app = typer.Typer(
    help="Put hub's hooks into a harness's settings (beside your own), or take them out.",
    no_args_is_help=True,
)

Budget = Annotated[
    float,
    typer.Option(
        "--budget",
        help="Seconds the hook may take in all (at least 0.5); past them it gives up, logs "
        "why, exits 0.",
    ),
]
Project = Annotated[
    str | None,
    typer.Option(
        "--project",
        "-p",
        help="SessionStart: the project to orient in while no attempt is held (an id, "
        "alias or repository remote).",
    ),
]
Relinquish = Annotated[
    bool,
    typer.Option(
        "--relinquish",
        help="SessionEnd: give the attempt back (RELINQUISHED) instead of reporting a "
        "disconnection; not while a request is pending.",
    ),
]


@app.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
def hook(
    event: Annotated[
        str,
        typer.Argument(
            help=f"One of {', '.join(e.word for e in HOOK_EVENTS)}.", show_default=False
        ),
    ],
    payload: Annotated[
        str | None,
        typer.Argument(
            help="The payload as an argument (Codex's notify); default: standard input.",
            show_default=False,
        ),
    ] = None,
    project: Project = None,
    relinquish: Relinquish = False,
    budget: Budget = DEFAULT_BUDGET_SECONDS,
    state: StatePath = None,
) -> None:
    """Run by the harness: tell hub what happened (always exits 0; see hooks.log)."""
    path = state or default_state_path()
    log = HookLog(path)
    # Clamped rather than refused: a usage error's exit 2 would block Claude Code's turn.
    budget = max(budget, MINIMUM_BUDGET_SECONDS)
    try:
        which = hook_event(event)
    except ClientError as error:
        errors.print(f"hub agent hook: {escape(error.message)}", highlight=False)
        log.write(options.now(), f"hook {event!r}", f"nothing sent: {error.message}")
        return
    # The HTTP timeout is the budget too: no single request outlives the hook.
    client = AgentClient(
        StateFile(path), transport=options.transport, clock=options.clock, timeout=budget
    )

    def read() -> str:
        if payload is not None:
            return payload
        return "" if sys.stdin.isatty() else sys.stdin.read()

    def work() -> HookRun:
        run = run_hook(client, which, read, project=project, relinquish=relinquish)
        if which.word == "session-start" and run.skipped is None:
            run.context = session_start_context(run, client)
        return run

    try:
        run = within(budget, work)
    except ClientError as error:
        log.write(options.now(), which, f"{error.code}: {error.message}")
        return
    except Exception as exc:
        # A fault of the hook's own must not stop the agent's turn either.
        log.write(options.now(), which, f"failed: {type(exc).__name__}: {exc}")
        return
    log.write(options.now(), which, run.summary())
    if run.context:
        sys.stdout.write(run.context)


# --- the context SessionStart adds -------------------------------------------------------


def session_start_context(run: HookRun, client: AgentClient) -> str:
    """What the agent should know on (re)starting, in plain words for its conversation."""
    state = client.state_file.read()
    session = state.session
    source = run.payload.said.get("source") if run.payload else None
    lines = [
        f"hub: this agent works under hub session {session.id if session else '-'} "
        f"(state file {client.state_file.path}). Hub is told the harness started "
        f"(SessionStart{f', source {source}' if source else ''}); a start never claims work.",
    ]
    for name, error in run.failures:
        lines.append(f"- {name} failed: {error.code}: {remedy(error)}")
    resumed = run.resumed
    if resumed is not None:
        lines += _holdings(resumed)
    elif state.attempt is not None:
        attempt = state.attempt
        lines.append(
            f"The state file's attempt (not confirmed with hub): {attempt.id} on task "
            f"{attempt.task_id}, {attempt.state}. `hub agent status --refresh` asks hub."
        )
    lines += _pending(state.pending.values())
    if run.orientation is not None:
        lines += _orientation(run.orientation)
    elif run.no_project:
        lines.append(
            "No orientation: no attempt is held and no project was named (`hub agent orient "
            "--project P` shows a project's rules; `hub agent hooks install --project P` "
            "makes this hook show them)."
        )
    return "\n".join(lines) + "\n"


def _holdings(resumed: Resumed) -> list[str]:
    """What hub says the session holds, beside what the state file says."""
    server_time = resumed.answer.server_time
    record = resumed.attempt
    lines = ["", "What this session holds on hub, now:"]
    held = [a for a in resumed.answer.attempts if record is not None and a.id == record.id]
    for attempt in held:
        lines.append(
            f"- attempt {attempt.id} ({attempt.kind}, generation {attempt.generation}) on "
            f"task {attempt.task_id}: {lease_words(attempt, server_time)}."
        )
    # Work is claimed once what was sent earlier has an answer.
    first = "resolve the unresolved requests below first" if resumed.pending else None
    if not resumed.answer.attempts:
        claim = "claim work with `hub agent next --project P` when you are ready"
        lines.append(f"- nothing: {first or claim}.")
    if resumed.reread and record is not None:
        where = standing(record, options.now(), refreshed=True)
        lines.append(
            f"The state file's attempt {record.id} on task {record.task_id} is no longer held "
            f"by this session ({record.state}): {first or where.advice or 'nothing to do'}."
        )
    if held:
        lines.append("`hub agent show` prints the task's brief again.")
    if record is not None and record.worktree_path:
        lines.append(
            f"Its worktree: {record.worktree_path} on branch {record.worktree_branch}; hub "
            "never moves it."
        )
    for other in resumed.unknown:
        lines.append(
            f"- attempt {other.id} on task {other.task_id} is this session's on hub but not "
            f"in the state file: {lease_words(other, server_time)}. An unresolved claim below "
            "is likely its origin; otherwise it becomes a recovery candidate when its lease "
            "expires."
        )
    return lines


def _pending(pending: Iterable[PendingOperation]) -> list[str]:
    ops = list(pending)
    if not ops:
        return []
    lines = [
        "",
        "Unresolved requests (their answers were lost): rerun each command with the same "
        "arguments to learn its outcome; its retry reuses the recorded key, so it cannot "
        "apply twice. Until then leave the checkout as it is (no pull, rebase or reset): "
        "the retry must send what was sent.",
    ]
    for op in ops:
        arguments = ", ".join(f"{k}={v!r}" for k, v in sorted(op.arguments.items()))
        lines.append(f"- `{command_for(op.operation)}` ({op.operation}): {arguments}")
    return lines


def _orientation(oriented: Orientation) -> list[str]:
    lines = ["", f"Rules of project {oriented.project_id}, binding:"]
    for item in oriented.rules:
        rule = item.rule
        scope = [*rule.paths, *rule.components]
        where = f" (applies to {', '.join(scope)})" if scope else ""
        retired = " [retired]" if rule.retired else ""
        lines.append(f"- {rule.topic} v{rule.version}{retired}: {rule.text}{where}")
    if not oriented.rules:
        lines.append("- none")
    lines += ["", "Lessons suggested for the task: advice, not rules:"]
    for hit in oriented.suggested_lessons:
        lesson = hit.lesson
        marks = " [disputed]" if lesson.disputed or hit.open_disputes else ""
        lines.append(f"- {lesson.id} v{lesson.version}{marks}: {lesson.statement}")
    if not oriented.suggested_lessons:
        lines.append("- none")
    if oriented.conflicts:
        lines += ["", "Where your local instructions and the rules disagree (both stand):"]
        for conflict in oriented.conflicts:
            lines.append(
                f"- {conflict.key}: rule {conflict.rule.topic} v{conflict.rule.version} says "
                f"{conflict.rule_text!r}; {conflict.file} line {conflict.line} says "
                f"{conflict.local_text!r}"
            )
    return lines


# --- install and uninstall ------------------------------------------------------------

HarnessOption = Annotated[
    Harness, typer.Option("--harness", help="The harness whose settings get hub's hooks.")
]
ProjectDir = Annotated[
    Path | None,
    typer.Option(
        "--project-dir",
        help="A project's settings (.claude/settings.json, .codex/config.toml) instead of "
        "your own.",
        show_default=False,
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")]


@hooks_app.command("install")
def install_hooks(
    harness: HarnessOption,
    project_dir: ProjectDir = None,
    project: Project = None,
    relinquish_on_end: Annotated[
        bool, typer.Option(help="SessionEnd gives the attempt back instead of disconnecting.")
    ] = False,
    budget: Budget = DEFAULT_BUDGET_SECONDS,
    hub: Annotated[str, typer.Option("--hub", help="How the harness runs hub.")] = "hub",
    force: Annotated[
        bool, typer.Option(help="Codex: replace a notify program that is not hub's.")
    ] = False,
    state: Annotated[
        Path | None,
        typer.Option(
            "--state",
            help="The state file the hooks use (default: theirs, ~/.config/hub/"
            "agent-state.json or HUB_AGENT_STATE when they run).",
            show_default=False,
        ),
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Merge hub's hooks into the harness's settings; your own hooks stay. Idempotent."""
    command = HookCommand(
        hub=hub,
        state=state.expanduser().resolve() if state else None,
        project=project,
        relinquish_on_end=relinquish_on_end,
        budget=budget,
    )
    with reporting(as_json):
        change = install(harness, command, project_dir=project_dir, force=force)
    _report(change, "installed", as_json)


@hooks_app.command("uninstall")
def uninstall_hooks(
    harness: HarnessOption, project_dir: ProjectDir = None, as_json: AsJson = False
) -> None:
    """Take hub's hooks out of the harness's settings; nothing else changes."""
    with reporting(as_json):
        change = uninstall(harness, project_dir=project_dir)
    _report(change, "removed", as_json)


def _report(change: SettingsChange, verb: str, as_json: bool) -> None:
    if as_json:
        print_json(
            {
                "ok": True,
                "settings": str(change.path),
                "changed": change.changed,
                "events": list(change.events),
                "replaced": change.replaced,
            }
        )
        return
    events = ", ".join(change.events) or "none"
    if change.changed:
        console.print(f"{verb} hub's hooks in {change.path} ({events})")
    else:
        console.print(f"{change.path}: nothing to change (hub's hooks: {events})")
    if change.replaced:
        errors.print(f"[yellow]replaced notify program[/yellow] {change.replaced}")
