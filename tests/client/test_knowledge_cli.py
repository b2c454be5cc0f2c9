"""`hub agent learn`, `lessons search` and `orient` against a real server (both
databases): a lesson learnt on a task is found again, published once however often a
lost answer is retried, found across projects with its source; the binding rules are
shown apart from suggested lessons, and a local instruction that disagrees with a rule
is shown beside it (docs/agent-cli.md, "Lessons, rules and orientation")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.client.conftest import AgentCli, LoseResponses
from tests.conftest import Principal
from tests.support import knowledge, work

CliAgent = Callable[[str], AgentCli]

STATEMENT = "Run the migrations before the API tests"


def lessons_of(operator: Principal, project: str) -> list[dict[str, Any]]:
    data = operator.api(
        "query($p: ID!) { lessons(projectId: $p) { edges { node { id statement } } } }", p=project
    )
    return [edge["node"] for edge in data["lessons"]["edges"]]


def test_a_lesson_learnt_on_a_task_is_found_by_a_search(
    agent_cli: AgentCli, started: dict[str, Any], project: str, general_task: str
) -> None:
    agent_cli.json("claim", general_task, "--project", project)

    learnt = agent_cli.json(
        "learn", STATEMENT,
        "--explanation", "The API tests read the schema the migrations write.",
        "--tag", "postgres>=15", "--tag", "pytest",
        "--evidence", "job_01jb6dc0a10000000000000000",
    )  # fmt: skip
    lesson = learnt["lesson"]
    assert learnt["replay"] is False
    # Its project and its source are the current attempt's, taken from the state file.
    assert lesson["projectId"] == project
    assert lesson["source"]["taskId"] == general_task
    assert lesson["tags"] == ["postgres>=15", "pytest"]
    assert lesson["evidence"] == ["job_01jb6dc0a10000000000000000"]
    assert agent_cli.stored()["pending"] == {}

    found = agent_cli.json("lessons", "search", "migration", "--tag", "postgres==16")
    assert found["scope"] == "PROJECT"
    assert [hit["lesson"]["id"] for hit in found["hits"]] == [lesson["id"]]
    assert found["hits"][0]["rank"] == 1
    assert found["hits"][0]["matchedTags"] == ["postgres==16"]

    human = agent_cli("lessons", "search", "migration").stdout
    assert f"#1 {lesson['id']} version 1" in human
    assert STATEMENT in human
    assert "tags: postgres>=15, pytest" in human
    assert "DISPUTED" not in human and "SUPERSEDED" not in human

    printed = agent_cli("learn", "Read the schema before the tests", "--no-source").stdout
    assert "published lesson" in printed and "learnt on" not in printed


def test_a_lesson_whose_answer_was_lost_is_published_once(
    agent_cli: AgentCli,
    started: dict[str, Any],
    operator: Principal,
    project: str,
    lose: Callable[..., LoseResponses],
) -> None:
    network = lose("publishLesson")
    learn = ("learn", STATEMENT, "--project", project, "--tag", "pytest")

    lost = agent_cli.json(*learn, exit_code=3)
    assert lost["error"]["uncertain"] is True
    assert "hub agent learn" in lost["error"]["message"]
    # The server published it; the client kept the key it sent, with what it sent.
    assert len(lessons_of(operator, project)) == 1
    assert network.pending_is_sent(agent_cli.stored(), "publishLesson")
    refused = agent_cli.json("learn", "Something else", "--project", project, exit_code=2)
    assert refused["error"]["code"] == "PENDING_OPERATION"

    retried = agent_cli.json(*learn)

    assert retried["replay"] is True
    first, again = network.keys("publishLesson")
    assert first == again
    assert [found["id"] for found in lessons_of(operator, project)] == [retried["lesson"]["id"]]
    assert agent_cli.stored()["pending"] == {}
    # A new lesson afterwards is a new request, under a new key.
    agent_cli.json(*learn)
    assert network.keys("publishLesson")[2] != first
    assert len(lessons_of(operator, project)) == 2


def test_a_search_across_projects_shows_where_each_lesson_came_from(
    agent_cli: AgentCli,
    started: dict[str, Any],
    cli_agent: CliAgent,
    operator: Principal,
    project: str,
) -> None:
    elsewhere = work.create_project(operator.api, "Elsewhere")
    other = cli_agent("other")
    shared = other.json("learn", "Migrations are never edited", "--project", elsewhere)["lesson"]
    own = agent_cli.json("learn", "Migrations run in one transaction", "--project", project)
    replaced = agent_cli.json("learn", "Migrations run by hand", "--project", project)["lesson"]
    knowledge.supersede(operator.api, replaced["id"], own["lesson"]["id"])
    knowledge.dispute(operator.api, shared["id"], "not on SQLite")

    mine = agent_cli.json("lessons", "search", "migrations", "--project", project)
    assert shared["id"] not in {hit["lesson"]["id"] for hit in mine["hits"]}

    everywhere = agent_cli.json(
        "lessons", "search", "migrations", "--project", project, "--all-projects"
    )
    assert everywhere["scope"] == "CROSS_PROJECT"
    hits = {hit["lesson"]["id"]: hit for hit in everywhere["hits"]}
    assert set(hits) == {shared["id"], own["lesson"]["id"], replaced["id"]}
    # The original record of the other project, not a copy.
    assert hits[shared["id"]]["lesson"]["projectId"] == elsewhere
    assert hits[shared["id"]]["otherProject"] is True
    assert hits[shared["id"]]["lesson"]["disputed"] is True
    assert hits[replaced["id"]]["lesson"]["state"] == "SUPERSEDED"

    human = agent_cli(
        "lessons", "search", "migrations", "--project", project, "--all-projects"
    ).stdout
    blocks = {block.split()[1]: block for block in human.split("#")[1:]}
    assert f"source project: {elsewhere} (another project)" in blocks[shared["id"]]
    assert "DISPUTED" in blocks[shared["id"]]
    assert "open dispute" in blocks[shared["id"]] and "not on SQLite" in blocks[shared["id"]]
    assert f"source project: {project}\n" in blocks[own["lesson"]["id"]]
    assert f"SUPERSEDED by {own['lesson']['id']}" in blocks[replaced["id"]]
    assert "SUPERSEDED" not in blocks[own["lesson"]["id"]]


AGENTS_MD = """\
# Working here

- migrations: never run migrations from the tests
- docs: keep them short
"""


def test_orient_shows_a_conflicting_local_instruction_beside_the_rule(
    agent_cli: AgentCli,
    started: dict[str, Any],
    operator: Principal,
    project: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rule_text = "Run `hub db upgrade` before the API tests"
    rule = knowledge.revise(operator.api, project, rule_text, topic="migrations")["rule"]
    lesson = agent_cli.json(
        "learn", "Indexes need CONCURRENTLY", "--project", project, "--tag", "postgres"
    )["lesson"]
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "AGENTS.md").write_text(AGENTS_MD)
    monkeypatch.chdir(checkout)  # AGENTS.md is read from here when no --local is named

    oriented = agent_cli.json("orient", "--project", project, "--tag", "postgres==16")
    assert oriented["localFiles"] == ["AGENTS.md"]
    assert [(r["rule"]["topic"], r["changed"]) for r in oriented["rules"]] == [
        ("migrations", False)
    ]
    assert [hit["lesson"]["id"] for hit in oriented["suggestedLessons"]] == [lesson["id"]]
    conflict = oriented["conflicts"][0]
    assert (conflict["file"], conflict["line"], conflict["rule"]["id"]) == (
        "AGENTS.md",
        3,
        rule["id"],
    )
    assert conflict["localText"] == "never run migrations from the tests"
    assert conflict["ruleText"] == rule_text

    human = agent_cli("orient", "--project", project, "--tag", "postgres==16").stdout
    rules, rest = human.split("Suggested lessons")
    suggested, conflicts = rest.split("Conflicts")
    # Rules apart from lessons: each in its own section, never in the other's.
    assert f"migrations version 1: {rule_text}" in rules and lesson["id"] not in rules
    assert lesson["id"] in suggested and rule_text not in suggested
    # Both sides of the conflict, one beside the other, with the file and the line.
    assert f"rule migrations version 1 | {rule_text}" in conflicts
    assert "AGENTS.md line 3          | never run migrations from the tests" in conflicts
    assert f"--since-event {oriented['eventSequence']}" in human

    # A rule revised after this orientation is marked changed in the next one.
    knowledge.revise(
        operator.api, project, "Run `hub db upgrade` first", ruleId=rule["id"], expectedVersion=1
    )
    since = str(oriented["eventSequence"])
    later = agent_cli("orient", "--project", project, "--since-event", since).stdout
    assert "migrations version 2 (changed): Run `hub db upgrade` first" in later
    # Named files are read instead of the defaults, each sent under the name given.
    (checkout / "docs").mkdir()
    (checkout / "docs" / "AGENTS.md").write_text("## Migrations\nBy hand.\nAlways.\n")
    named = agent_cli.json("orient", "--project", project, "--local", "docs/AGENTS.md")
    assert named["localFiles"] == ["docs/AGENTS.md"]
    assert [(c["file"], c["line"]) for c in named["conflicts"]] == [("docs/AGENTS.md", 1)]
    sectioned = agent_cli("orient", "--project", project, "--local", "docs/AGENTS.md").stdout
    assert "docs/AGENTS.md line 1     | By hand.\n" in sectioned
    assert "Always." in sectioned  # every line of the local side is shown


def test_bad_input_is_a_typed_error_with_its_exit_code(
    agent_cli: AgentCli, started: dict[str, Any], operator: Principal, project: str
) -> None:
    empty = agent_cli.json("learn", "", "--project", project, exit_code=1)
    assert empty["error"]["problem"] == "ValidationFailed"
    assert empty["error"]["details"] == {"field": "statement"}
    assert agent_cli.stored()["pending"] == {}  # a refusal is a definite answer
    assert lessons_of(operator, project) == []
    printed = agent_cli("learn", "", "--project", project, exit_code=1)
    assert printed.stderr.startswith("VALIDATION_FAILED: ")
    assert "Traceback" not in printed.stdout + printed.stderr

    nothing = agent_cli.json("lessons", "search", '"*(', "--project", project, exit_code=1)
    assert nothing["error"]["code"] == "VALIDATION_FAILED"
    assert "no words to search for" in nothing["error"]["message"]
    printed = agent_cli("lessons", "search", '"*(', "--project", project, exit_code=1)
    assert printed.stderr.startswith("VALIDATION_FAILED: ")

    ghost = "prj_01m8nmp6c005mh5pjbptq8ezzg"
    unknown = agent_cli.json("lessons", "search", "migrations", "--project", ghost, exit_code=1)
    assert unknown["error"]["code"] == "NOT_FOUND"
    # No project named and no attempt to take it from; a named file that is not there.
    assert agent_cli.json("learn", STATEMENT, exit_code=2)["error"]["code"] == "USAGE"
    missing = agent_cli.json("orient", "--project", project, "--local", "NOPE.md", exit_code=2)
    assert "NOPE.md" in missing["error"]["message"]
