"""The options `hub agent` commands share, and how a command opens its client.

The seams tests plug into are here: the HTTP transport, and this workstation's clocks
(`now()` is read at the moment a command renders, so a test may move it).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated

import httpx
import typer

from hub.client.agent import AgentClient
from hub.client.deadline import LocalClock, SystemLocalClock
from hub.client.state import STATE_ENV, StateFile, default_state_path

transport: httpx.BaseTransport | None = None
clock: LocalClock = SystemLocalClock()


def open_client(state: Path | None) -> AgentClient:
    return AgentClient(StateFile(state or default_state_path()), transport=transport, clock=clock)


def now() -> datetime:
    """This workstation's wall clock, as the local deadline is counted."""
    return clock.wall()


StatePath = Annotated[
    Path | None,
    typer.Option(
        "--state",
        envvar=STATE_ENV,
        help="The agent state file (default ~/.config/hub/agent-state.json).",
        show_default=False,
    ),
]
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
