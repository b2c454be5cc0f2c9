"""Past the conservative local deadline the client refuses on its own (docs/design.md,
"Offline work").

The workstation's clock is moved by injecting a clock into the CLI; the coordinator's
by the server's ManualClock. Nobody sleeps.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from hub.clock import ManualClock
from tests.client.conftest import AgentCli, LoseResponses, ShiftedClock
from tests.conftest import Principal


def checkpoints_of(operator: Principal, task_id: str) -> list[dict[str, Any]]:
    data = operator.api(
        "query($id: ID!) { recoveryPacket(taskId: $id) { checkpoints { id summary } } }",
        id=task_id,
    )
    checkpoints: list[dict[str, Any]] = data["recoveryPacket"]["checkpoints"]
    return checkpoints


def test_ownership_changes_are_refused_locally_past_the_deadline(
    agent_cli: AgentCli,
    started: dict[str, Any],
    operator: Principal,
    project: str,
    general_task: str,
    local_clock: ShiftedClock,
    lose: Callable[..., LoseResponses],
) -> None:
    agent_cli.json("claim", general_task, "--project", project)
    network = lose("nothing")  # passes everything through and records it
    local_clock.offset = timedelta(minutes=9, seconds=1)  # 540 s usable, then nothing

    for command in (
        ["checkpoint", "--summary", "late"],
        ["heartbeat"],
        ["accept", "--evidence", "late"],
        ["submit", "--result", "late"],
    ):
        refused = agent_cli.json(*command, exit_code=1)
        assert refused["error"]["code"] == "LOCAL_DEADLINE_PASSED"
        assert "status --refresh" in refused["error"]["message"]
    assert network.sent == []  # not one request reached the server
    assert checkpoints_of(operator, general_task) == []

    status = agent_cli.json("status")
    assert status["attempt"]["pastLocalDeadline"] is True
    assert status["attempt"]["secondsLeft"] < 0
    assert "passed" in agent_cli("status").stdout


def test_reconciling_with_the_server_gives_a_fresh_deadline_while_the_lease_holds(
    agent_cli: AgentCli,
    started: dict[str, Any],
    project: str,
    general_task: str,
    clock: ManualClock,
    local_clock: ShiftedClock,
) -> None:
    agent_cli.json("claim", general_task, "--project", project)
    local_clock.offset = timedelta(hours=1)  # e.g. the laptop slept
    agent_cli.json("heartbeat", exit_code=1)

    # The coordinator saw only 200 s pass: the lease still holds, 400 s left.
    clock.advance(200)
    refreshed = agent_cli.json("status", "--refresh")
    assert refreshed["attempt"]["pastLocalDeadline"] is False
    assert 300 < refreshed["attempt"]["secondsLeft"] <= 340
    assert agent_cli.json("heartbeat")["replay"] is False

    # Now it lapses on the coordinator: reconciling says so and the refusal stays.
    clock.advance(601)
    lapsed = agent_cli.json("status", "--refresh")
    assert lapsed["attempt"]["pastLocalDeadline"] is True
    assert agent_cli.json("checkpoint", "--summary", "x", exit_code=1)["error"]["code"] == (
        "LOCAL_DEADLINE_PASSED"
    )


def test_a_lease_expired_answer_stops_later_changes_locally(
    agent_cli: AgentCli,
    started: dict[str, Any],
    project: str,
    general_task: str,
    clock: ManualClock,
    lose: Callable[..., LoseResponses],
) -> None:
    agent_cli.json("claim", general_task, "--project", project)
    clock.advance(600)  # equality is expired
    expired = agent_cli.json("heartbeat", exit_code=1)
    assert expired["error"]["code"] == "LEASE_EXPIRED"

    network = lose("nothing")
    refused = agent_cli.json("checkpoint", "--summary", "x", exit_code=1)
    assert refused["error"]["code"] == "LOCAL_DEADLINE_PASSED"
    assert network.sent == []


def test_an_operation_sent_before_the_deadline_can_still_be_resolved_after_it(
    agent_cli: AgentCli,
    started: dict[str, Any],
    operator: Principal,
    project: str,
    general_task: str,
    local_clock: ShiftedClock,
    lose: Callable[..., LoseResponses],
) -> None:
    agent_cli.json("claim", general_task, "--project", project)
    lose("recordCheckpoint")
    agent_cli.json("checkpoint", "--summary", "pushed", exit_code=3)
    local_clock.offset = timedelta(hours=1)

    # Learning what happened is reconciliation, not a new change: it replays.
    resolved = agent_cli.json("checkpoint", "--summary", "pushed")
    assert resolved["replay"] is True
    assert [c["summary"] for c in checkpoints_of(operator, general_task)] == ["pushed"]
    # The answer reports the lease as the server sees it now, so it reconciles too:
    # the coordinator saw no time pass, and the agent has a fresh deadline.
    assert resolved["pastLocalDeadline"] is False
    assert agent_cli.json("checkpoint", "--summary", "more")["replay"] is False
