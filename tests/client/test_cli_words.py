"""Messages are written for the interface that shows them: at the command line a server
problem names the `hub agent` command to run, never the GraphQL operation, and review
counts say what the policy asks for."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hub.client.advice import for_cli
from hub.clock import ManualClock
from tests.client.conftest import AgentCli, LoseResponses
from tests.conftest import AgentSession, Principal
from tests.support import work
from tests.support.workflow import deliver, sha, take_to_done

CliAgent = Callable[[str], AgentCli]


def test_operations_are_said_as_commands() -> None:
    assert for_cli("record acceptance (recordAcceptance) first") == (
        "record acceptance (`hub agent accept`) first"
    )
    assert for_cli("task tsk_1a2's lease has expired: use claimRecovery") == (
        "task tsk_1a2's lease has expired: use `hub agent recover tsk_1a2`"
    )
    assert for_cli("registerWorktree before delivering code") == (
        "`hub agent worktree register` before delivering code"
    )
    assert for_cli("requires an operator to release it (releaseTask)") == (
        "requires an operator to release it (an operator's release, on the dashboard)"
    )
    # Words that merely contain an operation's name are left alone.
    assert for_cli("claimTasks and preclaimTask stay") == "claimTasks and preclaimTask stay"


def test_a_refused_submit_names_the_accept_command(
    agent_cli: AgentCli, started: dict[str, Any], project: str, general_task: str
) -> None:
    agent_cli.json("claim", general_task, "--project", project)

    refused = agent_cli.json("submit", "--result", "done", exit_code=1)
    assert "(`hub agent accept`)" in refused["error"]["message"]
    assert "recordAcceptance" not in refused["error"]["message"]
    assert "(recordAcceptance)" in refused["error"]["serverMessage"]  # the API's own words
    text = agent_cli("submit", "--result", "done", exit_code=1).stderr
    assert "hub agent accept" in text and "recordAcceptance" not in text


def test_code_without_a_worktree_names_the_register_command(
    agent_cli: AgentCli, started: dict[str, Any], operator: Principal, project: str
) -> None:
    work.add_repository(operator.api, project)
    task = work.new_task(operator.api, project, kind="IMPLEMENTATION")
    agent_cli.json("claim", task, "--project", project)

    refused = agent_cli("submit", "--result", "x", "--candidate-revision", sha("b"), exit_code=1)
    assert "`hub agent worktree register` before delivering code" in refused.stderr
    assert "registerWorktree" not in refused.stderr


def test_an_expired_task_names_the_recover_command(
    agent_cli: AgentCli,
    started: dict[str, Any],
    cli_agent: CliAgent,
    project: str,
    general_task: str,
    clock: ManualClock,
) -> None:
    agent_cli.json("claim", general_task, "--project", project)
    clock.advance(600)

    refused = cli_agent("other").json("claim", general_task, "--project", project, exit_code=1)
    assert f"use `hub agent recover {general_task}`" in refused["error"]["message"]
    assert "claimRecovery" not in refused["error"]["message"]


def test_a_pending_request_is_shown_as_the_command_to_rerun(
    agent_cli: AgentCli,
    started: dict[str, Any],
    project: str,
    general_task: str,
    lose: Callable[..., LoseResponses],
) -> None:
    lose("claimTask")
    lost = agent_cli.json("next", "--project", project, exit_code=3)
    assert "(`hub agent next`) may have been applied" in lost["error"]["message"]
    status = " ".join(agent_cli("status").stdout.split())
    assert "pending `hub agent next`" in status and "rerun that command" in status
    assert agent_cli.json("status")["pending"][0]["command"] == "hub agent next"


def test_review_counts_say_what_the_policy_asks_for(
    operator: Principal, agent: Callable[..., AgentSession], cli_agent: CliAgent
) -> None:
    delivery = deliver(operator.api, agent().api)  # policy AGENT: one agent approval
    reviewer = cli_agent("reviewer")
    reviewer.json("review", "next", "--project", delivery.project)
    said = " ".join(reviewer("review", "approve", "--summary", "clean").stdout.split())
    assert "policy AGENT: agent approvals 1 of 1, no human review asked" in said
    assert "0 of 0" not in said and "0/0" not in said


def test_a_done_submission_is_not_shown_as_waiting_for_integration(
    operator: Principal, agent: Callable[..., AgentSession], cli_agent: CliAgent
) -> None:
    delivery = deliver(operator.api, agent().api)
    take_to_done(agent().api, agent().api, delivery)
    said = " ".join(cli_agent("reader")("review", "show", delivery.submission).stdout.split())
    assert "integrated and validated: done" in said
    assert "ready for integration" not in said
