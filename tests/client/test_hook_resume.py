"""A harness (re)start is reconciliation (docs/agent-cli.md, "Harness hooks"): the
SessionStart hook asks hub what this session holds, brings the state file in step, and
prints what it found with the project's orientation (rules apart from lessons) as the
context the harness injects. It never claims, and never touches a checkout, least of
all while a request is pending (both databases)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from hub.clock import ManualClock
from hub.storage.database import Database
from tests.client.conftest import AgentCli, CodeProject, LoseResponses, ShiftedClock
from tests.client.hook_cli import Hook, recorded, words
from tests.conftest import Principal
from tests.support import knowledge, work
from tests.support.git import commit, git, head
from tests.support.sql import fetch_value

RULE = "Run the migrations before the API tests"
LESSON = "Release notes name every migration they ship"


@pytest.fixture
def hook(agent_cli: AgentCli) -> Hook:
    return Hook(agent_cli)


def start(hook: Hook, *args: str, **payload: Any) -> str:
    """SessionStart as the harness runs it: the context it adds, its wrapping undone."""
    return words(hook("session-start", *args, stdin=recorded("session-start", **payload)).stdout)


def test_a_start_prints_what_the_session_holds_then_the_rules_then_the_lessons(
    hook: Hook,
    started: dict[str, Any],
    operator: Principal,
    project: str,
    general_task: str,
    tmp_path: Path,
) -> None:
    knowledge.revise(operator.api, project, RULE, topic="migrations")
    lesson = knowledge.published(operator.api, project, LESSON)
    attempt = hook.cli.json("claim", general_task, "--project", project)["attempt"]

    context = start(hook, cwd=str(tmp_path))
    assert f"hub session {started['session']['id']}" in context
    assert "(SessionStart, source resume); a start never claims work" in context
    holds = context.index("What this session holds on hub, now:")
    rules = context.index(f"Rules of project {project}, binding:")
    lessons = context.index("Lessons suggested for the task: advice, not rules:")
    assert holds < rules < lessons
    held = context[holds:rules]
    assert f"attempt {attempt['id']} (FRESH, generation 1) on task {general_task}" in held
    assert "its lease holds until" in held and "`hub agent heartbeat`" in held
    assert f"migrations v1: {RULE}" in context[rules:lessons]
    assert f"{lesson['id']} v1: {LESSON}" in context[lessons:]
    assert LESSON not in context[:lessons]  # a lesson is never shown as a rule
    assert "Unresolved requests" not in context


def test_a_start_in_an_idle_session_claims_nothing(
    hook: Hook,
    started: dict[str, Any],
    operator: Principal,
    project: str,
    general_task: str,
    database: Database,
) -> None:
    knowledge.revise(operator.api, project, RULE, topic="migrations")

    for source in ("startup", "resume", "clear", "compact"):
        context = start(hook, "--project", project, source=source)
        assert "- nothing: claim work with `hub agent next --project P`" in context
        assert f"migrations v1: {RULE}" in context
    assert fetch_value(database, "SELECT count(*) FROM attempts") == 0
    assert work.task(operator.api, general_task)["state"] == "OPEN"
    assert hook.cli.stored()["attempt"] is None
    # Without a project to orient in, it says how to name one.
    assert "No orientation: no attempt is held and no project was named" in start(hook)


def test_a_start_reconciles_the_state_file_with_what_happened_meanwhile(
    hook: Hook,
    started: dict[str, Any],
    agent: Callable[..., Any],
    project: str,
    general_task: str,
    clock: ManualClock,
    local_clock: ShiftedClock,
) -> None:
    attempt = hook.cli.json("claim", general_task, "--project", project)["attempt"]
    # The workstation slept through the lease.
    work.expire(clock, attempt)
    local_clock.offset = timedelta(seconds=700)

    context = start(hook)
    assert f"its lease expired at {attempt['expiresAt']}" in context
    assert f"`hub agent recover {general_task}`" in context
    assert hook.cli.stored()["attempt"]["lease_expired"] is True

    work.recovered(agent().api, general_task)  # someone else takes the task over
    context = start(hook)
    assert "- nothing: claim work with" in context
    assert (
        f"The state file's attempt {attempt['id']} on task {general_task} is no longer held "
        "by this session" in context
    )
    assert hook.cli.stored()["attempt"]["is_current"] is False


def test_a_start_leaves_the_checkout_alone_while_a_submission_is_pending(
    hook: Hook,
    started: dict[str, Any],
    operator: Principal,
    code_project: CodeProject,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    lose: Callable[..., LoseResponses],
) -> None:
    task = work.new_task(operator.api, code_project.id, kind="IMPLEMENTATION")
    checkout = code_project.remote.clone(tmp_path / "alice")
    git(checkout, "switch", "-q", "-c", "hub/feature")
    monkeypatch.chdir(checkout)
    hook.cli.json("claim", task, "--project", code_project.id)
    hook.cli.json("worktree", "register")
    candidate = commit(checkout, "feature.py", "feature = 1\n")
    git(checkout, "push", "-q", "-u", "origin", "hub/feature")
    # Someone moves the branch on: the checkout could be fast-forwarded to it.
    other = code_project.remote.clone(tmp_path / "bob")
    git(other, "switch", "-q", "hub/feature")
    moved = commit(other, "more.py", "more = 2\n")
    git(other, "push", "-q", "origin", "hub/feature")
    git(checkout, "fetch", "-q")
    network = lose("submitAttempt")
    hook.cli.json("submit", "--result", "feature done", exit_code=3)

    context = start(hook, cwd=str(checkout))
    assert "`hub agent submit` (submitAttempt)" in context
    assert f"candidateRevision='{candidate}'" in context
    assert "leave the checkout as it is (no pull, rebase or reset)" in context
    assert f"Its worktree: {checkout} on branch hub/feature; hub never moves it" in context
    # The submission took effect, but its answer is what counts: no new claim before it.
    assert "(SUBMITTED): resolve the unresolved requests below first" in context
    # Nothing moved: HEAD, the files, and the branch still behind its upstream.
    assert head(checkout) == candidate
    assert git(checkout, "status", "--porcelain") == ""
    assert git(checkout, "rev-parse", "@{upstream}") == moved
    assert not (checkout / "more.py").exists()
    assert "submitAttempt" in hook.cli.stored()["pending"]  # never resent by a hook

    resolved = hook.cli.json("submit", "--result", "feature done")
    assert resolved["replay"] is True
    assert resolved["submission"]["candidateRevision"] == candidate
    first, retry = network.keys("submitAttempt")
    assert first == retry


def test_a_claim_whose_answer_was_lost_is_reported_not_adopted(
    hook: Hook,
    started: dict[str, Any],
    operator: Principal,
    project: str,
    general_task: str,
    lose: Callable[..., LoseResponses],
) -> None:
    lose("claimTask")
    hook.cli.json("next", "--project", project, exit_code=3)
    claimed = work.task(operator.api, general_task)["currentAttemptId"]  # hub holds it

    context = start(hook)
    assert f"- attempt {claimed} on task {general_task} is this session's on hub but not" in (
        context
    )
    assert "An unresolved claim below is likely its origin" in context
    assert context.count(claimed) == 1 and "`hub agent show`" not in context
    assert "- `hub agent next` (claimTask)" in context
    assert hook.cli.stored()["attempt"] is None  # reported, not taken into the state file

    # The claim's own command resolves it: a replay, under the recorded key.
    resolved = hook.cli.json("next", "--project", project)
    assert (resolved["attempt"]["id"], resolved["replay"]) == (claimed, True)
