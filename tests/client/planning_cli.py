"""`hub task …` and `hub project …` run in process against the real server.

`HubCli(server, token=…)` is a person or an agent at a terminal with HUB_TOKEN set;
`HubCli(server, state=…)` an agent whose only credential is its `hub agent` state
file. Every run checks that no token it could have used appears in its output.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from click.testing import Result
from typer.testing import CliRunner

from hub.cli.main import app

# Nothing from the environment of the test run leaks in.
CLEAN_ENV: dict[str, str | None] = {"HUB_TOKEN": None, "HUB_SERVER": None, "HUB_AGENT_STATE": None}


@dataclass
class HubCli:
    server: str | None
    state: Path
    token: str | None = None
    secrets: list[str] = field(default_factory=list)
    runner: CliRunner = field(default_factory=CliRunner)

    def __call__(self, *args: str, exit_code: int = 0) -> Result:
        env = dict(CLEAN_ENV)
        if self.token is not None:
            env["HUB_TOKEN"] = self.token
        if self.server is not None:
            env["HUB_SERVER"] = self.server
        result = self.runner.invoke(
            app, [*args, "--agent-state", str(self.state)], env=env, catch_exceptions=False
        )
        assert result.exit_code == exit_code, (result.stdout, result.stderr)
        for secret in [*self.secrets, *([self.token] if self.token else [])]:
            assert secret not in result.stdout + result.stderr, "a token was printed"
        return result

    def json(self, *args: str, exit_code: int = 0) -> dict[str, Any]:
        result = self(*args, "--json", exit_code=exit_code)
        lines = result.stdout.strip().splitlines()
        assert len(lines) == 1, result.stdout  # exactly one JSON object
        value: dict[str, Any] = json.loads(lines[0])
        assert value["ok"] is (exit_code == 0), value
        if exit_code:
            assert value["exitCode"] == exit_code
        return value
