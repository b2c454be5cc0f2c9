"""How `hub agent` commands report: one JSON object on stdout with `--json` (for
agents), rich text otherwise; a client error becomes its output and exit status in one
place (`reporting`). Messages name `hub agent` commands, never the API's operations
(`hub.client.advice`). Times that depend on this workstation's clock are read from
`hub.cli.agent.options.now()` when a command renders.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import typer
from rich.markup import escape

from hub.cli.agent import options
from hub.cli.agent.briefs import brief_json, print_brief
from hub.cli.output import console, errors, exit_code, print_json
from hub.client.advice import cli_message
from hub.client.agent import AttemptOutcome, Claimed, standing
from hub.client.deadline import has_passed, seconds_left
from hub.client.errors import ClientError, NothingToClaim, ProblemError, TransportFailure
from hub.client.state import AttemptRecord


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


def attempt_json(record: AttemptRecord | None) -> dict[str, Any] | None:
    """The attempt as re-read after a change made under it."""
    if record is None:
        return None
    return {
        "id": record.id,
        "taskId": record.task_id,
        "generation": record.generation,
        "state": record.state,
        "isCurrent": record.is_current,
    }


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
    outcome: AttemptOutcome, verb: str, as_json: bool, extra: dict[str, Any] | None = None
) -> None:
    result, record = outcome.result, outcome.record
    if as_json:
        payload = {k: v for k, v in result.raw.items() if k != "__typename"}
        print_json({"ok": True, **payload, **deadline_json(record, options.now()), **(extra or {})})
        return
    task, attempt = result.task, result.attempt
    replay = " [dim](a replay of the earlier request)[/dim]" if result.replay else ""
    console.print(
        f"{verb}: task [bold]{task.id}[/bold] {escape(task.title)} ({task.state}), "
        f"attempt {attempt.id} generation {attempt.generation} {attempt.state}{replay}"
    )
    print_lease(record)


def print_lease(record: AttemptRecord) -> None:
    now = options.now()
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


def render_claimed(claimed: Claimed, as_json: bool, *, verb: str = "claimed") -> None:
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
        render_attempt(outcome, verb, as_json, extra=extra)
        return
    if claimed.left_expired is not None:
        left = claimed.left_expired
        errors.print(
            f"[yellow]left expired attempt {left.id}[/yellow]: task {left.task_id} stays a "
            f"recovery candidate (`hub agent recover {left.task_id}` takes it back)"
        )
    render_attempt(outcome, verb, as_json)
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
                f'{record.worktree_branch}): commit, then `hub agent submit --result "…"`'
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
