"""Expiry and recovery from the command line: an expired attempt is reported with the
recovery command, never dropped silently, and `hub agent recover` claims the task,
shows what the expired attempt left and records the disposition."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from hub.clock import ManualClock
from tests.client.conftest import AgentCli, CodeProject, ShiftedClock
from tests.conftest import Principal
from tests.support import jobs, work
from tests.support.git import git

CliAgent = Callable[[str], AgentCli]


def words(text: str) -> str:
    """Printed text with its line wrapping undone."""
    return " ".join(text.split())


def expire(clock: ManualClock, local_clock: ShiftedClock) -> None:
    """Both clocks move past the 600 s lease, as when the workstation slept."""
    clock.advance(700)
    local_clock.offset = timedelta(seconds=700)


def test_next_refuses_to_drop_an_expired_attempt_and_names_the_recovery_command(
    agent_cli: AgentCli,
    started: dict[str, Any],
    operator: Principal,
    project: str,
    general_task: str,
    clock: ManualClock,
    local_clock: ShiftedClock,
) -> None:
    jobs.define_resource(operator.api, project, "gpu")
    claimed = agent_cli.json("claim", general_task, "--project", project)
    job = agent_cli.json("job", "register", "--operation", "train", "--invocation", "train.py")
    agent_cli.json("job", "observe")
    reserved = agent_cli.json("resources", "acquire", "gpu", "--job", job["job"]["id"])
    (reservation,) = reserved["reservations"]
    other = work.new_task(operator.api, project, kind="GENERAL")
    expire(clock, local_clock)

    refused = agent_cli.json("next", "--project", project, exit_code=1)
    assert refused["error"]["code"] == "ATTEMPT_EXPIRED"
    message = refused["error"]["message"]
    assert f"hub agent recover {general_task}" in message
    assert f"reservation {reservation['id']}" in message  # what it still holds
    assert "--leave-expired" in message
    assert agent_cli.stored()["attempt"]["id"] == claimed["attempt"]["id"]  # not dropped
    assert work.task(operator.api, other)["state"] == "OPEN"  # nothing claimed

    # Ownership-dependent changes say the same, without asking the server.
    late = agent_cli.json("checkpoint", "--summary", "late", exit_code=1)
    assert f"hub agent recover {general_task}" in late["error"]["message"]

    left = agent_cli.json("next", "--project", project, "--leave-expired")
    assert left["task"]["id"] == other
    assert left["leftExpired"] == {"attemptId": claimed["attempt"]["id"], "taskId": general_task}


def test_status_refresh_agrees_with_itself_about_an_expired_lease(
    agent_cli: AgentCli,
    started: dict[str, Any],
    project: str,
    general_task: str,
    clock: ManualClock,
    local_clock: ShiftedClock,
) -> None:
    agent_cli.json("claim", general_task, "--project", project)
    expire(clock, local_clock)

    before = words(agent_cli("status").stdout)
    assert "hub agent status --refresh" in before  # locally, all it can say is: ask

    text = words(agent_cli("status", "--refresh").stdout)
    assert "reconciled with the server: the lease has expired" in text
    assert f"hub agent recover {general_task}" in text
    assert "--refresh" not in text  # no advice to reconcile again
    refreshed = agent_cli.json("status", "--refresh")["attempt"]
    assert refreshed["leaseStanding"] == "EXPIRED"
    assert refreshed["leaseExpired"] is True
    assert refreshed["holdsAuthority"] is False
    assert f"hub agent recover {general_task}" in refreshed["advice"]


def test_status_refresh_while_the_lease_holds_says_so(
    agent_cli: AgentCli, started: dict[str, Any], project: str, general_task: str
) -> None:
    agent_cli.json("claim", general_task, "--project", project)
    text = words(agent_cli("status", "--refresh").stdout)
    assert "reconciled with the server: the lease holds" in text
    refreshed = agent_cli.json("status", "--refresh")["attempt"]
    assert (refreshed["leaseStanding"], refreshed["advice"]) == ("HOLDS", None)


def test_recover_shows_the_packet_and_resumes_the_saved_work(
    agent_cli: AgentCli,
    started: dict[str, Any],
    operator: Principal,
    code_project: CodeProject,
    clock: ManualClock,
    local_clock: ShiftedClock,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    jobs.define_resource(operator.api, code_project.id, "gpu")
    task = work.new_task(operator.api, code_project.id, kind="IMPLEMENTATION", title="train")
    checkout = code_project.remote.clone(tmp_path / "alice")
    git(checkout, "switch", "-q", "-c", "hub/train")
    monkeypatch.chdir(checkout)
    first = agent_cli.json("claim", task, "--project", code_project.id)["attempt"]
    agent_cli.json("worktree", "register")
    agent_cli.json("checkpoint", "--summary", "model half trained", "--branch", "hub/train")
    job = agent_cli.json("job", "register", "--operation", "train", "--invocation", "train.py")
    agent_cli.json("job", "observe")
    agent_cli.json("resources", "acquire", "gpu", "--job", job["job"]["id"])
    (checkout / "model.py").write_text("# unsaved work\n")  # the saved work is uncommitted
    expire(clock, local_clock)

    shown = words(agent_cli("recover", task).stdout)
    assert f"recovery packet of task {task} train" in shown
    assert f"attempt {first['id']} FRESH generation 1" in shown
    assert "model half trained" in shown
    assert f"worktree {checkout} on hub/train" in shown
    assert f"job {job['job']['id']}" in shown and "RUNNING" in shown
    assert "hold" in shown and "gpu" in shown
    assert "hub agent recover --disposition" in shown
    recovery = agent_cli.json("status")["attempt"]
    assert (recovery["kind"], recovery["disposition"]) == ("RECOVERY", None)

    # A recovery attempt records its disposition before anything else.
    early = agent_cli.json("checkpoint", "--summary", "x", exit_code=1)
    assert "hub agent recover --disposition" in early["error"]["message"]
    assert "recordRecoveryDisposition" not in early["error"]["message"]

    disposed = agent_cli.json(
        "recover", "--disposition", "RESUME_SAVED_WORK", "--reason", "go on from the checkpoint"
    )
    assert disposed["attempt"]["disposition"] == "RESUME_SAVED_WORK"
    assert agent_cli.stored()["attempt"]["disposition"] == "RESUME_SAVED_WORK"

    # Its own worktree, dirty with its saved work, registers again.
    resumed = agent_cli.json("worktree", "register")["registered"]
    assert (resumed["dirty"], resumed["resumed"]) == (True, True)

    # The expired attempt's job is still this session's to report: its result ends the hold.
    finished = agent_cli.json("job", "finish", job["job"]["id"], "--exit-status", "0")
    assert [r["resourceKey"] for r in finished["releasedReservations"]] == ["gpu"]


def test_another_agent_recovers_and_restarts_in_one_command(
    agent_cli: AgentCli,
    started: dict[str, Any],
    cli_agent: CliAgent,
    project: str,
    general_task: str,
    clock: ManualClock,
) -> None:
    agent_cli.json("claim", general_task, "--project", project)
    agent_cli.json("checkpoint", "--summary", "a wrong start")
    clock.advance(600)

    rescuer = cli_agent("rescuer")
    done = rescuer.json(
        "recover", general_task, "--disposition", "RESTART", "--reason", "the start was wrong"
    )
    assert done["attempt"]["kind"] == "RECOVERY"
    assert done["attempt"]["disposition"] == "RESTART"
    summaries = [c["summary"] for c in done["recoveryPacket"]["checkpoints"]]
    assert summaries == ["a wrong start"]
    rescuer.json("accept", "--evidence", "redone")
    rescuer.json("submit", "--result", "done properly")

    # The first agent learns it lost the task, in the same words everywhere.
    lost = agent_cli.json("status", "--refresh")["attempt"]
    assert lost["leaseStanding"] == "ENDED"
    assert "hub agent next" in lost["advice"]
