"""Fixtures for the agent client: the `hub agent` command line against a real server.

`agent_cli("next", "--project", p)` runs `hub agent next --project p --state <tmp>` in
process with typer's CliRunner; `.json(...)` adds `--json` and parses stdout. The server,
its database (both backends) and its manual clock are the shared fixtures of
tests/conftest.py; only the client's network and clock are ever simulated.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import Result
from typer.testing import CliRunner

from hub.cli.agent import options as agent_cli_module
from hub.cli.main import app
from tests.conftest import Principal
from tests.support.git import Remote, commit, make_remote
from tests.support.work import add_repository, create_project, new_task


@dataclass
class AgentCli:
    state: Path
    runner: CliRunner = field(default_factory=CliRunner)

    def __call__(self, *args: str, exit_code: int = 0) -> Result:
        result = self.runner.invoke(
            app, ["agent", *args, "--state", str(self.state)], catch_exceptions=False
        )
        assert result.exit_code == exit_code, (result.stdout, result.stderr)
        return result

    def json(self, *args: str, exit_code: int = 0) -> dict[str, Any]:
        result = self(*args, "--json", exit_code=exit_code)
        lines = result.stdout.strip().splitlines()
        assert len(lines) == 1, result.stdout  # exactly one JSON object for agents
        value: dict[str, Any] = json.loads(lines[0])
        assert value["ok"] is (exit_code == 0), value
        return value

    def stored(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.state.read_text())
        return value


@pytest.fixture
def agent_cli(tmp_path: Path) -> AgentCli:
    return AgentCli(tmp_path / "hub" / "agent-state.json")


@pytest.fixture
def agent_token(make_principal: Callable[..., Principal]) -> str:
    """A personal token of a new agent principal."""
    return make_principal(kind="agent").token


@pytest.fixture
def project(operator: Principal) -> str:
    return create_project(operator.api, "Client project")


@dataclass
class CodeProject:
    """A project with one repository, bound to a real remote in a temporary directory."""

    id: str
    repository: str
    remote: Remote


@pytest.fixture
def code_project(operator: Principal, tmp_path: Path) -> CodeProject:
    remote = make_remote(tmp_path / "remote")
    project = create_project(operator.api, "Code project")
    return CodeProject(project, add_repository(operator.api, project, remote.url), remote)


@pytest.fixture
def general_task(operator: Principal, project: str) -> str:
    return new_task(operator.api, project, kind="GENERAL", title="write the release notes")


@pytest.fixture
def started(agent_cli: AgentCli, server: str, agent_token: str) -> dict[str, Any]:
    """`hub agent start` done: the session as printed."""
    return agent_cli.json(
        "start",
        "--server", server,
        "--token", agent_token,
        "--workstation", "ws-test",
        "--harness", "pytest",
        "--instance", "run-1",
    )  # fmt: skip


@pytest.fixture
def cli_agent(
    tmp_path: Path, server: str, make_principal: Callable[..., Principal]
) -> Callable[[str], AgentCli]:
    """`cli_agent("reviewer")`: a new agent principal's `hub agent`, with its own state
    file and a started session."""

    def make(name: str) -> AgentCli:
        cli = AgentCli(tmp_path / name / "agent-state.json")
        cli.json(
            "start",
            "--server", server,
            "--token", make_principal(kind="agent").token,
            "--workstation", f"ws-{name}",
            "--harness", "pytest",
            "--instance", name,
        )  # fmt: skip
        return cli

    return make


class ShiftedClock:
    """This workstation's clocks, moved forward by `offset`: no test sleeps."""

    def __init__(self) -> None:
        self.offset = timedelta()

    def wall(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def monotonic(self) -> float:
        return time.monotonic() + self.offset.total_seconds()


@pytest.fixture
def local_clock(monkeypatch: pytest.MonkeyPatch) -> ShiftedClock:
    clock = ShiftedClock()
    monkeypatch.setattr(agent_cli_module, "clock", clock)
    return clock


class LoseResponses(httpx.BaseTransport):
    """Delivers requests to the real server, then loses the answer of chosen ones.

    The server has processed the request and committed; only the client never hears
    back, exactly like a read timeout on a flaky network.
    """

    def __init__(self, operation: str, times: int = 1) -> None:
        self.inner = httpx.HTTPTransport()
        self.operation = operation
        self.remaining = times
        self.sent: list[dict[str, Any]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.sent.append(body)
        response = self.inner.handle_request(request)
        if self.remaining > 0 and f"{self.operation}(input:" in body["query"]:
            self.remaining -= 1
            response.read()
            response.close()
            raise httpx.ReadTimeout("simulated: the answer was lost", request=request)
        return response

    def inputs(self, operation: str) -> list[dict[str, Any]]:
        return [b["variables"]["input"] for b in self.sent if f"{operation}(input:" in b["query"]]

    def keys(self, operation: str) -> list[str]:
        return [sent["idempotencyKey"] for sent in self.inputs(operation)]

    def pending_is_sent(self, stored: dict[str, Any], operation: str) -> bool:
        """The state file's pending record is the request last sent: its input, its key."""
        pending = stored["pending"][operation]
        sent: dict[str, Any] = self.inputs(operation)[-1]
        return {**pending["arguments"], "idempotencyKey": pending["key"]} == sent

    def close(self) -> None:
        """Each command's client closes its transport; this one outlives commands."""


@pytest.fixture
def lose(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., LoseResponses]]:
    """`lose("claimTask")`: the next claimTask answer never reaches the client."""
    made: list[LoseResponses] = []

    def install(operation: str, times: int = 1) -> LoseResponses:
        transport = LoseResponses(operation, times)
        made.append(transport)
        monkeypatch.setattr(agent_cli_module, "transport", transport)
        return transport

    yield install
    for transport in made:
        transport.inner.close()


def deliver_from(
    cli: AgentCli, checkout: Path, project: str, task: str, name: str = "change.py"
) -> str:
    """From the checkout (the current directory): claim the task, register the checkout,
    commit a change and submit it; returns the candidate revision."""
    cli.json("claim", task, "--project", project)
    cli.json("worktree", "register")
    candidate = commit(checkout, name, f"# {task}\n")
    submitted = cli.json("submit", "--result", f"delivered {task}", "--handoff", "ready")
    assert submitted["submission"]["candidateRevision"] == candidate
    return candidate
