"""`hub agent mcp`: the agent's verbs as MCP tools, served over stdio to the harness.

Configure it once in the harness (docs/agent-mcp.md): the harness starts it, and the
model calls `startSession`, `claimTask`, `recordCheckpoint`, `submitAttempt`… as tools.
It keeps its state in the same state file as `hub agent` commands (so both may be used
on one session), and logs to `mcp.log` beside it: stdout is the protocol's. It sits
outside `hub.cli.agent` so that the harness's start imports only what it runs
(`hub.cli.entry`).
"""

from __future__ import annotations

import os
import socket
import uuid
from pathlib import Path
from typing import Annotated

import typer

# The agent client's state file variable (`hub.client.state.STATE_ENV`), said here so
# that the harness's start imports no client module (tests/verbs/test_tool_list.py
# keeps the two equal).
STATE_ENV = "HUB_AGENT_STATE"

app = typer.Typer()


@app.command()
def mcp(
    server: Annotated[
        str | None,
        typer.Option(envvar="HUB_SERVER", help="Base URL of the hub the sessions open on."),
    ] = None,
    harness: Annotated[
        str, typer.Option(help="The agent harness that starts this server, e.g. claude-code.")
    ] = "mcp",
    instance: Annotated[
        str | None, typer.Option(help="Id of this harness run (default: a new one).")
    ] = None,
    workdir: Annotated[
        Path | None,
        typer.Option(help="The agent's checkout (default: the directory it was started in)."),
    ] = None,
    state: Annotated[
        Path | None,
        typer.Option(
            "--state",
            envvar=STATE_ENV,
            help="The agent state file, shared with `hub agent` commands (default "
            "~/.config/hub/agent-state.json).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve the agent's verbs as MCP tools over stdio (run by the harness, not by you).

    The token that opens sessions is read from HUB_TOKEN (never from the command line,
    which other users of the machine can see)."""
    from hub.mcp.launch import Launch
    from hub.mcp.stdio import serve

    launch = Launch(
        server=server,
        token=os.environ.get("HUB_TOKEN") or None,
        harness=harness,
        instance=instance or uuid.uuid4().hex[:12],
        workstation=socket.gethostname(),
        workdir=(workdir or Path.cwd()).resolve(),
        state=state,
    )
    serve(launch)
