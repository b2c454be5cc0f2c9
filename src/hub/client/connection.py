"""Which server a `hub task|project …` command talks to, and with which credential.

`Connection.resolve` decides (see its docstring); the credential is never printed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from hub.client.errors import StateError, UsageError
from hub.client.state import StateFile, default_state_path

DEFAULT_SERVER = "http://127.0.0.1:8000"

CredentialSource = Literal["option", "state-file"]


@dataclass(frozen=True)
class Connection:
    """The server a command talks to and the bearer token it presents (never shown)."""

    server: str
    token: str
    source: CredentialSource
    state_file: Path | None = None

    @classmethod
    def resolve(
        cls, *, server: str | None, token: str | None, state: Path | None = None
    ) -> Connection:
        """Pick the server and credential, in this order:

        1. `--token` (or `HUB_TOKEN`): a personal token (`hub_pat_…`, a person's or an
           agent's workstation credential) or any other bearer token, sent to `--server`
           (or `HUB_SERVER`), else to the agent state file's server, else to
           http://127.0.0.1:8000;
        2. otherwise the session token of the `hub agent` state file (`--agent-state`,
           `HUB_AGENT_STATE`, default ~/.config/hub/agent-state.json), sent only to the
           server that session was opened on: naming another server is refused, so a
           session token never travels to a server that did not issue it.
        """
        if server is not None and not server.startswith(("http://", "https://")):
            raise UsageError(f"--server must be an http:// or https:// URL, not {server!r}")
        path = state or default_state_path()
        if token is not None:
            stored = None
            if server is None:
                try:
                    stored = StateFile(path).read().server
                except StateError:
                    stored = None  # a token was given: the state file is not needed
            return cls(server or stored or DEFAULT_SERVER, token, "option")
        agent_state = StateFile(path).read()
        if agent_state.session is None or agent_state.server is None:
            raise UsageError(
                "no credential: set HUB_TOKEN (or pass --token) to a personal token "
                "(hub_pat_…; an operator makes one with `hub token create NAME`), or open an "
                f"agent session with `hub agent start` (no session in {path})"
            )
        if server is not None and server.rstrip("/") != agent_state.server.rstrip("/"):
            raise UsageError(
                f"the agent session in {path} was opened on {agent_state.server}, not "
                f"{server}: its token is not sent elsewhere; pass --token (or HUB_TOKEN) "
                "for that server"
            )
        return cls(agent_state.server, agent_state.session.token, "state-file", path)
