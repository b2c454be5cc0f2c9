"""Imports through a real server, on both databases: the GraphQL mutation and queries, the
example documents, and `POST /api/imports` (JSON Lines, streamed): keys, refusals that
name their line or item, partial imports, credentials, and identical imports sent at the
same moment (docs/imports.md)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from hub.identity._permissions import refusal
from hub.storage.database import Database
from tests.api import test_credential_table as credential_table
from tests.api.test_credential_table import Caller
from tests.support import work
from tests.support.client import Api
from tests.support.examples import run
from tests.support.imports import SYSTEM, chain, item, jsonl, post_import
from tests.support.sql import fetch_value

REPORT = """
  id projectId principalId sessionId createdAt source dryRun partial
  counts { created updated unchanged conflict skippedClosed invalid total }
  items {
    number sourceSystem sourceId outcome taskId message closeReason reopenCondition
    hubVersion { kind title outcome priority acceptanceCriteria labels state revision }
    incomingVersion { kind title outcome priority acceptanceCriteria labels state revision }
  }
"""
IMPORTED = f"... on ImportTasksPayload {{ replay report {{ {REPORT} }} }}" \
    " ... on ValidationFailed { field }"  # fmt: skip


callers = credential_table.callers


def count(database: Database, table: str) -> int:
    return int(fetch_value(database, f"SELECT count(*) FROM {table}"))


# --- GraphQL --------------------------------------------------------------------------------


def test_import_tasks_over_graphql_and_read_its_reports(
    server: str, operator: Any, agent: Callable[..., Any], database: Database
) -> None:
    project = work.create_project(operator.api)
    importer = agent()
    request = {"projectId": project, "items": chain(3), "source": "plan.jsonl",
               "idempotencyKey": work.key()}  # fmt: skip
    first = importer.api.mutate("importTasks", request, IMPORTED)
    assert first["__typename"] == "ImportTasksPayload", first
    report = first["report"]
    assert report["counts"]["created"] == 3 and report["sessionId"] == importer.session_id
    again = importer.api.mutate("importTasks", request, IMPORTED)
    assert (first["replay"], again["replay"]) == (False, True)
    assert again["report"] == report
    assert count(database, "tasks") == 3

    # The task shows its labels; the report is read back whole, or its items by outcome.
    labelled = importer.api.mutate(
        "importTasks",
        {"projectId": project, "items": [item("t0", labels=["auth", "db"])],
         "idempotencyKey": work.key()},
        IMPORTED,
    )  # fmt: skip
    (updated,) = labelled["report"]["items"]
    assert updated["outcome"] == "UPDATED"
    task = operator.api(
        "query($id: ID!) { task(id: $id) { labels sourceId } }", id=updated["taskId"]
    )["task"]
    assert task == {"labels": ["auth", "db"], "sourceId": "t0"}
    read = operator.api(
        f"query($id: ID!) {{ importReport(id: $id) {{ {REPORT} }} }}", id=report["id"]
    )["importReport"]
    assert read == report
    only = operator.api(
        "query($id: ID!) { importReport(id: $id) { items(outcomes: [UPDATED]) { sourceId } } }",
        id=labelled["report"]["id"],
    )["importReport"]["items"]
    assert only == [{"sourceId": "t0"}]
    listed = operator.api(
        "query($p: ID!) { importReports(projectId: $p, first: 1) { edges { node { id } }"
        " pageInfo { hasNextPage } } }",
        p=project,
    )["importReports"]
    assert listed["edges"][0]["node"]["id"] == labelled["report"]["id"]
    assert listed["pageInfo"]["hasNextPage"] is True
    assert operator.api('query { importReport(id: "imp_missing") { id } }')["importReport"] is None


def test_an_invalid_item_is_a_validation_problem_naming_it(
    server: str, operator: Any, database: Database
) -> None:
    project = work.create_project(operator.api)
    refused = operator.api.mutate(
        "importTasks",
        {"projectId": project, "items": [item("a"), item("b", prerequisites=["nowhere"])]},
        IMPORTED,
    )
    assert refused["__typename"] == "ValidationFailed", refused
    assert "item 2 ('b'): prerequisite 'nowhere'" in refused["message"]
    assert count(database, "tasks") == 0 and count(database, "import_reports") == 0


def test_the_example_documents_run_as_written(
    server: str, operator: Any, database: Database
) -> None:
    project = work.create_project(operator.api)
    imported = run(operator.api, "importTasks", projectId=project)
    assert imported["__typename"] == "ImportTasksPayload", imported
    counts = imported["report"]["counts"]
    assert (counts["created"], counts["total"]) == (4, 4)
    closed = [i for i in imported["report"]["items"] if i["sourceId"] == "sso"]
    assert closed[0]["outcome"] == "CREATED"
    report = run(operator.api, "importReport", id=imported["report"]["id"])
    assert report["id"] == imported["report"]["id"] and report["items"] == []
    listed = run(operator.api, "importReports", projectId=project)
    assert [edge["node"]["id"] for edge in listed["edges"]] == [imported["report"]["id"]]


# --- POST /api/imports ------------------------------------------------------------------------


def test_a_jsonl_import_streams_and_answers_the_graphql_report(
    server: str, operator: Any, database: Database
) -> None:
    project = work.create_project(operator.api)
    body = jsonl(chain(30))

    def pieces() -> Iterator[bytes]:
        # Lines split across the body's pieces, as a network splits them.
        for start in range(0, len(body), 7):
            yield body[start : start + 7]

    answer = post_import(server, operator.token, pieces(), projectId=project, source="plan.jsonl")
    assert answer.status_code == 200, answer.text
    sent = answer.json()
    assert sent["replay"] is False and sent["serverTime"]
    report = sent["report"]
    assert report["counts"]["created"] == 30 and report["source"] == "plan.jsonl"
    assert [entry["number"] for entry in report["items"]] == list(range(1, 31))
    # The same field names, and values, as the GraphQL report.
    read = operator.api(
        f"query($id: ID!) {{ importReport(id: $id) {{ {REPORT} }} }}", id=report["id"]
    )["importReport"]
    assert report == read
    assert count(database, "task_prerequisites") == 29


def test_a_keyed_jsonl_import_replays_and_refuses_another_body(
    server: str, operator: Any, database: Database
) -> None:
    project = work.create_project(operator.api)
    body = jsonl(chain(5))
    first = post_import(server, operator.token, body, key="plan-v1", projectId=project)
    again = post_import(server, operator.token, body, key="plan-v1", projectId=project)
    assert (first.status_code, again.status_code) == (200, 200)
    assert (first.json()["replay"], again.json()["replay"]) == (False, True)
    assert again.json()["report"] == first.json()["report"]
    other = post_import(server, operator.token, jsonl(chain(6)), key="plan-v1", projectId=project)
    assert other.status_code == 409, other.text
    assert other.json()["error"]["code"] == "IDEMPOTENCY_CONFLICT"
    assert count(database, "tasks") == 5 and count(database, "import_reports") == 1


def test_a_line_that_does_not_parse_refuses_the_import_naming_its_line(
    server: str, operator: Any, database: Database
) -> None:
    project = work.create_project(operator.api)
    body = jsonl(chain(3)) + b"\n" + b'{"sourceId": "x", "title": oops}\n' + jsonl([item("y")])
    refused = post_import(server, operator.token, body, projectId=project, partial=True)
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert (error["code"], error["field"], error["line"]) == ("VALIDATION_FAILED", "body", 5)
    assert error["message"].startswith("body: line 5: is not JSON")
    not_object = post_import(server, operator.token, b"[1, 2]\n", projectId=project)
    assert "line 1: is not a JSON object" in not_object.json()["error"]["message"]
    assert count(database, "tasks") == 0 and count(database, "import_reports") == 0


def test_an_invalid_item_refuses_a_jsonl_import_unless_partial(
    server: str, operator: Any, database: Database
) -> None:
    project = work.create_project(operator.api)
    lines = [item("a"), item("b", priorty=3), item("c", prerequisites=["a"])]
    refused = post_import(server, operator.token, jsonl(lines), projectId=project)
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert (error["item"], error["sourceId"]) == (2, "b")
    assert "priorty: is not a field of an item" in error["message"]
    assert count(database, "tasks") == 0

    partial = post_import(server, operator.token, jsonl(lines), projectId=project, partial=True)
    assert partial.status_code == 200, partial.text
    outcomes = {i["sourceId"]: i["outcome"] for i in partial.json()["report"]["items"]}
    assert outcomes == {"a": "CREATED", "b": "INVALID", "c": "CREATED"}
    dry = post_import(server, operator.token, jsonl([item("d")]), projectId=project, dryRun=True)
    assert dry.json()["report"]["dryRun"] is True and count(database, "tasks") == 2


def test_the_route_refuses_what_it_does_not_take(
    server: str, operator: Any, database: Database
) -> None:
    project = work.create_project(operator.api)
    body = jsonl([item("a")])
    unknown = post_import(server, operator.token, body, projectId=project, dry_run=True)
    assert (unknown.status_code, unknown.json()["error"]["field"]) == (400, "dry_run")
    missing = post_import(server, operator.token, body)
    assert missing.json()["error"]["field"] == "projectId"
    nowhere = post_import(server, operator.token, body, projectId="prj_missing")
    assert nowhere.status_code == 404
    form = httpx.post(
        f"{server}/api/imports", params={"projectId": project}, content=body, timeout=30,
        headers={"Authorization": f"Bearer {operator.token}",
                 "Content-Type": "multipart/form-data; boundary=x"},
    )  # fmt: skip
    assert form.json()["error"]["field"] == "Content-Type"
    anonymous = httpx.post(f"{server}/api/imports", params={"projectId": project}, content=body)
    assert anonymous.status_code == 401 and anonymous.headers["www-authenticate"] == "Bearer"
    long_line = post_import(
        server, operator.token, b'{"title": "' + b"x" * (2 * 1024 * 1024) + b'"}\n',
        projectId=project,
    )  # fmt: skip
    assert long_line.status_code == 400
    assert "line 1: is longer than" in long_line.json()["error"]["message"]
    assert count(database, "tasks") == 0


def test_another_projects_source_ids_are_unknown_here(
    server: str, operator: Any, database: Database
) -> None:
    first = work.create_project(operator.api, "First")
    second = work.create_project(operator.api, "Second")
    assert post_import(server, operator.token, jsonl(chain(2)), projectId=first).status_code == 200
    refused = post_import(
        server, operator.token, jsonl([item("t2", prerequisites=["t1"])]), projectId=second
    )
    assert refused.status_code == 400
    assert "prerequisite 't1' is neither" in refused.json()["error"]["message"]
    # The same source ids in another project are other tasks: a first import there.
    again = post_import(server, operator.token, jsonl(chain(2)), projectId=second)
    assert again.json()["report"]["counts"]["created"] == 2
    assert count(database, "tasks") == 4


def test_the_route_answers_each_credential_as_the_table_says(
    server: str, database: Database, callers: list[Caller], operator: Any
) -> None:
    """Every credential kind posts an import of its own items: the ones the credential
    table lets call importTasks create them, the others are refused and write nothing."""
    project = work.create_project(operator.api)
    wrong = []
    for number, caller in enumerate(callers):
        before = count(database, "tasks")
        # A key each: a session's keyed mutations need one.
        headers = {"Content-Type": "application/x-ndjson", "Idempotency-Key": f"k-{number}"}
        if caller.token is not None:
            headers["Authorization"] = f"Bearer {caller.token}"
        answer = httpx.post(
            f"{server}/api/imports",
            params={"projectId": project},
            headers=headers,
            content=jsonl([item(f"caller-{number}")]),
            timeout=60,
        )
        error = answer.json().get("error", {}) if answer.status_code != 200 else {}
        if caller.actor is None:
            expected: tuple[int, str | None, int] = (401, "UNAUTHENTICATED", 0)
        elif (reason := refusal(caller.actor, "importTasks")) is not None:
            expected = (403, reason, 0)
        else:
            expected = (200, None, 1)
        got = (
            answer.status_code,
            error.get("message") if answer.status_code == 403 else error.get("code"),
            count(database, "tasks") - before,
        )
        if got != expected:
            wrong.append(f"{caller.label}: expected {expected}, got {got} {answer.text[:200]}")
    assert wrong == [], "\n".join(wrong)
    reporter = next(c for c in callers if c.label == "reporter token")
    assert reporter.token is not None
    graphql = Api(server, reporter.token).mutate(
        "importTasks", {"projectId": project, "items": [], "idempotencyKey": "k"}
    )
    assert graphql["__typename"] == "PermissionDenied"


def test_identical_keyed_imports_sent_at_the_same_moment_create_once(
    server: str, operator: Any, database: Database
) -> None:
    project = work.create_project(operator.api)
    body = jsonl(chain(200))
    answers: list[httpx.Response | BaseException | None] = [None, None, None]
    start = threading.Barrier(len(answers))

    def send(index: int) -> None:
        try:
            start.wait(timeout=30)
            answers[index] = post_import(
                server, operator.token, body, key="same-moment", projectId=project
            )
        except BaseException as exc:  # reported below
            answers[index] = exc

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(answers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    responses = [a for a in answers if isinstance(a, httpx.Response)]
    assert len(responses) == len(answers), answers
    assert [r.status_code for r in responses] == [200] * len(answers), [r.text for r in responses]
    assert sorted(r.json()["replay"] for r in responses) == [False, True, True]
    assert len({r.json()["report"]["id"] for r in responses}) == 1
    assert count(database, "tasks") == 200 and count(database, "import_reports") == 1


def test_unkeyed_imports_of_the_same_new_items_at_once_create_them_once(
    server: str, operator: Any, database: Database
) -> None:
    project = work.create_project(operator.api)
    body = jsonl(chain(100))
    answers: list[httpx.Response | None] = [None, None]
    start = threading.Barrier(2)

    def send(index: int) -> None:
        start.wait(timeout=30)
        answers[index] = post_import(server, operator.token, body, projectId=project)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert all(a is not None and a.status_code == 200 for a in answers), answers
    counts = sorted(
        (a.json()["report"]["counts"]["created"], a.json()["report"]["counts"]["unchanged"])
        for a in answers
        if a is not None
    )
    assert counts == [(0, 100), (100, 0)]
    assert count(database, "tasks") == 100


def test_a_system_item_source_label_is_kept(server: str, operator: Any) -> None:
    project = work.create_project(operator.api)
    answer = post_import(
        server, operator.token, jsonl([item("a")]), projectId=project, source="plan.jsonl"
    )
    assert answer.json()["report"]["items"][0]["sourceSystem"] == SYSTEM
