"""The `hub` command's entry point: `hub agent mcp` straight to its command, everything
else through the whole command line (`hub.cli.main`).

A harness starts `hub agent mcp` at every session: it imports only the agent client, the
MCP SDK and its one command, not the modules the rest of the command line needs (the
server's, the other commands'), so the harness's first `tools/list` is answered sooner
(bench/mcp.py measures it). Its options are declared once, on its typer command.
"""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:3] == ["agent", "mcp"]:
        from hub.cli.mcp import app as mcp

        mcp(args=sys.argv[3:], prog_name="hub agent mcp")
        return
    from hub.cli.main import app

    app()
