"""`hub agent mcp` driven by the MCP SDK's own client over stdio, against a real server.

Each agent is its own `hub agent mcp` process (the installed `hub` command) with its own
state file, started the way a harness starts it: HUB_SERVER and HUB_TOKEN in its
environment. Each scenario is one async function run with `anyio.run`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.conftest import Principal

HUB = str(Path(sys.executable).with_name("hub"))


@dataclass
class Tools:
    """One MCP session with `hub agent mcp`: `await tools.call("claimTask", projectId=…)`."""

    session: ClientSession

    async def result(self, name: str, **arguments: Any) -> types.CallToolResult:
        return await self.session.call_tool(name, arguments)

    async def call(self, name: str, **arguments: Any) -> dict[str, Any]:
        """A call that must succeed: its structured answer."""
        result = await self.result(name, **arguments)
        assert not result.is_error, _text(result)
        answer: dict[str, Any] = result.structured_content or {}
        assert answer == json.loads(_text(result))  # the text says the same, for text readers
        return answer

    async def problem(self, name: str, **arguments: Any) -> tuple[dict[str, Any], str]:
        """A call that must answer with an error result: its structured body and text."""
        result = await self.result(name, **arguments)
        assert result.is_error, _text(result)
        return result.structured_content or {}, _text(result)


def _text(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


@dataclass
class McpAgent:
    state: Path
    token: str
    workdir: Path

    @asynccontextmanager
    async def tools(self, server: str) -> AsyncIterator[Tools]:
        params = StdioServerParameters(
            command=HUB,
            args=["agent", "mcp", "--harness", "pytest"],
            env={"HUB_SERVER": server, "HUB_TOKEN": self.token, "HUB_AGENT_STATE": str(self.state)},
            cwd=self.workdir,
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield Tools(session)


@pytest.fixture
def mcp_agent(
    tmp_path: Path, make_principal: Callable[..., Principal]
) -> Callable[[str], McpAgent]:
    def make(name: str) -> McpAgent:
        workdir = tmp_path / name / "work"
        workdir.mkdir(parents=True)
        token = make_principal(kind="agent").token
        return McpAgent(tmp_path / name / "agent-state.json", token, workdir)

    return make
