"""An agent is told what the work is: `next`, `next --json`, `show` and `review show` carry
the task's outcome, its acceptance criteria with their revision, the repository and
branch where known, and on a task sent back for revision the findings to address."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.client.conftest import AgentCli, CodeProject, deliver_from
from tests.conftest import Principal
from tests.support import work
from tests.support.git import commit, git

CliAgent = Callable[[str], AgentCli]


def retry_task(operator: Principal, project: CodeProject) -> str:
    return work.new_task(
        operator.api,
        project.id,
        kind="IMPLEMENTATION",
        title="retry the upload",
        outcome="uploads survive a dropped connection",
        acceptanceCriteria=["retries three times", "logs each retry"],
    )


def test_next_shows_the_outcome_criteria_and_repository(
    agent_cli: AgentCli, started: dict[str, Any], operator: Principal, code_project: CodeProject
) -> None:
    task = retry_task(operator, code_project)

    text = agent_cli("next", "--project", code_project.id).stdout
    assert "outcome: uploads survive a dropped connection" in text
    assert "acceptance criteria (revision 1):" in text
    assert "1. retries three times" in text and "2. logs each retry" in text
    # The remote as the project records it (normalised: no trailing .git).
    recorded = code_project.remote.url.removesuffix(".git")
    assert f"repository: {code_project.repository} {recorded} (default branch main)" in text
    assert "hub agent worktree register" in text  # what to do next

    shown = agent_cli.json("show")
    assert shown["task"]["id"] == task
    assert shown["brief"]["acceptanceCriteria"] == ["retries three times", "logs each retry"]


def test_next_json_carries_the_task_content(
    agent_cli: AgentCli, started: dict[str, Any], operator: Principal, code_project: CodeProject
) -> None:
    task = retry_task(operator, code_project)

    claimed = agent_cli.json("next", "--project", code_project.id)
    assert claimed["task"]["id"] == task
    assert claimed["task"]["outcome"] == "uploads survive a dropped connection"
    assert claimed["task"]["acceptanceCriteria"] == ["retries three times", "logs each retry"]
    brief = claimed["brief"]
    assert brief["criteriaRevision"] == 1
    assert brief["repository"] == {
        "id": code_project.repository,
        "remoteUrl": code_project.remote.url.removesuffix(".git"),
        "defaultBranch": "main",
    }
    assert brief["branch"] is None  # nobody has worked on it yet
    assert brief["openFindings"] == []


def test_a_task_sent_back_for_revision_shows_the_findings_to_address(
    agent_cli: AgentCli,
    started: dict[str, Any],
    cli_agent: CliAgent,
    operator: Principal,
    code_project: CodeProject,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    task = retry_task(operator, code_project)
    checkout = code_project.remote.clone(tmp_path / "alice")
    git(checkout, "switch", "-q", "-c", "hub/retry")
    monkeypatch.chdir(checkout)
    deliver_from(agent_cli, checkout, code_project.id, task)
    reviewer = cli_agent("reviewer")
    reviewer.json("review", "next", "--project", code_project.id)
    reviewer.json(
        "review", "reject", "--summary", "no tests",
        "--finding", "BLOCKER:the retry is untested:add a test that drops the connection twice",
        "--finding", "NOTE:log wording:say which attempt it is",
    )  # fmt: skip
    # The criteria change while the task waits for revision: a new revision.
    revision = work.task(operator.api, task)["revision"]
    edited = operator.api.mutate(
        "editTask",
        {"taskId": task, "expectedRevision": revision,
         "acceptanceCriteria": ["retries three times", "logs each retry", "gives up cleanly"]},
        "... on TaskPayload { task { criteriaRevision } }",
    )  # fmt: skip
    assert edited["task"]["criteriaRevision"] == 2

    text = agent_cli("next", "--project", code_project.id).stdout
    assert "acceptance criteria (revision 2):" in text and "3. gives up cleanly" in text
    assert "work branch: hub/retry" in text
    assert "open findings to address (from earlier reviews):" in text
    assert (
        "BLOCKER the retry is untested — remedy: add a test that drops the connection twice" in text
    )
    assert "NOTE log wording — remedy: say which attempt it is" in text

    brief = agent_cli.json("status")["attempt"]  # the same attempt, in the state file
    assert brief["taskId"] == task
    shown = agent_cli.json("show")["brief"]
    assert [(f["severity"], f["title"], f["remedy"]) for f in shown["openFindings"]] == [
        ("BLOCKER", "the retry is untested", "add a test that drops the connection twice"),
        ("NOTE", "log wording", "say which attempt it is"),
    ]
    assert shown["branch"] == "hub/retry"
    assert shown["criteriaRevision"] == 2

    # The task's worktree here is the new attempt's too: commit and submit, nothing more.
    assert agent_cli.json("status")["attempt"]["worktree"]["path"] == str(checkout)
    again = commit(checkout, "retry_test.py", "def test_retry(): ...\n")
    agent_cli.json("reconcile-criteria", "--note", "gives up after the third retry")
    resubmitted = agent_cli.json("submit", "--result", "tested", "--handoff", "ready")
    assert resubmitted["submission"]["candidateRevision"] == again
    # Each open finding is listed once, however many submissions the task has.
    assert len(agent_cli.json("show", task)["brief"]["openFindings"]) == 2


def test_review_show_includes_the_task_it_delivers(
    agent_cli: AgentCli,
    started: dict[str, Any],
    cli_agent: CliAgent,
    operator: Principal,
    code_project: CodeProject,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    task = retry_task(operator, code_project)
    checkout = code_project.remote.clone(tmp_path / "alice")
    git(checkout, "switch", "-q", "-c", "hub/retry")
    monkeypatch.chdir(checkout)
    candidate = deliver_from(agent_cli, checkout, code_project.id, task)
    reviewer = cli_agent("reviewer")

    claimed = reviewer("review", "next", "--project", code_project.id).stdout
    assert "outcome: uploads survive a dropped connection" in claimed
    assert "1. retries three times" in claimed
    assert f"candidate revision {candidate}" in claimed

    shown = reviewer("review", "show").stdout
    assert "acceptance criteria (revision 1):" in shown
    assert "work branch: hub/retry" in shown
    assert f"repository: {code_project.repository}" in shown
    as_json = reviewer.json("review", "show")
    assert as_json["task"]["outcome"] == "uploads survive a dropped connection"
    assert as_json["task"]["acceptanceCriteria"] == ["retries three times", "logs each retry"]
    assert as_json["brief"]["branch"] == "hub/retry"
    assert as_json["brief"]["repository"]["id"] == code_project.repository
