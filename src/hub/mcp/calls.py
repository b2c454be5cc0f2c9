"""What a tool call does on the workstation: its arguments checked against the tool's
schema, the agent client's call, and the answer shaped for the model.

Loaded at the first call (`hub.mcp.stdio` imports it then), with the agent client: one
client for the process, on the state file `hub agent mcp` was started with, logging to
`mcp.log` beside it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from functools import cache
from typing import Any

import jsonschema

from hub.client.agent import AgentClient
from hub.client.errors import ClientError
from hub.client.state import StateFile, default_state_path
from hub.mcp.launch import Launch
from hub.mcp.results import ToolAnswer, answered, invalid, refused
from hub.mcp.tools import TOOLS

log = logging.getLogger("hub.mcp")


@cache
def client_for(launch: Launch) -> AgentClient:
    path = launch.state or default_state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path.parent / "mcp.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    return AgentClient(StateFile(path))


def call(
    launch: Launch,
    name: str,
    arguments: Mapping[str, Any],
    schema: Mapping[str, Any] | None = None,
) -> ToolAnswer:
    """One tool call: its arguments checked against its schema (`schema`, as listed;
    else the tool's own), then the client's call; every failure is a result the model
    reads, never an exception."""
    tool = TOOLS.get(name)
    if tool is None:
        return invalid(f"no tool named {name!r}: tools/list names them")
    mismatch = _mismatch(schema or tool.input_schema(), arguments)
    if mismatch is not None:
        return invalid(mismatch)
    client = client_for(launch)
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


def read_resource(launch: Launch, uri: str) -> str:
    client = client_for(launch)
    try:
        if uri == "hub://task/current":
            value: Any = client.show()
        elif uri == "hub://project/rules":
            oriented = client.orient(workdir=launch.workdir)
            value = {"projectId": oriented.project_id, "rules": oriented.rules,
                     "asOf": oriented.as_of}  # fmt: skip
        else:
            return invalid(f"no resource {uri}").text
    except ClientError as error:
        return refused(error).text
    return answered(value, client.clock.wall()).text


def render_tool_list() -> str:
    """What `graphql/agent-tools.json` holds: every tool's name, description for a
    model and input schema, derived from the verbs."""
    listed = [
        {"name": t.name, "description": t.description(), "inputSchema": t.input_schema()}
        for t in TOOLS.values()
    ]
    return json.dumps(listed, indent=1, ensure_ascii=False) + "\n"
