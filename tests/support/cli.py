"""Running the `hub` command line in-process against a test database."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from hub.cli.main import app


@dataclass
class HubCli:
    """`cli("token", "list", "alice")` runs `hub token list alice` and checks the exit code."""

    runner: CliRunner = field(default_factory=CliRunner)

    def __call__(self, *args: str, exit_code: int = 0) -> Result:
        result = self.runner.invoke(app, list(args), catch_exceptions=False)
        assert result.exit_code == exit_code, (result.stdout, result.stderr)
        return result


def hub_cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, database_url: str) -> HubCli:
    """The CLI configured the way an operator would: `HUB_*` in the environment."""
    workdir = tmp_path / "cli"
    workdir.mkdir(exist_ok=True)
    monkeypatch.chdir(workdir)  # no stray .env from the repository
    monkeypatch.setenv("HUB_DATABASE_URL", database_url)
    monkeypatch.setenv("HUB_VAR_DIR", str(workdir / "var"))
    return HubCli()
