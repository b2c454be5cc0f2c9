"""`hub agent …` end to end: a real server, a real database (both backends), the CLI."""

from __future__ import annotations

import os
import stat
from typing import Any

from tests.client.conftest import AgentCli
from tests.conftest import Principal
from tests.support.work import new_task, task


def test_an_agent_completes_a_general_task_from_the_command_line(
    agent_cli: AgentCli,
    started: dict[str, Any],
    operator: Principal,
    project: str,
    general_task: str,
) -> None:
    session_id = started["session"]["id"]
    assert stat.S_IMODE(os.stat(agent_cli.state).st_mode) == 0o600

    claimed = agent_cli.json("next", "--project", project, "--kind", "GENERAL")
    attempt = claimed["attempt"]
    assert claimed["task"]["id"] == general_task
    assert claimed["replay"] is False
    assert attempt["sessionId"] == session_id
    assert claimed["lease"] == {
        "attemptId": attempt["id"],
        "generation": 1,
        "expiresAt": attempt["expiresAt"],
        "heartbeatSeconds": 60,
    }
    # A 600 s lease seen with 600 s left: 540 s of usable time, counted from the send.
    assert 500 < claimed["secondsLeft"] <= 540

    renewed = agent_cli.json("heartbeat")
    assert renewed["attempt"]["id"] == attempt["id"]
    assert renewed["replay"] is False

    noted = agent_cli.json("checkpoint", "--summary", "drafted the notes")
    assert noted["checkpoint"]["id"]

    accepted = agent_cli.json("accept", "--evidence", "read them through", "--note", "ok")
    assert accepted["attempt"]["state"] == "ACTIVE"

    submitted = agent_cli.json("submit", "--result", "release notes written")
    assert submitted["attempt"]["state"] == "SUBMITTED"
    assert submitted["submission"]["outcome"] == "DELIVERED"
    assert task(operator.api, general_task)["state"] == "DONE"

    status = agent_cli.json("status")
    assert status["session"]["id"] == session_id
    assert status["attempt"]["state"] == "SUBMITTED"
    assert status["pending"] == []
    # The state file stayed private through every rewrite.
    assert stat.S_IMODE(os.stat(agent_cli.state).st_mode) == 0o600

    ended = agent_cli.json("end", "--reason", "done for today")
    assert ended["session"]["id"] == session_id
    assert ended["abandonedAttempt"] is None
    assert agent_cli.json("status")["session"] is None


def test_status_shows_the_lease_and_the_local_deadline_in_words(
    agent_cli: AgentCli, started: dict[str, Any], project: str, general_task: str
) -> None:
    claimed = agent_cli.json("claim", general_task, "--project", project)

    human = agent_cli("status").stdout
    assert claimed["attempt"]["id"] in human
    assert "generation" in human
    assert claimed["attempt"]["expiresAt"] in human  # the server's expiresAt
    assert claimed["localDeadline"] in human
    assert "seconds left" in human

    refreshed = agent_cli.json("status", "--refresh")
    assert refreshed["refreshed"] is True
    assert refreshed["attempt"]["expiresAt"] == claimed["attempt"]["expiresAt"]
    assert refreshed["attempt"]["pastLocalDeadline"] is False


def test_a_claim_refused_by_the_server_prints_its_code_and_exits_one(
    agent_cli: AgentCli, started: dict[str, Any], project: str
) -> None:
    # (Nothing ready to claim is an answer, not a refusal: tests/client/test_task_cli.py.)
    failed = agent_cli.json(
        "claim", "tsk_00000000000000000000000000", "--project", project, exit_code=1
    )
    assert failed["error"]["kind"] == "ProblemError"
    assert failed["error"]["code"] == "NOT_FOUND"
    assert agent_cli.stored()["pending"] == {}

    unknown = agent_cli("next", "--project", "no-such-project", exit_code=1)
    assert "NOT_FOUND" in unknown.stderr


def test_an_active_attempt_must_be_finished_before_claiming_more(
    agent_cli: AgentCli,
    operator: Principal,
    started: dict[str, Any],
    project: str,
    general_task: str,
) -> None:
    agent_cli.json("claim", general_task, "--project", project)
    other = new_task(operator.api, project, kind="GENERAL")
    refused = agent_cli.json("claim", other, "--project", project, exit_code=2)
    assert "relinquish" in refused["error"]["message"]

    agent_cli.json("accept", "--evidence", "checked")
    agent_cli.json("submit", "--result", "done")
    assert agent_cli.json("claim", other, "--project", project)["task"]["id"] == other


def test_relinquish_gives_the_task_back(
    agent_cli: AgentCli,
    operator: Principal,
    started: dict[str, Any],
    project: str,
    general_task: str,
) -> None:
    agent_cli.json("claim", general_task, "--project", project)
    given_back = agent_cli.json("relinquish", "--reason", "wrong task")
    assert given_back["attempt"]["state"] == "RELINQUISHED"
    assert task(operator.api, general_task)["state"] == "OPEN"
