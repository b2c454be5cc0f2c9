"""`hub task …` end to end: a real server, a real database (both backends), the CLI.

People plan with their personal token (HUB_TOKEN); agents with the session their
`hub agent start` left in the state file. Each command prints words or, with `--json`,
one JSON object carrying the records as the API returns them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hub.cli import remote
from tests.client.conftest import AgentCli, LoseResponses
from tests.client.planning_cli import HubCli
from tests.conftest import Principal
from tests.support import work
from tests.support.workflow import deliver


@pytest.fixture
def person(server: str, operator: Principal, tmp_path: Path) -> HubCli:
    """The operator at a terminal, HUB_TOKEN set to their personal token."""
    return HubCli(server, tmp_path / "no-agent-state.json", token=operator.token)


@pytest.fixture
def project(person: HubCli) -> str:
    made = person.json("project", "create", "Parser", "--alias", "parser")
    return str(made["project"]["id"])


def create(cli: HubCli, project: str, *args: str) -> dict[str, Any]:
    made = cli.json("task", "create", "--project", project, *args)
    task: dict[str, Any] = made["task"]
    return task


def test_a_person_creates_shows_and_edits_a_task(person: HubCli, project: str) -> None:
    made = person.json(
        "task", "create", "--project", "parser", "--kind", "IMPLEMENTATION",
        "--title", "Parse idempotency keys",
        "--outcome", "Clients may send Idempotency-Key instead of the input field.",
        "-c", "Keys are read from Idempotency-Key", "-c", "Tests cover a missing key",
        "--priority", "10",
    )  # fmt: skip
    task = made["task"]
    assert made["replay"] is False
    assert made["idempotencyKey"].startswith("hub-cli-")
    assert task["projectId"] == project
    assert (task["kind"], task["state"], task["revision"]) == ("IMPLEMENTATION", "OPEN", 1)

    shown = person.json("task", "show", task["id"])["task"]
    assert shown["outcome"] == "Clients may send Idempotency-Key instead of the input field."
    assert shown["acceptanceCriteria"] == [
        "Keys are read from Idempotency-Key",
        "Tests cover a missing key",
    ]
    assert (shown["state"], shown["effectiveState"]) == ("OPEN", "OPEN")
    assert shown["currentAttempt"] is None
    assert shown["prerequisites"] == [] and shown["submissions"] == [] and shown["links"] == []

    text = person("task", "show", task["id"]).stdout
    for words in ("Parse idempotency keys", "1. Keys are read from Idempotency-Key",
                  "2. Tests cover a missing key", "Idempotency-Key instead", "OPEN",
                  "--expected-revision 1"):  # fmt: skip
        assert words in text, text

    edited = person.json(
        "task", "edit", task["id"], "--expected-revision", "1", "--priority", "20",
        "-c", "Keys are read from Idempotency-Key", "-c", "The header wins over the field",
    )  # fmt: skip
    assert edited["task"]["revision"] == 2
    assert edited["task"]["criteriaRevision"] == 2
    assert edited["task"]["acceptanceCriteria"][1] == "The header wins over the field"
    assert (edited["expectedRevision"], edited["revisionReadFirst"]) == (1, False)

    # Without --expected-revision the command reads the current revision and says so.
    quiet = person("task", "edit", task["id"], "--title", "Parse keys from headers")
    assert "at revision 2, read just now" in quiet.stderr
    assert "revision 3" in quiet.stdout
    again = person.json("task", "edit", task["id"], "--outcome", "Headers first.")
    assert (again["expectedRevision"], again["revisionReadFirst"]) == (3, True)
    assert again["task"]["title"] == "Parse keys from headers"


def test_an_edit_from_a_stale_revision_is_refused_and_says_what_to_do(
    person: HubCli, project: str
) -> None:
    task = create(person, project, "--kind", "GENERAL", "--title", "Notes", "-c", "written")
    person.json("task", "edit", task["id"], "--expected-revision", "1", "--title", "Release notes")

    refused = person.json(
        "task", "edit", task["id"], "--expected-revision", "1", "--title", "Changelog",
        exit_code=1,
    )  # fmt: skip
    error = refused["error"]
    assert (error["problem"], error["code"]) == ("Conflict", "CONFLICT")
    assert error["details"]["currentRevision"] == 2
    assert "revision 2 now" in error["message"]
    assert f"hub task show {task['id']}" in error["message"]
    assert "--expected-revision 2" in error["message"]

    words = person(
        "task", "edit", task["id"], "--expected-revision", "1", "--title", "Changelog",
        exit_code=1,
    )  # fmt: skip
    assert "nothing was changed" in words.stderr
    assert person.json("task", "show", task["id"])["task"]["title"] == "Release notes"

    nothing = person.json("task", "edit", task["id"], exit_code=2)
    assert "nothing to change" in nothing["error"]["message"]


def test_list_filters_by_state_kind_and_parent_and_pages(person: HubCli, project: str) -> None:
    goal = create(person, project, "--kind", "OBJECTIVE", "--title", "Ship", "-c", "shipped")
    first = create(
        person, project, "--kind", "IMPLEMENTATION", "--title", "first", "-c", "ok",
        "--parent", goal["id"],
    )  # fmt: skip
    second = create(
        person, project, "--kind", "IMPLEMENTATION", "--title", "second", "-c", "ok",
        "--parent", goal["id"], "--after", first["id"],
    )  # fmt: skip
    notes = create(person, project, "--kind", "GENERAL", "--title", "notes", "-c", "ok")
    person.json("task", "close", notes["id"], "--reason", "REJECTED", "--note", "not needed")

    def ids(*args: str) -> list[str]:
        listed = person.json("task", "list", "--project", project, *args)
        return [t["id"] for t in listed["tasks"]]

    assert ids() == [goal["id"], first["id"], second["id"], notes["id"]]
    assert ids("--kind", "IMPLEMENTATION") == [first["id"], second["id"]]
    assert ids("--state", "CLOSED") == [notes["id"]]
    assert ids("--state", "OPEN", "--kind", "GENERAL") == []
    assert ids("--parent", goal["id"]) == [first["id"], second["id"]]

    page = person.json("task", "list", "--project", project, "--limit", "3")
    assert [t["id"] for t in page["tasks"]] == [goal["id"], first["id"], second["id"]]
    assert page["pageInfo"]["hasNextPage"] is True
    rest = person.json(
        "task", "list", "--project", project, "--limit", "3",
        "--after", page["pageInfo"]["endCursor"],
    )  # fmt: skip
    assert [t["id"] for t in rest["tasks"]] == [notes["id"]]
    assert rest["pageInfo"]["hasNextPage"] is False
    everything = person.json("task", "list", "--project", project, "--limit", "1", "--all")
    assert len(everything["tasks"]) == 4 and everything["pageInfo"]["hasNextPage"] is False

    words = person("task", "list", "--project", project, "--limit", "2").stdout
    assert "Ship" in words and "first" in words and "--after" in words


def test_ready_is_the_candidates_in_offer_order(person: HubCli, project: str) -> None:
    low = create(person, project, "--kind", "GENERAL", "--title", "low", "-c", "ok")
    high = create(
        person, project, "--kind", "GENERAL", "--title", "high", "-c", "ok", "--priority", "5"
    )
    blocked = create(
        person, project, "--kind", "GENERAL", "--title", "blocked", "-c", "ok",
        "--after", low["id"],
    )  # fmt: skip

    ready = person.json("task", "ready", "--project", "parser")
    assert ready["nothingToDo"] is False
    assert [t["id"] for t in ready["tasks"]] == [high["id"], low["id"]]
    shown = person.json("task", "show", blocked["id"])["task"]
    assert shown["effectiveState"] == "BLOCKED"
    assert shown["prerequisites"] == [
        {"id": low["id"], "kind": "GENERAL", "title": "low", "state": "OPEN",
         "effectiveState": "OPEN"}
    ]  # fmt: skip
    assert "hub agent next --project parser" in person("task", "ready", "-p", "parser").stdout
    only = person.json("task", "ready", "--project", project, "--kind", "IMPLEMENTATION")
    assert only["tasks"] == [] and only["nothingToDo"] is True


def test_close_reopen_link_and_prerequisites(person: HubCli, project: str) -> None:
    old = create(person, project, "--kind", "GENERAL", "--title", "old plan", "-c", "ok")
    new = create(person, project, "--kind", "GENERAL", "--title", "new plan", "-c", "ok")
    later = create(person, project, "--kind", "GENERAL", "--title", "later", "-c", "ok")

    # A refusal names the option to fix, not the API's input field.
    refused = person("task", "close", later["id"], "--reason", "DEFERRED", exit_code=1)
    assert "--reopen-condition:" in refused.stderr and "reopenCondition" not in refused.stderr
    deferred = person.json(
        "task", "close", later["id"], "--reason", "DEFERRED",
        "--reopen-condition", "after the release",
    )  # fmt: skip
    assert deferred["task"]["state"] == "CLOSED"
    assert deferred["task"]["reopenCondition"] == "after the release"
    assert "reopen when: after the release" in person("task", "show", later["id"]).stdout
    reopened = person.json("task", "reopen", later["id"], "--reason", "released")
    assert reopened["task"]["state"] == "OPEN"

    person.json("task", "link", new["id"], old["id"], "--kind", "SUPERSEDES")
    links = person.json("task", "show", old["id"])["task"]["links"]
    assert [(k["taskId"], k["kind"], k["otherTaskId"]) for k in links] == [
        (new["id"], "SUPERSEDES", old["id"])
    ]
    assert f"{new['id']} SUPERSEDES {old['id']}" in person("task", "show", new["id"]).stdout

    waiting = person.json("task", "deps", "add", later["id"], new["id"])
    assert waiting["task"]["prerequisiteIds"] == [new["id"]]
    assert waiting["task"]["effectiveState"] == "BLOCKED"
    cycle = person.json("task", "deps", "add", new["id"], later["id"], exit_code=1)
    assert cycle["error"]["code"] == "CONFLICT"
    freed = person.json("task", "deps", "remove", later["id"], new["id"])
    assert freed["task"]["prerequisiteIds"] == []
    assert freed["task"]["effectiveState"] == "OPEN"


def test_an_agent_plans_and_works_with_the_session_in_its_state_file(
    agent_cli: AgentCli,
    started: dict[str, Any],
    server: str,
    person: HubCli,
    project: str,
) -> None:
    session_token = agent_cli.stored()["session"]["token"]
    # No HUB_TOKEN, no --server: the state file gives both.
    agent = HubCli(None, agent_cli.state, secrets=[session_token])

    made = create(agent, project, "--kind", "GENERAL", "--title", "write notes", "-c", "done")
    assert made["createdBy"] == started["session"]["principalId"]
    assert [t["id"] for t in agent.json("task", "ready", "--project", "parser")["tasks"]] == [
        made["id"]
    ]

    claimed = agent_cli.json("next", "--project", "parser")
    shown = agent.json("task", "show", made["id"])["task"]
    attempt = shown["currentAttempt"]
    assert attempt["id"] == claimed["attempt"]["id"]
    assert attempt["holdsAuthority"] is True and attempt["leaseExpired"] is False
    assert attempt["lease"]["expiresAt"] == claimed["lease"]["expiresAt"]
    assert (shown["state"], shown["effectiveState"]) == ("IN_PROGRESS", "IN_PROGRESS")
    assert claimed["attempt"]["id"] in agent("task", "show", made["id"]).stdout

    agent_cli.json("accept", "--evidence", "read through")
    agent_cli.json("submit", "--result", "notes written")
    done = agent.json("task", "show", made["id"])["task"]
    assert done["state"] == "DONE" and done["currentAttempt"] is None
    assert [s["result"] for s in done["submissions"]] == ["notes written"]

    # The session token is sent only to the server that issued it.
    elsewhere = HubCli("http://127.0.0.1:9", agent_cli.state, secrets=[session_token])
    refused = elsewhere.json("task", "show", made["id"], exit_code=2)
    assert "not sent elsewhere" in refused["error"]["message"]


def test_show_lists_an_implementation_tasks_submissions(
    person: HubCli, operator: Principal, agent: Callable[..., Any]
) -> None:
    delivery = deliver(operator.api, agent().api)
    shown = person.json("task", "show", delivery.task)["task"]
    assert shown["state"] == "AWAITING_REVIEW"
    (submission,) = shown["submissions"]
    assert submission["id"] == delivery.submission
    assert submission["candidateRevision"] == "b" * 40
    words = person("task", "show", delivery.task).stdout
    assert delivery.submission in words and "b" * 40 in words


def test_without_a_credential_the_command_says_how_to_get_one(server: str, tmp_path: Path) -> None:
    nobody = HubCli(server, tmp_path / "absent.json")
    refused = nobody.json("task", "ready", "--project", "x", exit_code=2)
    assert refused["error"]["kind"] == "UsageError"
    assert "HUB_TOKEN" in refused["error"]["message"]
    assert "hub agent start" in refused["error"]["message"]

    wrong = HubCli(server, tmp_path / "absent.json", token="hub_pat_not-a-real-token")
    denied = wrong("task", "ready", "--project", "x", exit_code=1)
    assert "UNAUTHENTICATED" in denied.stderr and "HUB_TOKEN" in denied.stderr


def test_a_lost_create_answer_is_resolved_with_the_printed_key(
    person: HubCli, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    lose = LoseResponses("createTask")
    monkeypatch.setattr(remote, "transport", lose)
    lost = person.json(
        "task", "create", "--project", project, "--kind", "GENERAL", "--title", "once",
        "-c", "ok", exit_code=3,
    )  # fmt: skip
    assert lost["error"]["uncertain"] is True
    key = lost["error"]["message"].split("--idempotency-key ")[1].split(":")[0]
    assert key.startswith("hub-cli-")

    again = person.json(
        "task", "create", "--project", project, "--kind", "GENERAL", "--title", "once",
        "-c", "ok", "--idempotency-key", key,
    )  # fmt: skip
    assert again["replay"] is True
    listed = person.json("task", "list", "--project", project)["tasks"]
    assert [t["title"] for t in listed] == ["once"]
    lose.inner.close()


def test_nothing_to_do_is_an_answer_not_an_error(
    agent_cli: AgentCli, started: dict[str, Any], person: HubCli, project: str
) -> None:
    empty = person.json("task", "ready", "--project", "parser")
    assert (empty["tasks"], empty["nothingToDo"], empty["projectId"]) == ([], True, project)
    assert "nothing to do in project parser" in person("task", "ready", "-p", "parser").stdout

    nothing = agent_cli.json("next", "--project", "parser")
    assert nothing["nothingToDo"] is True
    assert nothing["task"] is None and nothing["attempt"] is None
    assert nothing["code"] == "NO_ELIGIBLE_TASK"
    assert nothing["message"].startswith(f"nothing to do in project {project}")
    words = agent_cli("next", "--project", "parser")
    assert "nothing to do in project" in words.stdout and words.stderr == ""
    assert agent_cli.stored()["pending"] == {}
    assert agent_cli.stored()["attempt"] is None
    assert agent_cli.json("review", "next", "--project", "parser")["nothingToDo"] is True

    # An unknown project is still an error.
    unknown = agent_cli.json("next", "--project", "no-such-project", exit_code=1)
    assert unknown["error"]["code"] == "NOT_FOUND"


def test_the_api_answers_no_eligible_task_with_a_distinct_code(
    operator: Principal, agent: Callable[..., Any]
) -> None:
    project_id = work.create_project(operator.api)
    work.new_task(operator.api, project_id, kind="REVIEW", acceptanceCriteria=[])
    answer = work.claim(agent().api, project_id, kinds=["GENERAL"])
    assert answer["__typename"] == "NotFound"
    assert answer["code"] == "NO_ELIGIBLE_TASK"
    assert answer["message"].startswith(f"nothing to do in project {project_id}")
    assert "of kind GENERAL" in answer["message"]


def test_json_output_is_one_object_even_for_errors(person: HubCli) -> None:
    missing = person.json("task", "show", "tsk_00000000000000000000000000", exit_code=1)
    assert missing["error"]["code"] == "NOT_FOUND"
    unknown = person("task", "list", "--project", "nowhere", exit_code=1)
    assert "NOT_FOUND" in unknown.stderr
