"""The agent's verbs as MCP tools: the list, and a call run as the verb's GraphQL operation.

A tool is a verb of `hub.verbs` offered to agents, named after it (`claimTask`), told to
the model by `hub.verbs.description` and taking the verb's whole input
(`Verb.input_schema`): over HTTP no client keeps state for the caller, so the caller
gives every id (`attemptId`, `generation`, `sessionId`…) and its own `idempotencyKey`.

A call is checked against that schema, then runs the verb's document through the schema
instance `/graphql` serves, with the HTTP request of the call as its context: the same
authentication, credential table, limits and resolvers, no second implementation. What
the operation answers becomes the tool's result (`shape`): a payload as structured
content, a typed problem or a GraphQL error as an error result saying what to do.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mcp.types as types
from graphql import GraphQLError
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from mcp.server import ServerRequestContext
from starlette.requests import Request
from strawberry.schema.base import BaseSchema
from strawberry.types.graphql import OperationType

from hub.api.context import HubContext
from hub.api.extensions import MASKED
from hub.errors import ProblemCode
from hub.runtime import Runtime
from hub.verbs import VERBS, Verb, description, problem_types, remedy

log = logging.getLogger("hub.api.mcp")

# The session is the credential the MCP client is configured with, so its life is not
# the model's to manage: a token `startSession` returned could not be used (the client
# sends the header it was configured with), and `endSession` would cut off the very
# connection it was called on. Both stay with whoever configured the client.
NOT_OFFERED = frozenset({"startSession", "endSession"})

OFFERED: Mapping[str, Verb] = {
    name: verb for name, verb in VERBS.items() if verb.agent and name not in NOT_OFFERED
}

# Over HTTP a remote client keeps no state file, so nothing is filled in for the model.
_FILLED_LOCALLY = "its id and generation are filled in for you."
_GIVEN_REMOTELY = "give its attemptId and generation, as the claim answered them."
_EVERYTHING_GIVEN = (
    "Over this connection nothing is filled in for you: give every argument the schema "
    "requires, with ids copied from earlier answers."
)
_KEYED = (
    "idempotencyKey: a new unique string (a UUID) for each change you ask for. If a call "
    "gets no answer (a timeout, a dropped connection), call again with the same key and "
    "the same arguments: hub answers what the first call did (replay: true) instead of "
    "doing it twice."
)

# The local remedy (`remedy("UNAUTHENTICATED")`) is startSession in a state file; a
# remote client sends the token it was configured with, which no tool can change.
REMOTE_UNAUTHENTICATED = (
    "hub does not accept the bearer token this MCP connection sends (it is unknown, "
    "revoked or expired, or its session ended). Calling again will not help: the MCP "
    "client's configuration needs a valid token. Stop and ask the human who set up this "
    "connection to start a new hub session and put its token in the client's "
    "Authorization header. An attempt held under the old session becomes a recovery "
    "candidate when its lease expires (claimRecovery)."
)
INSTRUCTIONS = (
    "hub coordinates coding agents: claim a task (claimTask), record progress "
    "(recordCheckpoint) and renew the lease while you work, then hand the result to "
    "review (submitAttempt). Start with orientation and searchKnowledge for the project. "
    + _EVERYTHING_GIVEN
    + " A typed problem (NO_ELIGIBLE_TASK, STALE_GENERATION…) is an answer, not a crash: "
    "its result says what to do."
)


@functools.cache
def tool_list() -> tuple[types.Tool, ...]:
    return tuple(
        types.Tool(name=name, description=tool_description(verb), input_schema=verb.input_schema())
        for name, verb in OFFERED.items()
    )


def tool_description(verb: Verb) -> str:
    told = description(verb).replace(_FILLED_LOCALLY, _GIVEN_REMOTELY)
    extra = [_EVERYTHING_GIVEN] if verb.filled else []
    if "idempotencyKey" in verb.arguments:
        extra.append(_KEYED)
    return "\n\n".join([told, *extra])


@functools.cache
def _validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(OFFERED[name].input_schema())


class RefusedArguments(ValueError):
    """Arguments that do not match the tool's input schema."""


def check_arguments(verb: Verb, arguments: Mapping[str, Any]) -> None:
    """`RefusedArguments` naming the first argument (in the schema's order) that does
    not fit."""
    errors = list(_validator(verb.name).iter_errors(dict(arguments)))
    if not errors:
        return
    order = {name: i for i, name in enumerate(verb.arguments)}
    first = min(errors, key=lambda e: (order.get(_argument_of(e) or "", len(order)), e.message))
    raise RefusedArguments(_say(verb, first, arguments))


def _argument_of(error: ValidationError) -> str | None:
    if error.path:
        return str(error.path[0])
    required, given = error.validator_value, error.instance
    if error.validator == "required" and isinstance(required, list) and isinstance(given, dict):
        missing = [n for n in required if n not in given]
        return str(missing[0]) if missing else None
    return None


def _say(verb: Verb, error: ValidationError, arguments: Mapping[str, Any]) -> str:
    if error.validator == "additionalProperties" and not error.path:
        unknown = sorted(set(arguments) - set(verb.arguments))
        return (
            f"argument {unknown[0]!r} is not an argument of {verb.name} "
            f"(they are: {', '.join(verb.arguments)})"
        )
    if error.validator == "required" and not error.path:
        return f"argument {_argument_of(error)!r} is required"
    where = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.path)
    return f"argument {where.removeprefix('.')!r}: {error.message}"


@dataclass(frozen=True)
class Tools:
    """The MCP server's tool handlers, bound to the runtime and the API's schema."""

    runtime: Runtime
    schema: BaseSchema

    async def list_tools(
        self, _ctx: ServerRequestContext[Any, Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list(tool_list()))

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        verb = OFFERED.get(params.name)
        if verb is None:
            return _error(f"no tool named {params.name!r}; tools/list lists them")
        arguments = dict(params.arguments or {})
        try:
            check_arguments(verb, arguments)
        except RefusedArguments as refused:
            return _error(f"{verb.name} was not called: {refused}")
        if not isinstance(ctx.request, Request):
            # Only the HTTP transport serves these tools: a call always has its request.
            return _error("this tool is served over HTTP only")
        try:
            result = await self.schema.execute(
                verb.document,
                variable_values=verb.variables(arguments),
                context_value=HubContext(runtime=self.runtime, request=ctx.request),
                operation_name=verb.operation_name,
                allowed_operation_types={OperationType.QUERY, OperationType.MUTATION},
            )
        except Exception as exc:  # never a traceback to the caller; the server log has it
            log.exception("MCP tool %s failed", verb.name)
            return _error(f"{verb.name} failed on the hub server ({type(exc).__name__})")
        return shape(verb, result.data, result.errors)


def shape(
    verb: Verb, data: Mapping[str, Any] | None, errors: list[GraphQLError] | None
) -> types.CallToolResult:
    """The tool's result for what the operation answered."""
    if errors:
        return _graphql_errors(verb, errors)
    answer = (data or {}).get(verb.field)
    if isinstance(answer, dict) and answer.get("__typename") in problem_types():
        return _problem(answer)
    if answer is None:
        return types.CallToolResult(
            content=[_text(f"{verb.field}: null (nothing matched)")], structured_content=None
        )
    structured = answer if isinstance(answer, dict) else {verb.field: answer}
    return types.CallToolResult(content=[_text(_json(answer))], structured_content=structured)


def _problem(answer: Mapping[str, Any]) -> types.CallToolResult:
    code, message = str(answer["code"]), str(answer["message"])
    details = {k: v for k, v in answer.items() if k not in ("__typename", "code", "message")}
    text = f"{code}: {message}"
    todo = REMOTE_UNAUTHENTICATED if code == ProblemCode.UNAUTHENTICATED else remedy(code)
    if todo:
        text += f"\nWhat to do: {todo}"
    return types.CallToolResult(
        content=[_text(text)],
        structured_content={"code": code, "message": message, "details": details},
        is_error=True,
    )


def _graphql_errors(verb: Verb, errors: list[GraphQLError]) -> types.CallToolResult:
    codes = [str((e.extensions or {}).get("code") or "") for e in errors]
    messages = "; ".join(e.message for e in errors)
    if any(e.message == MASKED for e in errors):
        # A resolver's fault, logged with its traceback where it was masked.
        return _error(f"{verb.name} failed on the hub server (an unexpected error, logged there)")
    if ProblemCode.UNAUTHENTICATED in codes:
        text = f"UNAUTHENTICATED: {messages}\nWhat to do: {REMOTE_UNAUTHENTICATED}"
        code = str(ProblemCode.UNAUTHENTICATED)
    else:
        code = next((c for c in codes if c), "")
        todo = remedy(code) if code else None
        text = f"{code}: {messages}" if code else f"hub refused {verb.name}: {messages}"
        if todo:
            text += f"\nWhat to do: {todo}"
    return types.CallToolResult(
        content=[_text(text)],
        structured_content={"code": code or None, "message": messages, "details": {}},
        is_error=True,
    )


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[_text(message)], is_error=True)


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
