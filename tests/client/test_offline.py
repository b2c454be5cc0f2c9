"""The client's half of the retry rules (docs/design.md, "Idempotency"), against a scripted
server (httpx.MockTransport).

These need no database: they pin down what the client records and sends when answers
are lost. The same behaviour against the real server is in test_retries.py.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from hub.cli.agent import options as agent_cli_module
from tests.client.conftest import AgentCli

SERVER = "http://hub.test"
NOW = "2026-01-01T12:00:00+00:00"
EXPIRES = "2026-01-01T12:10:00+00:00"


def claim_payload(attempt_id: str, task_id: str, replay: bool = False) -> dict[str, Any]:
    return {
        "__typename": "ClaimPayload",
        "task": {
            "id": task_id, "projectId": "prj_1", "kind": "GENERAL", "title": "t",
            "state": "IN_PROGRESS", "effectiveState": "IN_PROGRESS", "generation": 1,
            "criteriaRevision": 1, "currentAttemptId": attempt_id,
        },
        "attempt": {
            "id": attempt_id, "projectId": "prj_1", "taskId": task_id, "sessionId": "ses_1",
            "generation": 1, "state": "ACTIVE", "kind": "FRESH", "isCurrent": True,
            "leaseExpired": False, "expiresAt": EXPIRES, "leaseSeconds": 600,
            "heartbeatSeconds": 60, "criteriaRevision": 1, "disposition": None,
        },
        "lease": {
            "attemptId": attempt_id, "generation": 1, "expiresAt": EXPIRES,
            "heartbeatSeconds": 60,
        },
        "replay": replay,
        "serverTime": NOW,
    }  # fmt: skip


class ScriptedHub:
    """Answers startSession and resolveProject; claimTask answers come from `claims`."""

    def __init__(self) -> None:
        self.claims: list[Callable[[dict[str, Any]], httpx.Response]] = []
        self.claim_keys: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        query, variables = body["query"], body["variables"]
        if "startSession(input:" in query:
            return ok({"startSession": {
                "__typename": "StartSessionPayload", "token": "hub_ses_secret",
                "serverTime": NOW,
                "session": {
                    "id": "ses_1", "principalId": "prn_1", "workstation": "ws",
                    "harness": "pytest", "harnessInstance": "1", "startedAt": NOW,
                    "endedAt": None,
                },
            }})  # fmt: skip
        if "resolveProject" in query:
            return ok({"resolveProject": {"__typename": "Project", "id": "prj_1"}})
        if "claimTask(input:" in query:
            self.claim_keys.append(variables["input"]["idempotencyKey"])
            return self.claims.pop(0)(variables["input"])
        # What `next` reads after a claim for the task's brief: nothing known here.
        if "recoveryPacket(taskId:" in query:
            return ok({"recoveryPacket": None})
        if "project(id:" in query:
            return ok({"project": None})
        raise AssertionError(f"unexpected request {query}")


def ok(data: dict[str, Any]) -> httpx.Response:
    return httpx.Response(200, json={"data": data})


def claimed(attempt_id: str, replay: bool = False) -> Callable[[dict[str, Any]], httpx.Response]:
    return lambda input: ok(
        {"claimTask": claim_payload(attempt_id, input.get("taskId") or "tsk_1", replay)}
    )


def status(code: int) -> Callable[[dict[str, Any]], httpx.Response]:
    return lambda _input: httpx.Response(code, text="upstream trouble")


def unreachable(_input: dict[str, Any]) -> httpx.Response:
    raise httpx.ConnectError("connection refused")


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, agent_cli: AgentCli) -> ScriptedHub:
    scripted = ScriptedHub()
    monkeypatch.setattr(agent_cli_module, "transport", httpx.MockTransport(scripted))
    agent_cli.json("start", "--server", SERVER, "--token", "hub_pat_x", "--harness", "pytest",
                   "--instance", "1")  # fmt: skip
    return scripted


def test_state_file_is_private_and_holds_the_session_token(
    hub: ScriptedHub, agent_cli: AgentCli
) -> None:
    mode = stat.S_IMODE(os.stat(agent_cli.state).st_mode)
    assert mode == 0o600
    assert agent_cli.stored()["session"]["token"] == "hub_ses_secret"
    # ...which no output ever shows.
    assert "hub_ses_secret" not in agent_cli("status").stdout
    assert "hub_ses_secret" not in json.dumps(agent_cli.json("status"))


def test_a_5xx_keeps_the_key_and_the_rerun_sends_the_same_one(
    hub: ScriptedHub, agent_cli: AgentCli
) -> None:
    hub.claims += [status(502), claimed("att_1", replay=True)]

    failed = agent_cli.json("next", "--project", "p", exit_code=3)
    assert failed["error"]["uncertain"] is True
    assert hub.claim_keys[0] in failed["error"]["message"]
    assert agent_cli.stored()["pending"]["claimTask"]["key"] == hub.claim_keys[0]

    again = agent_cli.json("next", "--project", "p")
    assert again["replay"] is True
    assert hub.claim_keys == [hub.claim_keys[0]] * 2
    assert agent_cli.stored()["pending"] == {}
    assert agent_cli.stored()["attempt"]["id"] == "att_1"


def test_a_different_claim_waits_until_the_uncertain_one_is_resolved(
    hub: ScriptedHub, agent_cli: AgentCli
) -> None:
    hub.claims += [status(504), claimed("att_2")]
    agent_cli.json("next", "--project", "p", exit_code=3)
    first_key = hub.claim_keys[0]

    refused = agent_cli.json("claim", "tsk_other", "--project", "p", exit_code=2)
    assert refused["error"]["code"] == "PENDING_OPERATION"
    assert first_key in refused["error"]["message"]
    assert len(hub.claim_keys) == 1  # refused locally, nothing sent

    agent_cli.json("claim", "tsk_other", "--project", "p", "--abandon-pending")
    assert hub.claim_keys[1] != first_key
    assert agent_cli.stored()["pending"] == {}


def test_a_problem_is_a_definite_answer_and_clears_the_key(
    hub: ScriptedHub, agent_cli: AgentCli
) -> None:
    problem = {"__typename": "Conflict", "code": "CONFLICT", "message": "task is owned"}
    hub.claims += [lambda _input: ok({"claimTask": problem})] * 2

    failed = agent_cli.json("next", "--project", "p", exit_code=1)
    assert failed["error"] == {
        "kind": "ProblemError", "code": "CONFLICT", "message": "task is owned",
        "problem": "Conflict", "details": {},
    }  # fmt: skip
    assert agent_cli.stored()["pending"] == {}

    human = agent_cli("next", "--project", "p", exit_code=1)
    assert "CONFLICT: task is owned" in human.stderr
    assert hub.claim_keys[0] != hub.claim_keys[1]  # a fresh request gets a fresh key


def test_an_unsent_request_is_reported_as_a_transport_failure_that_was_not_applied(
    hub: ScriptedHub, agent_cli: AgentCli
) -> None:
    hub.claims += [unreachable]
    result = agent_cli("next", "--project", "p", exit_code=3)
    assert "was not sent" in result.stderr
    # Still pending: rerunning with the same key costs nothing and keeps one rule.
    assert agent_cli.stored()["pending"]["claimTask"]["sends"] == 1


def test_an_authentication_failure_leaves_the_uncertain_claim_pending(
    hub: ScriptedHub, agent_cli: AgentCli
) -> None:
    unauthenticated = httpx.Response(
        200,
        json={"data": None, "errors": [
            {"message": "token revoked", "extensions": {"code": "UNAUTHENTICATED"}}
        ]},
    )  # fmt: skip
    hub.claims += [status(503), lambda _input: unauthenticated]
    agent_cli.json("next", "--project", "p", exit_code=3)
    failed = agent_cli.json("next", "--project", "p", exit_code=1)
    assert failed["error"]["code"] == "UNAUTHENTICATED"
    # It says nothing about the first send, so the key is kept for a later retry.
    assert agent_cli.stored()["pending"]["claimTask"]["sends"] == 2


def test_an_unreadable_state_file_is_a_local_state_error(agent_cli: AgentCli) -> None:
    agent_cli.state.parent.mkdir(parents=True)
    agent_cli.state.write_text("{ not json")
    failed = agent_cli.json("heartbeat", exit_code=2)
    assert failed["error"]["code"] == "LOCAL_STATE"


def test_commands_that_need_a_session_say_so(agent_cli: AgentCli) -> None:
    result = agent_cli("heartbeat", exit_code=2)
    assert "hub agent start" in result.stderr


def test_an_answer_of_the_wrong_shape_counts_as_lost(hub: ScriptedHub, agent_cli: AgentCli) -> None:
    # The server may have claimed; an unreadable answer cannot say it did not.
    hub.claims += [lambda _input: ok({"claimTask": {"__typename": "ClaimPayload"}})]
    failed = agent_cli.json("next", "--project", "p", exit_code=3)
    assert failed["error"]["uncertain"] is True
    assert agent_cli.stored()["pending"]["claimTask"]["key"] == hub.claim_keys[0]


def test_a_server_that_is_not_a_url_is_a_usage_error(agent_cli: AgentCli) -> None:
    failed = agent_cli.json(
        "start", "--server", "hub.example", "--token", "t", "--harness", "h", "--instance", "1",
        exit_code=2,
    )  # fmt: skip
    assert failed["error"]["code"] == "USAGE"
    assert not agent_cli.state.exists()


def test_start_refuses_to_drop_a_session_it_still_holds(
    hub: ScriptedHub, agent_cli: AgentCli
) -> None:
    args = ["start", "--server", SERVER, "--token", "t", "--harness", "h", "--instance", "2"]
    assert "hub agent end" in agent_cli(*args, exit_code=2).stderr
    agent_cli(*args, "--replace")
