"""`hub agent worktree register` in real git checkouts made in a temporary directory:
the agent types nothing it could discover, and a checkout is never changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.client.conftest import AgentCli, CodeProject
from tests.conftest import Principal
from tests.support import work
from tests.support.git import commit, git, head


def packet_of(operator: Principal, task: str) -> dict[str, Any]:
    found: dict[str, Any] = operator.api(
        "query($t: ID!) { recoveryPacket(taskId: $t) { submissions { id candidateRevision }"
        " worktrees { worktreeId branch releasedAt } } }",
        t=task,
    )["recoveryPacket"]
    return found


def submissions_of(operator: Principal, task: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = packet_of(operator, task)["submissions"]
    return found


def implementation(operator: Principal, project: CodeProject, **fields: Any) -> str:
    return work.new_task(operator.api, project.id, kind="IMPLEMENTATION", **fields)


def test_a_checkout_registers_itself_and_submit_delivers_its_head(
    agent_cli: AgentCli,
    started: dict[str, Any],
    operator: Principal,
    code_project: CodeProject,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    task = implementation(operator, code_project, title="parse the config")
    checkout = code_project.remote.clone(tmp_path / "alice")
    git(checkout, "switch", "-q", "-c", "hub/parse-config")
    monkeypatch.chdir(checkout)
    agent_cli.json("claim", task, "--project", code_project.id)

    registered = agent_cli.json("worktree", "register")
    facts = registered["registered"]
    assert facts["worktreeId"] == f"ws-test:{checkout / '.git'}"  # workstation + git dir
    assert facts["path"] == str(checkout)
    assert facts["branch"] == "hub/parse-config"
    assert facts["baseRevision"] == head(checkout)
    assert facts["repositoryId"] == code_project.repository  # matched by its remote
    assert (facts["dirty"], facts["resumed"]) == (False, False)
    stored = agent_cli.stored()["attempt"]
    assert stored["worktree_path"] == str(checkout)
    assert stored["repository_id"] == code_project.repository
    assert agent_cli.json("status")["attempt"]["worktree"]["branch"] == "hub/parse-config"

    delivered = commit(checkout, "parser.py", "def parse(): ...\n")
    submitted = agent_cli("submit", "--result", "parser written").stdout
    assert work.task(operator.api, task)["state"] == "AWAITING_REVIEW"
    (made,) = submissions_of(operator, task)
    assert made["candidateRevision"] == delivered  # the worktree's HEAD
    # The text output names the submission and what comes next.
    assert made["id"] in submitted and delivered in submitted
    assert "hub agent review next" in submitted


def test_a_dirty_checkout_is_refused_and_left_exactly_as_it_was(
    agent_cli: AgentCli,
    started: dict[str, Any],
    operator: Principal,
    code_project: CodeProject,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    task = implementation(operator, code_project)
    checkout = code_project.remote.clone(tmp_path / "alice")
    git(checkout, "switch", "-q", "-c", "hub/work")
    (checkout / "README.md").write_text("someone's unsaved edit\n")
    (checkout / "scratch.txt").write_text("untracked\n")
    before = git(checkout, "status", "--porcelain")
    monkeypatch.chdir(checkout)
    agent_cli.json("claim", task, "--project", code_project.id)

    refused = agent_cli.json("worktree", "register", exit_code=1)
    assert refused["error"]["code"] == "CHECKOUT_REFUSED"
    message = refused["error"]["message"]
    assert "uncommitted changes (2 paths" in message
    assert "never stashes or resets" in message
    assert f"git worktree add ../{task} -b hub/{task}" in message
    # Nothing was stashed, reset or registered.
    assert git(checkout, "status", "--porcelain") == before
    assert git(checkout, "stash", "list") == ""
    assert (checkout / "README.md").read_text() == "someone's unsaved edit\n"
    assert packet_of(operator, task)["worktrees"] == []
    assert agent_cli.stored()["attempt"]["worktree_id"] is None


def test_a_detached_head_is_refused_with_the_branch_to_create(
    agent_cli: AgentCli,
    started: dict[str, Any],
    operator: Principal,
    code_project: CodeProject,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    task = implementation(operator, code_project)
    checkout = code_project.remote.clone(tmp_path / "alice")
    git(checkout, "switch", "-q", "--detach")
    monkeypatch.chdir(checkout)
    agent_cli.json("claim", task, "--project", code_project.id)

    refused = agent_cli("worktree", "register", exit_code=1)
    assert "detached HEAD" in refused.stderr
    assert f"git switch -c hub/{task}" in refused.stderr


def test_one_worktree_serves_one_task_and_a_linked_worktree_serves_the_next(
    agent_cli: AgentCli,
    started: dict[str, Any],
    operator: Principal,
    code_project: CodeProject,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = implementation(operator, code_project)
    checkout = code_project.remote.clone(tmp_path / "alice")
    git(checkout, "switch", "-q", "-c", "hub/first")
    monkeypatch.chdir(checkout)
    agent_cli.json("claim", first, "--project", code_project.id)
    agent_cli.json("worktree", "register")
    agent_cli.json("relinquish", "--reason", "switching tasks")  # the worktree stays the task's

    second = implementation(operator, code_project)
    agent_cli.json("claim", second, "--project", code_project.id)
    refused = agent_cli.json("worktree", "register", exit_code=1)
    assert refused["error"]["code"] == "CONFLICT"
    assert f"registered to task {first}" in refused["error"]["message"]
    assert "git worktree add" in refused["error"]["message"]

    # A linked worktree of the same clone is a checkout of its own.
    linked = tmp_path / "alice-second"
    git(checkout, "worktree", "add", "-q", str(linked), "-b", "hub/second")
    monkeypatch.chdir(linked)
    registered = agent_cli.json("worktree", "register")["registered"]
    assert registered["worktreeId"] == f"ws-test:{checkout / '.git' / 'worktrees' / linked.name}"
    assert registered["branch"] == "hub/second"


def test_a_checkout_of_another_repository_says_how_to_name_one(
    agent_cli: AgentCli,
    started: dict[str, Any],
    operator: Principal,
    code_project: CodeProject,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    task = implementation(operator, code_project)
    checkout = code_project.remote.clone(tmp_path / "alice")
    git(checkout, "switch", "-q", "-c", "hub/work")
    git(checkout, "remote", "set-url", "origin", "https://example.invalid/other/repo.git")
    monkeypatch.chdir(checkout)
    agent_cli.json("claim", task, "--project", code_project.id)

    refused = agent_cli.json("worktree", "register", exit_code=2)
    assert "none of them is a repository of the project" in refused["error"]["message"]
    assert code_project.repository in refused["error"]["message"]
    # Said explicitly, it is taken.
    named = agent_cli.json("worktree", "register", "--repository", code_project.repository)
    assert named["registered"]["repositoryId"] == code_project.repository
