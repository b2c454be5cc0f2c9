"""`hub agent resources acquire|release` and jobs' reservations, with the state file kept
in step: what the attempt holds is what the state file says it holds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.client.conftest import AgentCli, LoseResponses
from tests.conftest import Principal
from tests.support import jobs, work

CliAgent = Callable[[str], AgentCli]


def held(operator: Principal, project: str) -> dict[str, list[str]]:
    """Resource key -> the attempts whose reservations block it now."""
    return {
        status["resource"]["key"]: [r["attemptId"] for r in status["reservations"]]
        for status in jobs.resources(operator.api, project)
    }


def test_resources_are_reserved_by_key_and_released_all_at_once(
    agent_cli: AgentCli,
    started: dict[str, Any],
    cli_agent: CliAgent,
    operator: Principal,
    project: str,
    general_task: str,
) -> None:
    jobs.define_resource(operator.api, project, "gpu")
    jobs.define_resource(operator.api, project, "cores", mode="CAPACITY", capacity=8)
    attempt = agent_cli.json("claim", general_task, "--project", project)["attempt"]["id"]

    reserved = agent_cli.json("resources", "acquire", "gpu", "cores:6")
    assert sorted((r["resourceKey"], r["units"]) for r in reserved["reservations"]) == [
        ("cores", 6), ("gpu", 1),
    ]  # fmt: skip
    ids = sorted(r["id"] for r in reserved["reservations"])
    assert sorted(agent_cli.stored()["attempt"]["reservation_ids"]) == ids
    assert held(operator, project) == {"gpu": [attempt], "cores": [attempt]}

    # All or nothing, for someone else: the gpu is taken, so the free cores are not reserved.
    other = cli_agent("other")
    other.json("claim", work.new_task(operator.api, project, kind="GENERAL"), "--project", project)
    refused = other.json("resources", "acquire", "gpu", "cores:2", exit_code=1)
    assert refused["error"]["code"] == "BLOCKED"
    assert other.stored()["attempt"]["reservation_ids"] == []
    unknown = other.json("resources", "acquire", "tpu", exit_code=2)
    assert "no resource tpu" in unknown["error"]["message"]

    released = agent_cli.json("resources", "release", "--reason", "done with them")
    assert {r["state"] for r in released["reservations"]} == {"RELEASED"}
    assert agent_cli.stored()["attempt"]["reservation_ids"] == []
    assert held(operator, project) == {"gpu": [], "cores": []}
    nothing = agent_cli.json("resources", "release", exit_code=2)
    assert "holds no reservation" in nothing["error"]["message"]


def test_a_lost_acquire_is_resolved_by_rerunning_it(
    agent_cli: AgentCli,
    started: dict[str, Any],
    operator: Principal,
    project: str,
    general_task: str,
    lose: Callable[..., LoseResponses],
) -> None:
    jobs.define_resource(operator.api, project, "gpu")
    agent_cli.json("claim", general_task, "--project", project)
    network = lose("acquireResources")

    agent_cli.json("resources", "acquire", "gpu", exit_code=3)
    # What the state file keeps for the rerun is what was sent, written once.
    assert network.pending_is_sent(agent_cli.stored(), "acquireResources")
    again = agent_cli.json("resources", "acquire", "gpu")
    assert again["replay"] is True
    assert len(set(network.keys("acquireResources"))) == 1
    assert agent_cli.stored()["attempt"]["reservation_ids"] == [again["reservations"][0]["id"]]


def test_a_jobs_reservation_ends_with_its_result(
    agent_cli: AgentCli,
    started: dict[str, Any],
    operator: Principal,
    project: str,
    general_task: str,
    lose: Callable[..., LoseResponses],
) -> None:
    jobs.define_resource(operator.api, project, "gpu")
    agent_cli.json("claim", general_task, "--project", project)
    network = lose("registerJob")
    lost = agent_cli.json(
        "job", "register", "--operation", "train", "--invocation", "train.py", exit_code=3
    )
    assert lost["error"]["uncertain"] is True
    # The rerun sends the same job id under the same key: a replay, not a second job.
    job = agent_cli.json("job", "register", "--operation", "train", "--invocation", "train.py")
    assert job["replay"] is True
    assert len(set(network.keys("registerJob"))) == 1
    sent = [b["variables"]["input"] for b in network.sent if "registerJob(" in b["query"]]
    assert len(sent) == 2 and sent[0]["jobId"] == sent[1]["jobId"]
    assert agent_cli.stored()["attempt"]["job_ids"] == [job["job"]["id"]]

    agent_cli.json("resources", "acquire", "gpu", "--job", job["job"]["id"])
    finished = agent_cli.json("job", "finish", "--exit-status", "0")
    assert [r["resourceKey"] for r in finished["releasedReservations"]] == ["gpu"]
    assert agent_cli.stored()["attempt"]["reservation_ids"] == []
