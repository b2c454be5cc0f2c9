"""`hub task create` searches before it creates (docs/design.md, "Duplicate work"): a
likely duplicate that is unfinished stops it unless --force, --duplicate-of or
--related-to says what to do; `hub task show` names a duplicate's original and a
reopened task's condition. A real server and database (both backends), the CLI."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.client.conftest import AgentCli
from tests.client.planning_cli import HubCli
from tests.conftest import Principal
from tests.support import work


@pytest.fixture
def person(server: str, operator: Principal, tmp_path: Path) -> HubCli:
    return HubCli(server, tmp_path / "no-agent-state.json", token=operator.token)


@pytest.fixture
def project(person: HubCli) -> str:
    return str(person.json("project", "create", "Uploads", "--alias", "up")["project"]["id"])


def create(cli: HubCli, title: str, *args: str, exit_code: int = 0) -> dict[str, Any]:
    return cli.json(
        "task", "create", "--project", "up", "--kind", "GENERAL", "--title", title,
        "-c", "it works", *args, exit_code=exit_code,
    )  # fmt: skip


def titles(project: str, operator: Principal) -> list[str]:
    found = operator.api(
        "query($p: ID!) { tasks(projectId: $p) { edges { node { title } } } }", p=project
    )["tasks"]["edges"]
    return [edge["node"]["title"] for edge in found]


def test_a_likely_duplicate_that_is_open_stops_the_create(
    person: HubCli, project: str, operator: Principal
) -> None:
    first = create(person, "Resume interrupted uploads")["task"]["id"]

    refused = create(person, "Resume uploads when interrupted", exit_code=1)
    error = refused["error"]
    assert (error["kind"], error["code"]) == ("LikelyDuplicate", "LIKELY_DUPLICATE")
    [match] = error["details"]["similar"]
    assert match["task"]["id"] == first
    assert (match["likelyDuplicate"], match["unfinished"]) == (True, True)
    assert titles(project, operator) == ["Resume interrupted uploads"]  # nothing created

    text = person(
        "task", "create", "--project", "up", "--kind", "GENERAL", "--title",
        "Resume uploads when interrupted", "-c", "it works", exit_code=1,
    ).stderr  # fmt: skip
    expected = [
        "LIKELY_DUPLICATE", first, "Resume interrupted uploads", "3 of 3 words",
        "likely duplicate", "nothing was", "--force", f"--duplicate-of {first}",
    ]  # fmt: skip
    for words in expected:
        assert words in text, text

    # --force creates it anyway, and shows the close match it found.
    forced = create(person, "Resume uploads when interrupted", "--force")
    assert [m["task"]["id"] for m in forced["similar"]] == [first]
    assert forced["links"] == []
    text = person(
        "task", "create", "--project", "up", "--kind", "GENERAL", "--title",
        "Resume interrupted uploads, third copy", "-c", "it works", "--force",
    ).stdout  # fmt: skip
    assert "similar tasks" in text and first in text, text


def test_a_weak_match_or_a_finished_one_does_not_stop_it(
    person: HubCli, project: str, operator: Principal
) -> None:
    done = work.new_task(operator.api, project, title="Resume interrupted uploads")
    work.close_task(operator.api, done, "REJECTED", note="not needed")
    create(person, "Dark mode for the upload page")

    made = create(person, "Resume interrupted uploads")  # closed: shown, not in the way
    [closed] = [m for m in made["similar"] if m["task"]["id"] == done]
    assert closed["task"]["closeReason"] == "REJECTED"
    assert closed["unfinished"] is False
    # One shared word of three ("uploads"): not likely.
    made = create(person, "Upload size limits")
    assert all(not m["likelyDuplicate"] for m in made["similar"])


def test_duplicate_of_and_related_to_create_it_linked(
    person: HubCli, project: str, operator: Principal
) -> None:
    first = create(person, "Resume interrupted uploads")["task"]["id"]

    duplicate = create(person, "Resume uploads that were interrupted", "--duplicate-of", first)
    dup_id = duplicate["task"]["id"]
    assert duplicate["links"] == [{"taskId": dup_id, "kind": "DUPLICATE_OF", "otherTaskId": first}]
    related = create(person, "Resume interrupted uploads on mobile", "--related-to", first)
    assert related["links"][0]["kind"] == "RELATED"

    # The duplicate is not offered; the related one is.
    ready = person.json("task", "ready", "--project", "up")["tasks"]
    assert dup_id not in [t["id"] for t in ready]
    assert related["task"]["id"] in [t["id"] for t in ready]

    shown = person.json("task", "show", dup_id)["task"]
    assert shown["duplicateOf"]["id"] == first
    text = person("task", "show", dup_id).stdout
    assert f"duplicate of: {first}" in text and "not claimable" in text, text

    # A link to a task that is not there, or of another project, creates nothing.
    other_project = work.create_project(operator.api, "elsewhere")
    foreign = work.new_task(operator.api, other_project, title="Foreign")
    for target in (foreign, "tsk_00000000000000000000000000"):
        refused = create(person, "Something new", "--duplicate-of", target, exit_code=2)
        assert "nothing was created" in refused["error"]["message"]
    assert "Something new" not in titles(project, operator)


def test_a_duplicate_closed_and_a_reopened_task_say_so(
    person: HubCli, project: str, operator: Principal
) -> None:
    original = create(person, "Resume interrupted uploads")["task"]["id"]
    copy = create(person, "Copy of the upload resume work", "--force")["task"]["id"]
    person.json("task", "close", copy, "--reason", "DUPLICATE", "--related", original)
    text = person("task", "show", copy).stdout
    assert f"duplicate of: {original}" in text and "DUPLICATE" in text, text
    assert "not claimable" not in text  # it is closed anyway

    later = create(person, "Offline queue")["task"]["id"]
    person.json("task", "close", later, "--reason", "DEFERRED", "--reopen-condition", "v2 ships")
    person.json("task", "reopen", later, "--reason", "v2 shipped")
    text = person("task", "show", later).stdout
    assert "reopened: it was deferred until: v2 ships" in text, text


def test_an_agent_submits_already_satisfied_from_the_command_line(
    agent_cli: AgentCli,
    started: dict[str, Any],
    cli_agent: Callable[[str], AgentCli],
    operator: Principal,
) -> None:
    project = work.create_project(operator.api, "Satisfied")
    task = work.new_task(operator.api, project, kind="IMPLEMENTATION", title="Retry uploads")
    agent_cli.json("claim", task, "--project", project)
    revision = "5" * 40
    evidence = agent_cli.json(
        "job", "evidence", "--required-check", "unit", "--check", "unit=PASS",
        "--check-definition-revision", "ci.yml@1", "--config-fingerprint", "py3.11",
        "--revision", revision,
    )["evidence"]["id"]  # fmt: skip

    # Evidence is required: refused by the server, nothing submitted.
    refused = agent_cli.json(
        "submit", "--outcome", "ALREADY_SATISFIED", "--result", "it already retries",
        "--candidate-revision", revision, exit_code=1,
    )  # fmt: skip
    assert refused["error"]["code"] == "VALIDATION_FAILED"
    assert "evidence" in refused["error"]["message"]
    assert work.task(operator.api, task)["state"] == "IN_PROGRESS"

    said = agent_cli(
        "submit", "--outcome", "ALREADY_SATISFIED", "--result", "it already retries",
        "--candidate-revision", revision, "--evidence-id", evidence,
    ).stdout  # fmt: skip
    assert "ALREADY_SATISFIED" in said and "hub agent review next" in said, said
    assert work.task(operator.api, task)["state"] == "AWAITING_REVIEW"

    reviewer = cli_agent("reviewer")
    reviewer.json("review", "next", "--project", project)
    reviewer.json("review", "approve", "--summary", "the retry is there and tested")
    assert work.task(operator.api, task)["state"] == "DONE"
