"""`hub agent mcp`: the agent's verbs as MCP tools over standard input and output.

The harness (Claude Code, Codex, any MCP client) starts this process on the agent's
workstation and talks MCP to it; it talks to hub over HTTP with the agent client, in the
state file the command line uses (docs/agent-mcp.md). Each call runs in a worker thread
(the client is synchronous); the state file is replaced whole under its lock, so a
call cut off by the harness leaves at most a request pending, which the same call
resolves.

It answers `initialize` and `tools/list` from the SDK and the precomputed listing
alone; the agent client is loaded at the first call (`hub.mcp.calls`), so the harness
waits only for what it uses.

Besides the tools it offers two resources: the task packet of the attempt held
(`hub://task/current`: what the task asks for, its criteria, its repository and branch,
the open findings) and the project's rules (`hub://project/rules`: the orientation,
its rules and conventions apart from lessons).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from hub.bundled import data_dir
from hub.mcp.launch import Launch

if TYPE_CHECKING:
    from hub.mcp.results import ToolAnswer

TOOL_LIST = "agent-tools.json"

INSTRUCTIONS = (
    "hub coordinates the agents working on a project: it makes sure one agent owns a "
    "task at a time and that work is reviewed, integrated and validated before it is "
    "done. Start with startSession, then orientation (the project's rules) and "
    "claimTask. While you hold a task, renew its lease (renewLease, every "
    "heartbeatSeconds) or record checkpoints of your progress; submitAttempt when done, "
    "relinquishAttempt if you stop. A problem is a result with a code and what to do; a "
    "call that got no answer is safe to repeat with the same arguments."
)

_RESOURCES = {
    "hub://task/current": (
        "Current task packet",
        "The task you hold: what it asks for, its acceptance criteria, repository, branch "
        "and open findings.",
    ),
    "hub://project/rules": (
        "Project rules",
        "The project's orientation: its rules and conventions (lessons apart).",
    ),
}


@cache
def listed_tools() -> tuple[types.Tool, ...]:
    """The tools as listed: read from `graphql/agent-tools.json`, which `make schema`
    writes from the verbs (`render_tool_list`) and a test keeps in step, so that a
    harness's first `tools/list` need not parse the schema."""
    listed = json.loads((data_dir("graphql") / TOOL_LIST).read_text(encoding="utf-8"))
    return tuple(types.Tool.model_validate(entry) for entry in listed)


@cache
def _schemas() -> Mapping[str, Mapping[str, Any]]:
    return {tool.name: tool.input_schema for tool in listed_tools()}


def _call(launch: Launch, name: str, arguments: Mapping[str, Any]) -> ToolAnswer:
    from hub.mcp.calls import call  # the agent client, at the first call

    return call(launch, name, arguments, _schemas().get(name))


def _read(launch: Launch, uri: str) -> str:
    from hub.mcp.calls import read_resource

    return read_resource(launch, uri)


def build_server(launch: Launch) -> Server[Any]:
    async def on_list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list(listed_tools()))

    async def on_call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        answer = await anyio.to_thread.run_sync(_call, launch, params.name, arguments)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=answer.text)],
            structured_content=answer.structured,
            is_error=answer.is_error,
        )

    async def on_list_resources(_ctx: Any, _params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(uri=uri, name=name, description=text, mime_type="application/json")
                for uri, (name, text) in _RESOURCES.items()
            ]
        )

    async def on_read_resource(
        _ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        text = await anyio.to_thread.run_sync(_read, launch, uri)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=text)]
        )

    return Server(
        "hub",
        version=_version(),
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
        on_list_resources=on_list_resources,
        on_read_resource=on_read_resource,
    )


def serve(launch: Launch) -> None:
    """Serve MCP on stdin/stdout until the harness closes them. Logs go to `mcp.log`
    beside the state file, never to stdout, which is the protocol's."""
    server = build_server(launch)

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(run)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hub")
    except PackageNotFoundError:
        return "0"


