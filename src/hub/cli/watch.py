"""`hub agent watch --pid PID --until ISO`: the renewal helper for a declared long wait.

The active agent declares the action and a deadline; the helper opens the
watch window with the agent's session token, then renews the lease at the heartbeat
interval with the window's narrowly scoped reporter token, and exits on the first of:
the harness process (`--pid`) has exited, authority is lost (the server refuses the
renewal or the token), or the window has ended. It never renews past the window (the
server caps that too) and it closes the window on the way out, revoking the token.

Exit codes follow `hub agent`: 0 the harness exited or the window ended, 1 authority
lost or the server refused, 2 no session or attempt in the state file, 3 transport.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, ClassVar

import typer

from hub.client.api import HubApi
from hub.client.errors import ClientError, ServerAnswered, TransportFailure
from hub.client.operations import Mutation
from hub.client.results import Ref
from hub.client.state import STATE_ENV, StateFile, default_state_path, new_idempotency_key


@dataclass(frozen=True)
class Window:
    id: str
    ends_at: datetime


@dataclass(frozen=True)
class WindowOpened:
    graphql_type: ClassVar[str] = "OpenWatchWindowPayload"

    reporter_token: str
    window: Window


@dataclass(frozen=True)
class WindowClosed:
    graphql_type: ClassVar[str] = "WatchWindowPayload"

    window: Ref


@dataclass(frozen=True)
class LeaseExpiry:
    expires_at: datetime


@dataclass(frozen=True)
class LeaseRenewed:
    """renewLease as the helper sends it: only the new expiry is asked for."""

    graphql_type: ClassVar[str] = "AttemptPayload"

    lease: LeaseExpiry


@dataclass(frozen=True)
class WatchTarget:
    server: str
    session_token: str
    attempt_id: str
    generation: int
    heartbeat_seconds: int


@dataclass(frozen=True)
class WatchEnded:
    reason: str  # HARNESS_EXITED | WINDOW_ENDED | AUTHORITY_LOST
    renewals: int
    window_id: str | None
    detail: str = ""

    @property
    def exit_code(self) -> int:
        return 1 if self.reason == "AUTHORITY_LOST" else 0


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, owned by someone else
    return True


def run_watch(
    target: WatchTarget,
    *,
    pid: int,
    until: datetime,
    action: str,
    alive: Callable[[int], bool] = process_alive,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    sleep: Callable[[float], None] = time.sleep,
) -> WatchEnded:
    """Open the window, renew until a stop condition, close the window."""
    with HubApi(target.server, target.session_token) as session:
        opened = session.send(
            Mutation(
                "openWatchWindow",
                {
                    "attemptId": target.attempt_id,
                    "generation": target.generation,
                    "action": action,
                    "deadline": until.isoformat(),
                },
                WindowOpened,
            )
        )
    window_id = opened.window.id
    renew = Mutation(
        "renewLease",
        {"attemptId": target.attempt_id, "generation": target.generation},
        LeaseRenewed,
    )
    renewals = 0
    with HubApi(target.server, opened.reporter_token) as reporter:
        try:
            while True:
                if not alive(pid):
                    return WatchEnded("HARNESS_EXITED", renewals, window_id)
                left = (until - now()).total_seconds()
                if left <= 0:
                    return WatchEnded("WINDOW_ENDED", renewals, window_id)
                try:
                    reporter.send(renew, new_idempotency_key())
                except ServerAnswered as refused:
                    # Expired, superseded, revoked: stop at once, never retry authority.
                    return WatchEnded("AUTHORITY_LOST", renewals, window_id, refused.message)
                renewals += 1
                sleep(min(float(target.heartbeat_seconds), max(left, 0.0)))
        finally:
            # Best effort: the token expires at the deadline in any case.
            with suppress(ClientError):
                reporter.send(
                    Mutation(
                        "closeWatchWindow",
                        {"windowId": window_id, "reason": "watch helper exited"},
                        WindowClosed,
                    )
                )


def watch(
    pid: Annotated[int, typer.Option("--pid", help="The harness process to watch.")],
    until: Annotated[
        str,
        typer.Option(
            "--until", help="The window's deadline, ISO 8601 with offset (e.g. 2026-01-01T13:00Z)."
        ),
    ],
    action: Annotated[str, typer.Option("--action", help="What is being watched.")] = (
        "long-running job"
    ),
    state: Annotated[
        Path | None,
        typer.Option("--state", envvar=STATE_ENV, help="The agent state file.", show_default=False),
    ] = None,
) -> None:
    """Renew the current attempt's lease while PID runs, until --until (a watch window)."""
    try:
        deadline = datetime.fromisoformat(until)
    except ValueError:
        raise typer.BadParameter("--until must be an ISO 8601 time") from None
    if deadline.tzinfo is None:
        raise typer.BadParameter("--until must include a UTC offset")
    current = StateFile(state or default_state_path()).read()
    if current.server is None or current.session is None or current.attempt is None:
        typer.echo(
            "no session and current attempt in the state file: claim one first (`hub agent next`)",
            err=True,
        )
        raise typer.Exit(2)
    target = WatchTarget(
        server=current.server,
        session_token=current.session.token,
        attempt_id=current.attempt.id,
        generation=current.attempt.generation,
        heartbeat_seconds=current.attempt.heartbeat_seconds,
    )
    try:
        ended = run_watch(target, pid=pid, until=deadline, action=action)
    except TransportFailure as failure:
        typer.echo(f"{failure.code}: {failure.message}", err=True)
        raise typer.Exit(3) from None
    except ClientError as error:
        typer.echo(f"{error.code}: {error.message}", err=True)
        raise typer.Exit(1) from None
    typer.echo(
        json.dumps(
            {
                "reason": ended.reason,
                "renewals": ended.renewals,
                "windowId": ended.window_id,
                "detail": ended.detail,
            }
        )
    )
    raise typer.Exit(ended.exit_code)
