"""How `hub agent mcp` was started: read before anything else is imported.

It names the state file but opens nothing: the agent client (and what it imports) is
loaded at the first tool call, so that the harness's `initialize` and `tools/list` are
answered from the SDK and a JSON file alone (`hub.mcp.stdio`).
"""

from __future__ import annotations

import socket
import uuid
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Launch:
    """The hub sessions are opened on, with which token, the harness served, the
    agent's checkout, and the state file (None: the agent client's default)."""

    server: str | None = None
    token: str | None = None
    harness: str = "mcp"
    instance: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    workstation: str = field(default_factory=socket.gethostname)
    workdir: Path = field(default_factory=Path.cwd)
    state: Path | None = None
