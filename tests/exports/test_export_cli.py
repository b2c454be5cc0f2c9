"""`hub export` (docs/exports.md): the SQLite file (tables, keys, full-text search, the
views) and the wire import items, end to end against a real server on both databases."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils

from hub.runtime import Runtime
from tests.client.planning_cli import HubCli
from tests.conftest import Principal
from tests.exports.conftest import Populated

# The wire import item (docs/exports.md, "Moving tasks to another hub"): its fields, the
# required ones, and the close reasons it knows.
WIRE_FIELDS = {"sourceSystem", "sourceId", "title", "outcome", "acceptanceCriteria", "kind",
               "priority", "parent", "prerequisites", "labels", "closed"}  # fmt: skip
WIRE_REQUIRED = {"sourceSystem", "sourceId", "title"}
CLOSE_REASONS = {"REJECTED", "SUPERSEDED", "DUPLICATE", "DEFERRED", "COMPLETED"}
CLOSED_FIELDS = {"reason", "note", "reopenCondition", "relatedTo"}
TASK_KINDS = {"IMPLEMENTATION", "REVIEW", "INTEGRATION", "GENERAL", "OBJECTIVE"}


@pytest.fixture
def person(server: str, operator: Principal, tmp_path: Path) -> HubCli:
    """The operator at a terminal, HUB_TOKEN set to their personal token."""
    return HubCli(server, tmp_path / "no-agent-state.json", token=operator.token)


def test_the_sqlite_file_has_every_table_its_keys_search_and_views(
    person: HubCli, populated: Populated, tmp_path: Path
) -> None:
    out = tmp_path / "project.db"
    summary = person.json("export", "--project", "exported", str(out))["export"]  # an alias
    assert (summary["path"], summary["projectId"], summary["format"]) == (
        str(out), populated.project, "sqlite",
    )  # fmt: skip
    assert summary["tables"]["tasks"] == 11 and summary["rows"] == sum(summary["tables"].values())
    db = sqlite_utils.Database(out)
    names = set(db.table_names())
    for table in ("tasks", "task_criteria", "task_prerequisites", "task_links", "attempts",
                  "submissions", "reviews", "findings", "jobs", "evidence", "artifacts",
                  "lessons", "lesson_versions", "events", "principals", "agent_sessions",
                  "integrations", "validations", "hub_export", "resources"):  # fmt: skip
        assert table in names, table
    for table, count in summary["tables"].items():
        assert db.table(table).count == count, table

    # Primary keys and foreign keys, every one of them holding.
    assert db.table("tasks").pks == ["id"]
    assert db.table("task_prerequisites").pks == ["task_id", "prerequisite_id"]
    tasks = db.table("tasks").foreign_keys
    references = {(fk.column, fk.other_table, fk.other_column) for fk in tasks}
    assert {("parent_id", "tasks", "id"), ("created_by", "principals", "id")} <= references
    attempts = {(fk.column, fk.other_table) for fk in db.table("attempts").foreign_keys}
    assert {("task_id", "tasks"), ("session_id", "agent_sessions"),
            ("principal_id", "principals")} <= attempts  # fmt: skip
    assert {(fk.column, fk.other_table) for fk in db.table("findings").foreign_keys} >= {
        ("review_id", "reviews"), ("submission_id", "submissions"), ("task_id", "tasks"),
    }  # fmt: skip
    with sqlite3.connect(out) as raw:
        assert raw.execute("PRAGMA foreign_key_check").fetchall() == []
    assert "api_tokens" not in names  # a reference to a token is not a key of the file

    # Full-text search on the text people look for.
    found = [row["id"] for row in db.table("tasks").search("token")]
    assert populated.tasks["login"] in found and populated.tasks["schema"] in found
    assert [r["title"] for r in db.table("findings").search("blocker")] == ["blocker issue"]
    assert [r["lesson_id"] for r in db.table("lesson_versions").search("migrations")] == [
        populated.lesson
    ]
    assert db.table("events").detect_fts() == "events_fts"

    # The views answer the common questions.
    def view(name: str, where: str = "", *params: Any) -> list[dict[str, Any]]:
        return list(db.query(f"SELECT * FROM {name} {where}", list(params)))

    opened = {row["id"]: row for row in view("open_tasks")}
    assert populated.tasks["duplicate"] not in opened and populated.tasks["hashing"] not in opened
    docs = opened[populated.tasks["docs"]]
    assert docs["unfinished_prerequisites"] == 1 and "Log in with a token" in docs["blocked_by"]
    assert opened[populated.tasks["login"]]["blocked_by"].startswith(populated.tasks["schema"])
    states = {(r["kind"], r["state"]): r["tasks"] for r in view("tasks_by_state")}
    assert states[("GENERAL", "CLOSED")] == 2 and states[("IMPLEMENTATION", "DONE")] == 1
    decisions = {r["submission_id"]: r for r in view("review_decisions")}
    rejected = decisions[populated.submission]
    assert (rejected["rejections"], rejected["agent_approvals"], rejected["findings"],
            rejected["unresolved_required_findings"]) == (1, 0, 4, 2)  # fmt: skip
    assert rejected["submitted_by"] == "worker"
    assert any(r["agent_approvals"] == 1 for r in decisions.values())
    assert {r["reviewer"] for r in view("review_log")} == {"reviewer", "approver"}
    agents = {r["name"]: r for r in view("attempts_per_agent")}
    assert agents["worker"]["attempts"] == 3 and agents["worker"]["submissions"] == 2
    assert agents["reviewer"]["attempts"] == 1
    done = view("claim_to_done", "WHERE task_id = ?", populated.tasks["hashing"])
    assert len(done) == 1 and done[0]["hours"] == pytest.approx(2.0, abs=0.01)
    actors = {(r["actor"], r["kind"]) for r in view("who_did_what")}
    assert ("worker", "attempt.submitted") in actors and ("operator", "task.created") in actors

    stamp = next(iter(db.table("hub_export").rows))
    assert stamp["project_id"] == populated.project and stamp["server"] == person.server


def test_an_existing_file_is_kept_unless_forced(
    person: HubCli, populated: Populated, tmp_path: Path
) -> None:
    out = tmp_path / "project.db"
    out.write_text("precious")
    refused = person.json("export", "--project", populated.project, str(out), exit_code=2)
    assert "--force" in refused["error"]["message"]
    assert out.read_text() == "precious"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".project")] == []
    person("export", "--project", populated.project, str(out), "--force")
    assert sqlite_utils.Database(out).table("tasks").count == 11


def test_a_refusal_writes_nothing(
    person: HubCli, populated: Populated, tmp_path: Path, make_principal: Callable[..., Any],
    server: str,
) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "project.db"
    unknown = person.json("export", "--project", "no-such-project", str(out), exit_code=1)
    assert unknown["error"]["code"] == "NOT_FOUND"
    nobody = HubCli(server, tmp_path / "none.json", token="hub_pat_not_a_token")
    refused = nobody.json("export", "--project", populated.project, str(out), exit_code=1)
    assert refused["error"]["code"] == "UNAUTHENTICATED"
    assert list(folder.iterdir()) == []


def test_the_text_output_names_the_file_and_how_to_browse_it(
    person: HubCli, populated: Populated, tmp_path: Path
) -> None:
    out = tmp_path / "project.db"
    said = person("export", "--project", populated.project, str(out)).stdout
    assert f"datasette {out}" in said and populated.project in said


def wire_problems(item: dict[str, Any]) -> list[str]:
    """What makes `item` not a wire import item (docs/exports.md), if anything."""
    problems = [f"unknown field {name}" for name in set(item) - WIRE_FIELDS]
    problems += [f"no {name}" for name in WIRE_REQUIRED - set(item)]
    for name in ("sourceSystem", "sourceId", "title", "outcome", "parent"):
        if name in item and not isinstance(item[name], str):
            problems.append(f"{name} is not text")
    for name in ("acceptanceCriteria", "prerequisites", "labels"):
        if name in item and not all(isinstance(v, str) for v in item[name]):
            problems.append(f"{name} is not a list of text")
    if "kind" in item and item["kind"] not in TASK_KINDS:
        problems.append("kind is not a task kind")
    if "priority" in item and not isinstance(item["priority"], int):
        problems.append("priority is not a number")
    closed = item.get("closed")
    if closed is not None:
        problems += [f"unknown closed.{name}" for name in set(closed) - CLOSED_FIELDS]
        if closed.get("reason") not in CLOSE_REASONS:
            problems.append("closed.reason is not a close reason")
    return problems


def test_jsonl_writes_the_tasks_as_wire_import_items_with_their_source_ids(
    person: HubCli, populated: Populated, tmp_path: Path
) -> None:
    out = tmp_path / "plan.jsonl"
    summary = person.json("export", "--project", populated.project, str(out))["export"]
    assert summary["format"] == "jsonl"
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert summary["items"] == len(items) == 8  # the workflow's review tasks are not plans
    assert [(i, problem) for i, item in enumerate(items) for problem in wire_problems(item)] == []
    by_id = {item["sourceId"]: item for item in items}
    hub_system = f"hub:{populated.project}"
    tasks = populated.tasks

    # A task keeps its own source system and id; one made in hub is named by its id.
    login = by_id["auth-login"]
    assert login["sourceSystem"] == "markdown:plan.md"
    assert (login["title"], login["kind"], login["priority"], login["parent"]) == (
        "Log in with a token", "IMPLEMENTATION", 5, "auth",
    )  # fmt: skip
    assert login["prerequisites"] == ["db-schema"] and "closed" not in login
    assert by_id["db-schema"]["acceptanceCriteria"] == ["a migration", "a rollback"]
    assert by_id["auth"]["outcome"] == "Tokens and passwords" and "parent" not in by_id["auth"]
    docs = by_id[tasks["docs"]]
    assert docs["sourceSystem"] == hub_system
    # Its prerequisite is of another source system: the format cannot name it.
    assert "prerequisites" not in docs
    assert {"sourceId": tasks["docs"], "field": "prerequisites", "taskId": tasks["login"]} in (
        summary["droppedReferences"]
    )
    # Closed and done tasks say so; a deferred one keeps its reopen condition.
    assert by_id[tasks["later"]]["closed"] == {
        "reason": "DEFERRED", "note": "", "reopenCondition": "when SSO is bought",
    }  # fmt: skip
    duplicate = by_id[tasks["duplicate"]]["closed"]
    assert (duplicate["reason"], duplicate["note"]) == ("DUPLICATE", "same ask")
    hashing = by_id["hash-tokens"]["closed"]
    assert hashing["reason"] == "COMPLETED" and tasks["hashing"] in hashing["note"]
    # Items come in the order the tasks were made: what they name comes first.
    order = [item["sourceId"] for item in items]
    assert order.index("auth") < order.index("db-schema") < order.index("auth-login")


def test_jsonl_of_a_project_made_in_hub_keeps_its_graph(
    person: HubCli, operator: Principal, tmp_path: Path
) -> None:
    """Without source ids every task is of one system, `hub:<project>`: parents,
    prerequisites and the task a duplicate repeats all carry over."""
    from tests.support import work

    api = operator.api
    project = work.create_project(api, "Made here")
    top = work.new_task(api, project, kind="OBJECTIVE", title="Ship it")
    first = work.new_task(api, project, title="First", parentId=top)
    second = work.new_task(api, project, title="Second", parentId=top, prerequisiteIds=[first])
    again = work.new_task(api, project, title="First again")
    work.close_task(api, again, "DUPLICATE", relatedTaskId=first)
    newer = work.new_task(api, project, title="Second, better")
    work.close_task(api, second, "SUPERSEDED", relatedTaskId=newer)
    out = tmp_path / "plan.jsonl"
    summary = person.json("export", "--project", project, "--format", "jsonl", str(out))
    assert summary["export"]["droppedReferences"] == []
    items = {i["sourceId"]: i for i in map(json.loads, out.read_text().splitlines())}
    assert {i["sourceSystem"] for i in items.values()} == {f"hub:{project}"}
    assert items[second]["parent"] == top and items[second]["prerequisites"] == [first]
    assert items[again]["closed"]["relatedTo"] == first
    assert items[second]["closed"] == {"reason": "SUPERSEDED", "note": "", "relatedTo": newer}


def test_the_jsonl_export_imports_into_another_hub_with_the_same_source_ids(
    person: HubCli,
    populated: Populated,
    tmp_path: Path,
    other_hub: tuple[str, Principal],
) -> None:
    """Export from one deployment, import into another through the wire contract
    (`POST /api/imports`, JSON Lines of wire items), and find the same tasks there."""
    import httpx

    from tests.support import work

    out = tmp_path / "plan.jsonl"
    person("export", "--project", populated.project, str(out))
    server, operator = other_hub
    target = work.create_project(operator.api, "Imported")
    for _ in range(2):  # the second time changes nothing
        answer = httpx.post(
            f"{server}/api/imports",
            params={"projectId": target, "source": out.name},
            content=out.read_bytes(),
            headers={"Authorization": f"Bearer {operator.token}",
                     "Content-Type": "application/x-ndjson", "Idempotency-Key": work.key()},
            timeout=60,
        )  # fmt: skip
        assert answer.status_code == 200, answer.text
    found = operator.api(
        "query($p: ID!) { tasks(projectId: $p, first: 100) { edges { node { id title state"
        " sourceSystem sourceId parentId prerequisiteIds closeReason reopenCondition } } } }",
        p=target,
    )["tasks"]["edges"]
    tasks = {(n["node"]["sourceSystem"], n["node"]["sourceId"]): n["node"] for n in found}
    assert len(tasks) == len(found) == 8
    login = tasks[("markdown:plan.md", "auth-login")]
    schema = tasks[("markdown:plan.md", "db-schema")]
    epic = tasks[("markdown:plan.md", "auth")]
    assert login["parentId"] == epic["id"] and login["prerequisiteIds"] == [schema["id"]]
    hub_system = f"hub:{populated.project}"
    later = tasks[(hub_system, populated.tasks["later"])]
    assert (later["state"], later["closeReason"], later["reopenCondition"]) == (
        "CLOSED", "DEFERRED", "when SSO is bought",
    )  # fmt: skip
    hashing = tasks[("markdown:plan.md", "hash-tokens")]
    assert (hashing["state"], hashing["closeReason"]) == ("CLOSED", "COMPLETED")


@pytest.fixture
def other_hub(
    backend: str, tmp_path: Path, runtime: Runtime
) -> Any:
    """A second deployment: its own database (the same backend) and server."""
    from hub.clock import ManualClock
    from hub.identity import service as identity
    from hub.storage import migrations
    from tests.conftest import make_database, runtime_settings
    from tests.support.client import Api
    from tests.support.server import serve

    folder = tmp_path / "other-hub"
    folder.mkdir()
    databases = make_database(backend, folder)
    made = next(databases)
    migrations.upgrade_to_head(made.database)
    other = Runtime(runtime_settings(made.url, folder), database=made.database,
                    clock=ManualClock())  # fmt: skip
    try:
        with serve(other) as server:

            def create(uow: Any) -> tuple[str, str]:
                view = identity.create_principal(uow, name="operator", kind="human",
                                                 operator=True)  # fmt: skip
                return view.id, identity.create_token(uow, principal=view.id).plaintext

            principal_id, token = other.write(create)
            api = Api(server, token)
            try:
                yield server, Principal(principal_id, "operator", token, api)
            finally:
                api.close()
    finally:
        other.release_threads()
        for _ in databases:
            pass


def test_a_failure_mid_stream_ends_it_with_an_error_and_nothing_is_written(
    person: HubCli, populated: Populated, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    server: str, operator: Principal,
) -> None:
    """Once lines are sent the status cannot change: the stream ends with `_error`, not
    `_end`, and `hub export` writes nothing."""
    from collections.abc import Iterator

    from hub import exports
    from hub.storage.export import ExportRecord
    from hub.storage.unit_of_work import UnitOfWork
    from tests.exports.conftest import export_lines, records

    def failing(uow: UnitOfWork, project_id: str) -> Iterator[ExportRecord]:
        yield ExportRecord("_table", {"name": "broken", "columns": {}, "primary_key": [],
                                      "references": []})  # fmt: skip
        raise RuntimeError("the disk is on fire")

    monkeypatch.setattr(exports, "SOURCES", (*exports.SOURCES[:2], failing))
    lines = records(export_lines(server, operator.token, populated.project))
    assert lines[-1] == {"table": "_error", "row": {"message": "the export failed"}}
    assert "fire" not in str(lines), "the failure's detail reached the client"
    folder = tmp_path / "out"
    folder.mkdir()
    failed = person.json("export", "--project", populated.project, str(folder / "p.db"),
                         exit_code=3)  # fmt: skip
    assert failed["error"]["code"] == "EXPORT_INCOMPLETE"
    assert "nothing was written" in failed["error"]["message"]
    assert list(folder.iterdir()) == []
