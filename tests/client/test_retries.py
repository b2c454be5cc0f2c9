"""Lost answers against the real server: the rerun reuses the recorded key and replays.

Only the client's network fails (the answer is dropped after the server committed);
the server, its database and its idempotency receipts are real.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from hub.clock import ManualClock
from tests.client.conftest import AgentCli, LoseResponses
from tests.conftest import Principal
from tests.support.work import new_task


def attempts_of(operator: Principal, task_id: str) -> list[dict[str, Any]]:
    data = operator.api(
        "query($id: ID!) { recoveryPacket(taskId: $id) { attempts { id generation state } }"
        " task(id: $id) { generation currentAttemptId } }",
        id=task_id,
    )
    attempts: list[dict[str, Any]] = data["recoveryPacket"]["attempts"]
    return attempts


def test_a_claim_whose_answer_was_lost_is_replayed_not_repeated(
    agent_cli: AgentCli,
    started: dict[str, Any],
    operator: Principal,
    project: str,
    general_task: str,
    lose: Callable[..., LoseResponses],
) -> None:
    network = lose("claimTask")

    lost = agent_cli.json("next", "--project", project, exit_code=3)
    assert lost["error"]["uncertain"] is True
    assert "may have been applied" in lost["error"]["message"]
    # The server did claim: one attempt exists, and the client kept the key it used.
    first = attempts_of(operator, general_task)
    assert len(first) == 1
    pending = agent_cli.stored()["pending"]["claimTask"]
    assert pending["key"] == network.keys("claimTask")[0]

    retried = agent_cli.json("next", "--project", project)

    assert retried["replay"] is True
    assert retried["attempt"]["id"] == first[0]["id"]
    assert network.keys("claimTask") == [pending["key"], pending["key"]]
    assert len(attempts_of(operator, general_task)) == 1
    assert agent_cli.stored()["pending"] == {}
    assert agent_cli.stored()["attempt"]["id"] == first[0]["id"]
    # The replayed claim is a working grant: the agent carries on with it.
    assert agent_cli.json("heartbeat")["attempt"]["id"] == first[0]["id"]


def test_after_a_lost_claim_another_claim_is_refused_until_it_is_resolved(
    agent_cli: AgentCli,
    started: dict[str, Any],
    operator: Principal,
    project: str,
    general_task: str,
    lose: Callable[..., LoseResponses],
) -> None:
    network = lose("claimTask")
    other = new_task(operator.api, project, kind="GENERAL", priority=-1)
    agent_cli.json("next", "--project", project, exit_code=3)

    refused = agent_cli("claim", other, "--project", project, exit_code=2)
    assert "unresolved" in refused.stderr
    assert len(network.keys("claimTask")) == 1  # nothing was sent

    # Resolving it with the original command learns that it did claim.
    resolved = agent_cli.json("next", "--project", project)
    assert resolved["replay"] is True
    assert resolved["task"]["id"] == general_task
    assert attempts_of(operator, other) == []


def test_a_renewal_whose_answer_was_lost_does_not_extend_twice(
    agent_cli: AgentCli,
    started: dict[str, Any],
    project: str,
    general_task: str,
    clock: ManualClock,
    lose: Callable[..., LoseResponses],
) -> None:
    claimed = agent_cli.json("claim", general_task, "--project", project)
    network = lose("renewLease")

    clock.advance(100)
    agent_cli.json("heartbeat", exit_code=3)
    clock.advance(50)
    replayed = agent_cli.json("heartbeat")

    assert replayed["replay"] is True
    keys = network.keys("renewLease")
    assert keys[0] == keys[1]
    # Extended once, at +100 s: 600 s from then, not from the retry at +150 s.
    claimed_at = datetime.fromisoformat(claimed["serverTime"])
    expires = datetime.fromisoformat(replayed["lease"]["expiresAt"])
    assert (expires - claimed_at).total_seconds() == 700
    # ...and the deadline follows the retry's own view: 550 s left, less the margin.
    assert 450 < replayed["secondsLeft"] <= 490

    fresh = agent_cli.json("heartbeat")
    assert fresh["replay"] is False
    assert network.keys("renewLease")[2] != keys[0]


def test_a_lost_submission_is_acknowledged_once(
    agent_cli: AgentCli,
    started: dict[str, Any],
    operator: Principal,
    project: str,
    general_task: str,
    lose: Callable[..., LoseResponses],
) -> None:
    agent_cli.json("claim", general_task, "--project", project)
    agent_cli.json("accept", "--evidence", "checked")
    network = lose("submitAttempt")

    agent_cli.json("submit", "--result", "done", exit_code=3)
    # What the state file keeps for the rerun is what was sent, written once.
    assert network.pending_is_sent(agent_cli.stored(), "submitAttempt")
    changed = agent_cli.json("submit", "--result", "done, differently", exit_code=2)
    assert changed["error"]["code"] == "PENDING_OPERATION"

    acknowledged = agent_cli.json("submit", "--result", "done")
    assert acknowledged["replay"] is True
    assert acknowledged["submission"]["id"]
    assert acknowledged["task"]["state"] == "DONE"
