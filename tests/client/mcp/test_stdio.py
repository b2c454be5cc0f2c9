"""`hub agent mcp` over stdio, driven by the MCP SDK's client, against a real server on
both databases: the tools listed, a task claimed, checkpointed and submitted, a review,
typed problems as results, schema checks, and a call retried after a lost answer."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import types

from tests.client.mcp.conftest import McpAgent
from tests.conftest import AgentSession, Principal
from tests.support.client import Api
from tests.support.lossy_proxy import lossy_proxy
from tests.support.work import new_task, task
from tests.support.workflow import deliver

MAKE_AGENT = Callable[[str], McpAgent]


def test_the_tools_are_the_agent_verbs_described_for_a_model(
    server: str, mcp_agent: MAKE_AGENT
) -> None:
    async def scenario() -> None:
        async with mcp_agent("a").tools(server) as tools:
            listed = {t.name: t for t in (await tools.session.list_tools()).tools}
            resources = (await tools.session.list_resources()).resources
        assert {"startSession", "claimTask", "recordCheckpoint", "submitAttempt",
                "submitReview", "claimIntegration", "orientation"} <= set(listed)  # fmt: skip
        claim = listed["claimTask"]
        assert claim.input_schema["required"] == ["projectId"]
        assert "NO_ELIGIBLE_TASK" in (claim.description or "")
        checkpoint = listed["recordCheckpoint"].input_schema
        # What the client fills in from its state is never asked of the model.
        assert not {"attemptId", "generation", "idempotencyKey"} & set(checkpoint["properties"])
        assert checkpoint["required"] == ["summary"]
        assert {str(r.uri) for r in resources} == {"hub://task/current", "hub://project/rules"}

    anyio.run(scenario)


def test_an_agent_claims_checkpoints_and_submits_through_the_tools(
    server: str, mcp_agent: MAKE_AGENT, operator: Principal, project: str
) -> None:
    general = new_task(operator.api, project, kind="GENERAL", title="write the release notes")
    agent = mcp_agent("implementer")

    async def scenario() -> None:
        async with agent.tools(server) as tools:
            started = await tools.call("startSession")
            again = await tools.call("startSession")  # safe to repeat: the session is kept
            assert again["session"]["id"] == started["session"]["id"] and again["kept"]
            assert "token" not in started["session"]

            claimed = await tools.call("claimTask", projectId=project)
            assert claimed["task"]["id"] == general
            assert claimed["replay"] is False
            assert claimed["lease"]["standing"] == "HOLDS"
            assert claimed["brief"]["task"]["id"] == general
            packet = await tools.session.read_resource("hub://task/current")
            (content,) = packet.contents
            assert isinstance(content, types.TextResourceContents)
            assert json.loads(content.text)["task"]["id"] == general

            noted = await tools.call("recordCheckpoint", summary="drafted the notes")
            assert noted["checkpoint"]["id"]
            await tools.call("renewLease")
            await tools.call("recordAcceptance", evidence=["read them through"])
            submitted = await tools.call("submitAttempt", outcome="DELIVERED", result="written")
            assert submitted["attempt"]["state"] == "SUBMITTED"

    anyio.run(scenario)
    assert task(operator.api, general)["state"] == "DONE"
    stored = json.loads(agent.state.read_text())
    assert stored["pending"] == {}  # every key settled by its answer


def test_a_reviewer_approves_a_delivery_through_the_tools(
    server: str,
    mcp_agent: MAKE_AGENT,
    operator: Principal,
    agent: Callable[..., AgentSession],
) -> None:
    delivery = deliver(operator.api, agent().api)

    async def scenario() -> None:
        async with mcp_agent("reviewer").tools(server) as tools:
            await tools.call("startSession")
            claimed = await tools.call("claimTask", projectId=delivery.project, kinds=["REVIEW"])
            assert claimed["task"]["kind"] == "REVIEW"
            subject = await tools.call("submission")  # the one the review held is for
            assert subject["submission"]["id"] == delivery.submission
            approved = await tools.call("submitReview", decision="APPROVE", summary="clean")
            assert approved["review"]["decision"] == "APPROVE"
            assert approved["attempt"]["state"] == "COMPLETED"

    anyio.run(scenario)


def test_problems_are_results_with_what_to_do(
    server: str, mcp_agent: MAKE_AGENT, operator: Principal, project: str
) -> None:
    agent = mcp_agent("a")

    async def scenario() -> None:
        async with agent.tools(server) as tools:
            no_session, text = await tools.problem("claimTask", projectId=project)
            assert no_session["code"] == "LOCAL_STATE" and "startSession" in text

            started = await tools.call("startSession")
            nothing = await tools.call("claimTask", projectId=project)  # an answer, not an error
            assert nothing["nothingToDo"] is True and nothing["code"] == "NO_ELIGIBLE_TASK"

            missing, text = await tools.problem("claimTask", projectId=project, taskId="tsk_nope")
            assert missing["code"] == "NOT_FOUND"
            assert "What to do:" in text

            wrong, text = await tools.problem("claimTask", projectId=42)
            assert wrong["code"] == "INVALID_ARGUMENTS" and "'projectId'" in text
            _missing, text = await tools.problem("recordCheckpoint")
            assert "summary" in text

            # The session ended behind the agent's back: the typed problem and its remedy.
            token = json.loads(agent.state.read_text())["session"]["token"]
            elsewhere = Api(server, token)
            ended = elsewhere.mutate(
                "endSession", {"sessionId": started["session"]["id"], "reason": "test"}
            )
            elsewhere.close()
            assert ended["__typename"] == "EndSessionPayload", ended
            gone, text = await tools.problem("candidates", projectId=project)
            assert gone["code"] == "UNAUTHENTICATED" and "startSession" in text
            reopened = await tools.call("startSession")
            assert reopened["session"]["id"] != started["session"]["id"]

    anyio.run(scenario)


def test_a_call_retried_after_a_lost_answer_replays_under_the_same_key(
    server: str, mcp_agent: MAKE_AGENT, operator: Principal, project: str, tmp_path: Path
) -> None:
    general = new_task(operator.api, project, kind="GENERAL", title="one")
    agent = mcp_agent("a")

    async def scenario(proxied: str, network: Any) -> None:
        async with agent.tools(proxied) as tools:
            await tools.call("startSession")
            network.lose_next("claimTask")
            lost, text = await tools.problem("claimTask", projectId=project)
            assert lost["code"] == "TRANSPORT_FAILURE" and lost["uncertain"] is True
            assert "same arguments" in text
            key = json.loads(agent.state.read_text())["pending"]["claimTask"]["key"]

        # The harness restarted the server process too: the key survives in the state file.
        async with agent.tools(proxied) as tools:
            replayed = await tools.call("claimTask", projectId=project)
            assert replayed["replay"] is True
            assert replayed["task"]["id"] == general
        assert json.loads(agent.state.read_text())["pending"] == {}
        assert key

    with lossy_proxy(server) as (proxied, network):
        anyio.run(scenario, proxied, network)
        assert network.lost == ["claimTask"]
    assert task(operator.api, general)["generation"] == 1  # one claim, not two
