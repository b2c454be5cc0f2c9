"""`hub project …` end to end: a real server, a real database (both backends), the CLI."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.client.conftest import AgentCli
from tests.client.planning_cli import HubCli
from tests.conftest import Principal


@pytest.fixture
def person(server: str, operator: Principal, tmp_path: Path) -> HubCli:
    """The operator at a terminal, HUB_TOKEN set to their personal token."""
    return HubCli(server, tmp_path / "no-agent-state.json", token=operator.token)


def test_a_project_is_created_bound_to_its_repository_and_found_by_any_name(
    person: HubCli,
) -> None:
    made = person.json(
        "project", "create", "Hub", "--description", "coordination", "--alias", "hub"
    )["project"]
    assert (made["name"], made["description"], made["aliases"]) == ("Hub", "coordination", ["hub"])
    assert made["policy"]["revision"] == 1 and made["repositories"] == []

    added = person.json(
        "project", "add-repo", "hub", "git@github.com:acme/hub.git", "--default-branch", "trunk"
    )
    assert added["projectId"] == made["id"]
    assert added["repository"]["binding"] == "github.com/acme/hub"
    assert added["repository"]["defaultBranch"] == "trunk"

    for name in (made["id"], "hub", "https://github.com/acme/hub"):
        shown = person.json("project", "show", name)["project"]
        assert shown["id"] == made["id"]
        assert [r["binding"] for r in shown["repositories"]] == ["github.com/acme/hub"]

    words = person("project", "show", "hub").stdout
    for text in ("Hub", "coordination", "github.com/acme/hub into trunk", "policy revision: 1"):
        assert text in words, words

    missing = person.json("project", "show", "nowhere", exit_code=1)
    assert missing["error"]["code"] == "NOT_FOUND"


def test_projects_are_listed_a_page_at_a_time(person: HubCli) -> None:
    ids = [person.json("project", "create", f"P{n}")["project"]["id"] for n in range(3)]

    page = person.json("project", "list", "--limit", "2")
    assert [p["id"] for p in page["projects"]] == ids[:2]
    assert page["pageInfo"]["hasNextPage"] is True
    rest = person.json("project", "list", "--after", page["pageInfo"]["endCursor"])
    assert [p["id"] for p in rest["projects"]] == ids[2:]
    assert [
        p["id"] for p in person.json("project", "list", "--limit", "1", "--all")["projects"]
    ] == ids
    words = person("project", "list", "--limit", "2").stdout
    assert ids[0] in words and "--after" in words


def test_an_operator_shows_and_sets_the_policy(person: HubCli) -> None:
    person.json("project", "create", "Hub", "--alias", "hub")
    shown = person.json("project", "policy", "show", "hub")
    assert shown["policy"]["revision"] == 1
    assert shown["policy"]["reviewPolicy"] == "AGENT"

    written = person.json(
        "project", "policy", "set", "hub", "--expected-revision", "1",
        "--review-policy", "AGENT_AND_HUMAN", "--required-human-approvals", "2",
        "--recovery-mode", "OPERATOR_RELEASE", "--lease-seconds", "900",
        "--heartbeat-seconds", "90", "--max-active-attempts-per-session", "2",
        "--human-may-approve-own-agent", "--agents-may-revise-rules",
    )  # fmt: skip
    policy = written["policy"]
    assert policy["revision"] == 2
    assert (policy["reviewPolicy"], policy["requiredHumanApprovals"]) == ("AGENT_AND_HUMAN", 2)
    assert (policy["recoveryMode"], policy["leaseSeconds"]) == ("OPERATOR_RELEASE", 900)
    assert (policy["heartbeatSeconds"], policy["maxActiveAttemptsPerSession"]) == (90, 2)
    assert policy["humanMayApproveOwnAgent"] is True and policy["agentsMayReviseRules"] is True
    assert policy["requiredAgentApprovals"] == 1  # left out: kept

    words = person("project", "policy", "show", "hub").stdout
    assert "AGENT_AND_HUMAN: 1 agent approval(s) and 2 human approval(s)" in words

    stale = person.json(
        "project", "policy", "set", "hub", "--expected-revision", "1", "--lease-seconds", "60",
        exit_code=1,
    )  # fmt: skip
    assert stale["error"]["code"] == "CONFLICT"
    assert "nothing was changed" in stale["error"]["message"]
    assert person.json("project", "policy", "show", "hub")["policy"]["leaseSeconds"] == 900

    nothing = person.json("project", "policy", "set", "hub", exit_code=2)
    assert "nothing to change" in nothing["error"]["message"]
    out_of_range = person("project", "policy", "set", "hub", "--lease-seconds", "5", exit_code=1)
    assert "--lease-seconds:" in out_of_range.stderr


def test_only_an_operator_sets_policy_and_the_refusal_names_the_command(
    person: HubCli,
    server: str,
    tmp_path: Path,
    make_principal: Callable[..., Principal],
    agent_cli: AgentCli,
    started: dict[str, Any],
) -> None:
    person.json("project", "create", "Hub", "--alias", "hub")
    human = make_principal(kind="human")
    colleague = HubCli(server, tmp_path / "none.json", token=human.token)
    refused = colleague.json(
        "project", "policy", "set", "hub", "--lease-seconds", "60", exit_code=1
    )
    assert refused["error"]["code"] == "PERMISSION_DENIED"
    message = refused["error"]["message"]
    assert "cannot run `hub project policy set`" in message
    assert "setProjectPolicy" not in message
    assert "--token or HUB_TOKEN" in message

    # An agent's session reads and creates projects, and is refused policy the same way.
    agent = HubCli(None, agent_cli.state, secrets=[agent_cli.stored()["session"]["token"]])
    assert agent.json("project", "policy", "show", "hub")["policy"]["revision"] == 1
    assert agent.json("project", "create", "Agent's")["project"]["name"] == "Agent's"
    denied = agent.json("project", "policy", "set", "hub", "--lease-seconds", "60", exit_code=1)
    assert "a session token cannot run `hub project policy set`" in denied["error"]["message"]
