"""The agent's verbs as MCP tools at `/mcp` (docs/mcp-http.md), through the SDK's own
client over streamable HTTP against a real server, on both databases."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
from graphql import GraphQLError
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CallToolResult, TextContent

from hub.api.extensions import MASKED
from hub.api.mcp_http.tools import shape
from hub.runtime import Runtime
from hub.verbs import VERBS
from tests.conftest import AgentSession, Principal
from tests.support.work import add_repository, create_project, new_task


@asynccontextmanager
async def connected(server: str, token: str) -> AsyncIterator[ClientSession]:
    """A new MCP connection to the server's /mcp, sending `token`."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(f"{server}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def call(server: str, token: str, *calls: tuple[str, dict[str, Any]]) -> list[CallToolResult]:
    """Each call in turn over one MCP connection."""

    async def run() -> list[CallToolResult]:
        async with connected(server, token) as session:
            return [await session.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(run)


def text(result: CallToolResult) -> str:
    (content,) = result.content
    assert isinstance(content, TextContent)
    return content.text


def payload(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    assert json.loads(text(result)) == result.structured_content
    return result.structured_content


def key() -> str:
    return uuid.uuid4().hex


def test_the_tools_are_the_agent_verbs_with_their_whole_input(server: str, agent) -> None:
    async def run() -> Any:
        async with connected(server, agent().token) as session:
            return await session.list_tools()

    listed = {tool.name: tool for tool in anyio.run(run).tools}
    offered = {name for name, verb in VERBS.items() if verb.agent}
    assert set(listed) == offered - {"startSession", "endSession"}
    assert not {name for name, verb in VERBS.items() if not verb.agent} & set(listed)
    checkpoint = listed["recordCheckpoint"]
    assert checkpoint.input_schema == VERBS["recordCheckpoint"].input_schema()
    assert {"attemptId", "generation", "idempotencyKey"} <= set(
        checkpoint.input_schema["properties"]
    )
    described = checkpoint.description or ""
    assert "STALE_GENERATION" in described
    assert "generation are filled in for you" not in described
    assert "attemptId and generation" in described
    assert "same key" in described


def test_claim_checkpoint_submit_and_review(
    server: str, operator: Principal, agent: Callable[..., AgentSession]
) -> None:
    project = create_project(operator.api)
    repository = add_repository(operator.api, project)
    task = new_task(operator.api, project, kind="IMPLEMENTATION")
    implementer = agent()
    claim_key = key()
    claim, = call(server, implementer.token, (
        "claimTask", {"projectId": project, "taskId": task, "idempotencyKey": claim_key}
    ))
    claimed = payload(claim)
    assert claimed["__typename"] == "ClaimPayload"
    assert claimed["replay"] is False
    attempt = claimed["attempt"]
    assert attempt["taskId"] == task
    assert attempt["sessionId"] == implementer.session_id
    held = {"attemptId": attempt["id"], "generation": attempt["generation"]}

    # The claim's answer was lost: a new connection repeats the keyed call, and hub
    # answers the same claim.
    again, = call(server, implementer.token, (
        "claimTask", {"projectId": project, "taskId": task, "idempotencyKey": claim_key}
    ))
    replayed = payload(again)
    assert replayed["replay"] is True
    assert replayed["attempt"]["id"] == attempt["id"]

    worktree, checkpointed, stale, submitted = call(
        server,
        implementer.token,
        ("registerWorktree", {
            **held, "repositoryId": repository, "worktreeId": "ws-1:/src/r/.git/worktrees/t",
            "path": "/src/r-t", "branch": "hub/t", "baseRevision": "a" * 40,
            "workstation": "ws-1",
        }),
        ("recordCheckpoint", {**held, "summary": "half done", "idempotencyKey": key()}),
        ("recordCheckpoint", {**held, "generation": attempt["generation"] + 1,
                              "summary": "from the future", "idempotencyKey": key()}),
        ("submitAttempt", {**held, "outcome": "DELIVERED", "result": "done",
                           "candidateRevision": "b" * 40, "idempotencyKey": key()}),
    )
    assert payload(worktree)["worktree"]["id"]
    assert payload(checkpointed)["checkpoint"]["id"]
    assert stale.is_error
    assert stale.structured_content is not None
    assert stale.structured_content["code"] == "STALE_GENERATION"
    assert text(stale).startswith("STALE_GENERATION: ")
    assert "\nWhat to do: A newer attempt owns this task now" in text(stale)
    submission = payload(submitted)["submission"]
    assert submission["outcome"] == "DELIVERED"

    # Another agent reviews it, through its own connection.
    reviewer = agent()
    review_claim, = call(server, reviewer.token, (
        "claimTask", {"projectId": project, "kinds": ["REVIEW"], "idempotencyKey": key()}
    ))
    review_attempt = payload(review_claim)["attempt"]
    assert payload(review_claim)["task"]["kind"] == "REVIEW"
    read, approved = call(
        server,
        reviewer.token,
        ("submission", {"id": submission["id"]}),
        ("submitReview", {
            "attemptId": review_attempt["id"], "generation": review_attempt["generation"],
            "submissionId": submission["id"], "decision": "APPROVE",
            "summary": "reads well", "evidence": ["read the result"], "idempotencyKey": key(),
        }),
    )
    assert payload(read)["submission"]["id"] == submission["id"]
    assert payload(approved)["review"]["decision"] == "APPROVE"


def test_a_typed_problem_is_an_error_result_with_its_remedy(
    server: str, operator: Principal, agent: Callable[..., AgentSession]
) -> None:
    project = create_project(operator.api)
    nothing, = call(server, agent().token, (
        "claimTask", {"projectId": project, "idempotencyKey": key()}
    ))
    assert nothing.is_error
    assert nothing.structured_content is not None
    assert nothing.structured_content["code"] == "NO_ELIGIBLE_TASK"
    assert text(nothing).startswith("NO_ELIGIBLE_TASK: ")
    assert "What to do: Nothing is ready to claim now" in text(nothing)


def test_arguments_off_the_schema_are_refused_naming_the_argument(
    server: str, agent: Callable[..., AgentSession]
) -> None:
    token = agent().token
    wrong_type, unknown, missing, nested, no_tool = call(
        server,
        token,
        ("claimTask", {"projectId": 42}),
        ("claimTask", {"projectId": "p", "colour": "blue"}),
        ("recordCheckpoint", {"attemptId": "a", "generation": 1}),
        ("claimTask", {"projectId": "p", "kinds": ["REVIEW", "NAP"]}),
        ("startSession", {}),
    )
    for refused in (wrong_type, unknown, missing, nested, no_tool):
        assert refused.is_error
    assert "argument 'projectId': 42 is not of type 'string'" in text(wrong_type)
    assert "argument 'colour' is not an argument of claimTask" in text(unknown)
    assert "argument 'summary' is required" in text(missing)
    assert "argument 'kinds[1]': 'NAP' is not one of" in text(nested)
    assert "no tool named 'startSession'" in text(no_tool)


def test_no_token_is_refused_before_mcp(server: str) -> None:
    initialize = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "0"}},
    }
    headers = {"Accept": "application/json, text/event-stream"}
    answer = httpx.post(f"{server}/mcp", json=initialize, headers=headers)
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"].startswith("Bearer")
    assert answer.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


def test_a_token_no_longer_accepted_is_a_tool_error_with_the_remote_remedy(
    server: str, operator: Principal, agent: Callable[..., AgentSession]
) -> None:
    project = create_project(operator.api)
    session = agent()
    ended = session.api.mutate("endSession", {"sessionId": session.session_id})
    assert ended["__typename"] == "EndSessionPayload", ended
    refused, = call(server, session.token, ("candidates", {"projectId": project}))
    assert refused.is_error
    assert text(refused).startswith("UNAUTHENTICATED: ")
    assert "the MCP client's configuration needs a valid token" in text(refused)
    assert "startSession again" not in text(refused)


def test_a_body_over_the_request_limit_is_refused(
    server: str, runtime: Runtime, agent: Callable[..., AgentSession]
) -> None:
    limit = runtime.settings.max_request_bytes
    call_tool = {
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "publishLesson", "arguments": {"statement": "x" * limit}},
    }
    headers = {
        "Authorization": f"Bearer {agent().token}",
        "Accept": "application/json, text/event-stream",
    }
    answer = httpx.post(f"{server}/mcp", json=call_tool, headers=headers)
    assert answer.status_code == 413


def test_a_personal_token_does_what_the_credential_table_lets_it(
    server: str, operator: Principal, make_principal: Callable[..., Principal]
) -> None:
    project = create_project(operator.api)
    new_task(operator.api, project)
    personal = make_principal(kind="agent")
    who, claim = call(
        server, personal.token,
        ("viewer", {}),
        ("claimTask", {"projectId": project, "idempotencyKey": key()}),
    )
    assert payload(who)["principal"]["id"] == personal.id
    assert claim.is_error
    assert claim.structured_content is not None
    assert claim.structured_content["code"] == "PERMISSION_DENIED"


def test_a_server_fault_says_only_that_it_failed() -> None:
    failed = shape(VERBS["claimTask"], None, [GraphQLError(MASKED, path=["claimTask"])])
    assert failed.is_error
    assert text(failed) == "claimTask failed on the hub server (an unexpected error, logged there)"
    refused = shape(VERBS["task"], None, [
        GraphQLError("no task tsk_1", extensions={"code": "NOT_FOUND"})
    ])
    assert text(refused).startswith("NOT_FOUND: no task tsk_1\nWhat to do: Nothing with that id")
