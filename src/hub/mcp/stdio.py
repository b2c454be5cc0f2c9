"""`hub agent mcp`: the agent's verbs as MCP tools over standard input and output.

The harness (Claude Code, Codex, any MCP client) starts this process on the agent's
workstation and talks MCP to it; it talks to hub over HTTP with the agent client, in the
state file the command line uses (docs/agent-mcp.md). Each call runs in a worker thread
(the client is synchronous); the state file is replaced whole under its lock, so a
call cut off by the harness leaves at most a request pending, which the same call
resolves.

Besides the tools it offers two resources: the task packet of the attempt held
(`hub://task/current`: what the task asks for, its criteria, its repository and branch,
the open findings) and the project's rules (`hub://project/rules`: the orientation,
its rules and conventions apart from lessons).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import anyio
import jsonschema
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from hub.bundled import data_dir
from hub.client.agent import AgentClient
from hub.client.errors import ClientError
from hub.mcp.results import ToolAnswer, answered, invalid, refused
from hub.mcp.tools import TOOLS, Launch

log = logging.getLogger("hub.mcp")

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


def render_tool_list() -> str:
    """What `graphql/agent-tools.json` holds: every tool's name, description for a
    model and input schema, derived from the verbs."""
    listed = [
        {"name": t.name, "description": t.description(), "inputSchema": t.input_schema()}
        for t in TOOLS.values()
    ]
    return json.dumps(listed, indent=1, ensure_ascii=False) + "\n"


def call(
    client: AgentClient, launch: Launch, name: str, arguments: Mapping[str, Any]
) -> ToolAnswer:
    """One tool call: its arguments checked against its schema, then the client's call;
    every failure is a result the model reads, never an exception."""
    tool = TOOLS.get(name)
    if tool is None:
        return invalid(f"no tool named {name!r}: tools/list names them")
    mismatch = _mismatch(_schemas().get(name) or tool.input_schema(), arguments)
    if mismatch is not None:
        return invalid(mismatch)
    try:
        return answered(tool.run(client, launch, arguments), client.clock.wall())
    except ClientError as error:
        return refused(error)
    except Exception as error:  # a bug here must not end the agent's turn
        log.exception("tool %s failed", name)
        return invalid(f"the tool failed unexpectedly ({type(error).__name__}); see the log")


def _mismatch(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> str | None:
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(dict(arguments)), key=lambda e: list(e.path))
    if not errors:
        return None
    first = errors[0]
    where = ".".join(str(p) for p in first.absolute_path)
    if not where and first.validator == "required":
        return f"missing argument: {first.message}"
    if not where and first.validator == "additionalProperties":
        return f"unknown argument: {first.message}"
    return f"argument {where!r}: {first.message}"


def read_resource(client: AgentClient, launch: Launch, uri: str) -> str:
    if uri == "hub://task/current":
        value: Any = client.show()
    elif uri == "hub://project/rules":
        value = client.orient(workdir=launch.workdir)
        value = {"projectId": value.project_id, "rules": value.rules, "asOf": value.as_of}
    else:
        raise ValueError(f"no resource {uri}")
    return answered(value, client.clock.wall()).text


def build_server(client: AgentClient, launch: Launch) -> Server[Any]:
    async def on_list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list(listed_tools()))

    async def on_call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        answer = await anyio.to_thread.run_sync(call, client, launch, params.name, arguments)
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
        try:
            text = await anyio.to_thread.run_sync(read_resource, client, launch, uri)
        except ClientError as error:
            text = refused(error).text
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


def serve(client: AgentClient, launch: Launch, log_file: Path | None = None) -> None:
    """Serve MCP on stdin/stdout until the harness closes them. Logs go to `log_file`
    (beside the state file), never to stdout, which is the protocol's."""
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(log_file)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        log.addHandler(handler)
    server = build_server(client, launch)

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


