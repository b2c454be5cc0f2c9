"""`hub agent hook EVENT` as a harness runs it, fed with the recorded payloads of
tests/fixtures/hooks (their README says where each format comes from)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import Result

from hub.cli.main import app
from tests.client.conftest import AgentCli
from tests.support.client import Api

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hooks"
HARNESS = {"notify": "codex"}  # every other event is Claude Code's


def recorded(event: str, **changes: Any) -> str:
    """The recorded payload of `event`, with `changes` made to its fields."""
    path = FIXTURES / HARNESS.get(event, "claude-code") / f"{event}.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return json.dumps({**data, **changes})


@dataclass
class Hook:
    """The harness's side: run a hook on the agent's state file, as the harness would."""

    cli: AgentCli

    def __call__(
        self, event: str, *args: str, stdin: str | None = None, argument: str | None = None
    ) -> Result:
        argv = ["agent", "hook", event, *args, "--state", str(self.cli.state)]
        if argument is not None:
            argv.append(argument)  # Codex appends its payload after the configured words
        result = self.cli.runner.invoke(app, argv, input=stdin, catch_exceptions=False)
        assert result.exit_code == 0, (result.stdout, result.stderr)  # never stops a turn
        return result

    def log(self) -> list[str]:
        path = self.cli.state.with_name("hooks.log")
        return path.read_text(encoding="utf-8").splitlines() if path.exists() else []

    def session_api(self, server: str) -> Api:
        """The API as the state file's session sees it."""
        return Api(server, self.cli.stored()["session"]["token"])


def last_event(api: Api) -> str | None:
    event: str | None = api("{ viewer { session { lastAdapterEvent } } }")["viewer"]["session"][
        "lastAdapterEvent"
    ]
    return event


def words(text: str) -> str:
    """Printed text with its line wrapping undone."""
    return " ".join(text.split())
