"""Scenario 25, re-import (docs/scenarios.md): importing the same 1,000 tasks twice
creates 1,000 tasks; a changed item with a known source id updates its task, or reports
a conflict when the task changed in hub or is under work, never a duplicate; a task
closed as rejected is not re-created by a later import. Through a real server, the way
`hub import` sends a file: JSON Lines to `POST /api/imports`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hub.storage.database import Database
from tests.support import work
from tests.support.imports import chain, jsonl, post_import
from tests.support.sql import fetch_value

SIZE = 1000


def imported(server: str, token: str, items: list[dict[str, Any]], project: str) -> Any:
    answer = post_import(server, token, jsonl(items), projectId=project, source="plan.jsonl")
    assert answer.status_code == 200, answer.text
    return answer.json()["report"]


def tasks(database: Database, project: str) -> int:
    return int(fetch_value(database, "SELECT count(*) FROM tasks WHERE project_id = :p", p=project))


def by_source(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["sourceId"]: entry for entry in report["items"]}


def test_importing_the_same_1000_tasks_twice_creates_1000_tasks(
    server: str, operator: Any, database: Database
) -> None:
    project = work.create_project(operator.api)
    items = chain(SIZE)
    first = imported(server, operator.token, items, project)
    assert first["counts"]["created"] == SIZE
    second = imported(server, operator.token, items, project)
    assert second["counts"] == {
        "created": 0, "updated": 0, "unchanged": SIZE, "conflict": 0, "skippedClosed": 0,
        "invalid": 0, "total": SIZE,
    }  # fmt: skip
    assert second["items"] == []
    assert tasks(database, project) == SIZE
    edges = fetch_value(
        database, "SELECT count(*) FROM task_prerequisites WHERE project_id = :p", p=project
    )
    assert edges == SIZE - 1


def test_a_changed_item_with_a_known_source_id_updates_or_reports_a_conflict_never_a_duplicate(
    server: str, operator: Any, agent: Callable[..., Any], database: Database
) -> None:
    project = work.create_project(operator.api)
    items = chain(SIZE)
    first = by_source(imported(server, operator.token, items, project))
    # In hub meanwhile: one task is edited, the first (ready) one is claimed by an agent.
    edited = first["t500"]["taskId"]
    changed = work.task(operator.api, edited)
    operator.api.mutate(
        "editTask",
        {"taskId": edited, "expectedRevision": changed["revision"], "title": "Hub's title"},
    )
    claimed = first["t0"]["taskId"]
    work.claimed(agent().api, project, claimed)

    for index in (0, 10, 500):
        items[index] = {**items[index], "title": f"Changed in the plan {index}"}
    second = imported(server, operator.token, items, project)
    results = by_source(second)
    assert {key: entry["outcome"] for key, entry in results.items()} == {
        "t0": "CONFLICT", "t10": "UPDATED", "t500": "CONFLICT",
    }  # fmt: skip
    assert second["counts"]["unchanged"] == SIZE - 3
    assert results["t10"]["taskId"] == first["t10"]["taskId"]
    assert work.task(operator.api, first["t10"]["taskId"])["title"] == "Changed in the plan 10"
    conflict = results["t500"]
    assert (conflict["hubVersion"]["title"], conflict["incomingVersion"]["title"]) == (
        "Hub's title", "Changed in the plan 500",
    )  # fmt: skip
    assert "under work" in results["t0"]["message"]
    assert work.task(operator.api, edited)["title"] == "Hub's title"
    assert work.task(operator.api, claimed)["state"] == "IN_PROGRESS"
    assert tasks(database, project) == SIZE


def test_a_task_closed_as_rejected_is_not_recreated_by_a_later_import(
    server: str, operator: Any, database: Database
) -> None:
    project = work.create_project(operator.api)
    items = chain(SIZE)
    first = by_source(imported(server, operator.token, items, project))
    rejected = first["t7"]["taskId"]
    closing = work.close_task(operator.api, rejected, "REJECTED", note="we will not do this")
    assert closing["__typename"] == "TaskPayload", closing

    again = imported(server, operator.token, items, project)
    (skipped,) = again["items"]
    assert (skipped["sourceId"], skipped["outcome"], skipped["taskId"]) == (
        "t7", "SKIPPED_CLOSED", rejected,
    )  # fmt: skip
    assert skipped["closeReason"] == "REJECTED"
    assert "we will not do this" in skipped["message"]
    # Changed in the plan as well: still never re-created, never reopened.
    items[7] = {**items[7], "title": "Try it again"}
    later = by_source(imported(server, operator.token, items, project))
    assert later["t7"]["outcome"] == "SKIPPED_CLOSED"
    task = operator.api(
        "query($id: ID!) { task(id: $id) { state closeReason title } }", id=rejected
    )["task"]
    assert task == {"state": "CLOSED", "closeReason": "REJECTED", "title": "Task t7"}
    assert tasks(database, project) == SIZE
