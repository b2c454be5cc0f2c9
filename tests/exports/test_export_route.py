"""`GET /api/projects/{projectId}/export` (docs/exports.md): what the stream holds and in
which order, who may read it, and that it is one snapshot of the project however long
it takes to read."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from hub import exports
from hub.clock import ManualClock
from hub.identity._permissions import refusal
from hub.runtime import Runtime
from hub.storage import export as storage_export
from hub.storage.export import ExportRecord
from hub.storage.unit_of_work import UnitOfWork
from hub.tables import metadata
from tests.api import test_credential_table as credential_table
from tests.api.test_credential_table import Caller
from tests.conftest import AgentSession, Principal
from tests.exports.conftest import Populated, export_lines, populate, records
from tests.support import work

callers = credential_table.callers

# Every table that holds a project's rows, and the records outside any project that the
# export adds (the principals and agent sessions its rows name).
PROJECT_TABLES = {
    table.name for table in metadata.sorted_tables if "project_id" in table.c
} | {"projects"}
NAMED_RECORDS = {"principals", "agent_sessions"}


def test_the_stream_holds_every_module_s_rows_of_the_project_and_no_other(
    server: str, operator: Principal, populated: Populated, make_principal: Callable[..., Any]
) -> None:
    stranger = make_principal("stranger")  # named by no row of the project
    lines = records(export_lines(server, operator.token, populated.project))
    tables = [line["table"] for line in lines]
    assert (tables[0], tables[-1]) == ("_export", "_end")
    header = lines[0]["row"]
    assert (header["project_id"], header["format"]) == (populated.project, exports.FORMAT)

    described = [line["row"]["name"] for line in lines if line["table"] == "_table"]
    assert set(described) == PROJECT_TABLES | NAMED_RECORDS, "a table is missing or extra"
    assert len(described) == len(set(described)), "a table described twice"
    rows: dict[str, list[dict[str, Any]]] = {}
    for line in lines[1:-1]:
        if line["table"] != "_table":
            rows.setdefault(line["table"], []).append(line["row"])
    for expected in ("tasks", "task_criteria", "task_prerequisites", "task_links", "attempts",
                     "submissions", "reviews", "findings", "jobs", "evidence", "artifacts",
                     "lessons", "lesson_versions", "events", "projects", "principals",
                     "agent_sessions", "worktrees", "checkpoints"):  # fmt: skip
        assert rows.get(expected), f"no {expected} exported"
    assert lines[-1]["row"]["tables"] == {name: len(found) for name, found in rows.items()}

    # Only this project's rows, whatever the table.
    assert [p["id"] for p in rows["projects"]] == [populated.project]
    for name, found in rows.items():
        for row in found:
            if "project_id" in row:
                assert row["project_id"] == populated.project, (name, row)
    assert "Not in the export" not in str(lines)
    # The principals and sessions the rows name, no others, and never a secret.
    names = {p["name"] for p in rows["principals"]}
    assert names == {"operator", "worker", "reviewer", "approver", "integrator"}
    assert stranger.name not in names
    assert all("password_hash" not in p for p in rows["principals"])
    sessions = {s["id"]: s for s in rows["agent_sessions"]}
    assert len(sessions) == 4  # the worker's, the reviewer's, the approver's, the integrator's
    assert {populated.worker.session_id, populated.reviewer.session_id} <= set(sessions)
    principal_names = {p["id"]: p["name"] for p in rows["principals"]}
    assert {principal_names[s["principal_id"]] for s in sessions.values()} == {
        "worker", "reviewer", "approver", "integrator",
    }  # fmt: skip
    assert all("storage_key" not in a for a in rows["artifacts"])
    assert all("search_text" not in v for v in rows["lesson_versions"])
    assert all("search_text" not in t for t in rows["tasks"])
    # A table's description says what a reader needs to rebuild it.
    tasks = next(line["row"] for line in lines if line["row"].get("name") == "tasks")
    assert tasks["primary_key"] == ["id"]
    assert tasks["columns"]["created_at"] == "datetime"
    assert tasks["columns"]["priority"] == "integer"
    assert ["parent_id", "tasks", "id"] in tasks["references"]
    assert ["created_by", "principals", "id"] in tasks["references"]


def test_the_stream_is_in_the_domain_s_order_each_table_described_then_in_key_order(
    server: str, operator: Principal, populated: Populated, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages of two rows: keyset pagination neither skips nor repeats a row."""
    whole = records(export_lines(server, operator.token, populated.project))
    monkeypatch.setattr(storage_export, "PAGE_SIZE", 2)
    paged = records(export_lines(server, operator.token, populated.project))
    assert [line for line in paged if line["table"] != "_export"] == [
        line for line in whole if line["table"] != "_export"
    ]
    order: list[str] = []
    current = ""
    for line in paged[1:-1]:
        if line["table"] == "_table":
            current = line["row"]["name"]
            order.append(current)
            continue
        assert line["table"] == current, "a row outside its table's run"
    modules = ["projects", "tasks", "jobs", "lessons", "reviews", "resources",
               "integrations", "artifacts", "events", "agent_sessions", "principals"]  # fmt: skip
    positions = [order.index(name) for name in modules]
    assert positions == sorted(positions), order
    keys = {line["row"]["name"]: line["row"]["primary_key"] for line in paged
            if line["table"] == "_table"}  # fmt: skip
    for table, key in keys.items():
        values = [tuple(line["row"][k] for k in key) for line in paged if line["table"] == table]
        assert values == sorted(values), f"{table} is not in key order"
        assert len(values) == len(set(values)), f"{table} repeats a row"


def test_an_unknown_project_is_404_and_nothing_streams(
    server: str, operator: Principal
) -> None:
    answer = export_lines(server, operator.token, "prj_nobody")
    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "NOT_FOUND"
    answer = export_lines(server, None, "prj_nobody")
    assert (answer.status_code, answer.json()["error"]["code"]) == (401, "UNAUTHENTICATED")
    assert answer.headers["www-authenticate"] == "Bearer"


def test_the_route_answers_each_credential_as_the_table_says(
    server: str, callers: list[Caller], operator: Principal
) -> None:
    project = work.create_project(operator.api)
    wrong = []
    for caller in callers:
        answer = export_lines(server, caller.token, project)
        error = answer.json().get("error", {}) if answer.status_code != 200 else {}
        if caller.actor is None:
            expected: tuple[int, str | None] = (401, "UNAUTHENTICATED")
        elif (reason := refusal(caller.actor, "exportProject")) is not None:
            expected = (403, reason)
        else:
            expected = (200, None)
        got = (answer.status_code, error.get("message") if answer.status_code == 403
               else error.get("code"))  # fmt: skip
        if got != expected:
            wrong.append(f"{caller.label}: expected {expected}, got {got} {answer.text[:200]}")
    assert wrong == [], "\n".join(wrong)
    reporter = next(c for c in callers if c.label == "reporter token")
    assert export_lines(server, reporter.token, project).status_code == 403


def _take(runtime: Runtime, project: str, then: Callable[[], None]) -> list[ExportRecord]:
    """The export read through `Runtime.astream` one record at a time; `then` runs
    once the first record has arrived, while the rest is still to be read."""

    async def run() -> list[ExportRecord]:
        stream = runtime.astream(lambda uow: exports.project_records(uow, project), ahead=1)
        taken = [await anext(stream)]
        await asyncio.to_thread(then)
        taken += [record async for record in stream]
        return taken

    return asyncio.run(run())


def test_the_export_is_one_snapshot_whatever_is_written_while_it_streams(
    runtime: Runtime,
    server: str,
    operator: Principal,
    agent: Callable[..., AgentSession],
    clock: ManualClock,
) -> None:
    made = populate(operator, agent, clock)
    late: list[str] = []

    def meanwhile() -> None:
        late.append(work.new_task(operator.api, made.project, title="Made during the export"))
        work.close_task(operator.api, made.tasks["docs"], "REJECTED", note="not needed")

    taken = _take(runtime, made.project, meanwhile)
    assert taken[-1].table == "_end"
    tasks = {r.row["id"]: r.row for r in taken if r.table == "tasks"}
    assert late[0] not in tasks, "a task made after the export began was exported"
    assert tasks[made.tasks["docs"]]["state"] == "OPEN", "a later change was exported"
    events = [r.row for r in taken if r.table == "events"]
    assert not [e for e in events if e["subject_id"] in (late[0], made.tasks["docs"])
                and e["kind"] in ("task.created", "task.closed")
                and e["occurred_at"] > taken[0].row["exported_at"]]  # fmt: skip
    again = records(export_lines(server, operator.token, made.project))
    assert late[0] in {line["row"]["id"] for line in again if line["table"] == "tasks"}


def test_a_reader_that_stops_early_ends_the_transaction(
    runtime: Runtime, operator: Principal
) -> None:
    project = work.create_project(operator.api)
    for _ in range(3):
        work.new_task(operator.api, project)
    closed = threading.Event()

    def operation(uow: UnitOfWork) -> Iterator[ExportRecord]:
        try:
            yield from exports.project_records(uow, project)
        finally:
            closed.set()

    async def read_two() -> None:
        stream = runtime.astream(operation, ahead=1)
        await anext(stream)
        await anext(stream)
        await stream.aclose()

    asyncio.run(read_two())
    assert closed.wait(10), "the producer kept its transaction after the reader left"


def test_a_failure_before_the_first_record_is_raised_to_the_reader(runtime: Runtime) -> None:
    async def first() -> ExportRecord:
        stream = runtime.astream(lambda uow: exports.project_records(uow, "prj_nobody"))
        return await anext(stream)

    with pytest.raises(Exception, match="prj_nobody"):
        asyncio.run(first())
