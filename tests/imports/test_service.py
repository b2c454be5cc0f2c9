"""Imports through the service layer, on both databases (docs/imports.md): every outcome,
all or nothing against partial, cycles, duplicates, unknown and foreign source ids,
closed items, parents, dry runs, keys, and a re-import that writes nothing."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from hub.errors import IdempotencyConflict, PermissionDenied, QuotaExceeded
from hub.identity import service as identity
from hub.identity.views import Actor
from hub.identity.vocabulary import CredentialKind, PrincipalKind
from hub.imports import service as imports
from hub.imports.errors import ImportCycle, InvalidItem
from hub.imports.vocabulary import ImportOutcome
from hub.runtime import Runtime
from hub.storage.database import Database
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work
from tests.support.imports import SYSTEM, Caller, caller, chain, import_items, item
from tests.support.sql import fetch_all, fetch_value, statements_run


def tasks_of(database: Database, project_id: str) -> dict[str, dict[str, Any]]:
    rows = fetch_all(
        database,
        "SELECT id, source_id, kind, title, state, close_reason, reopen_condition,"
        " blocked_count, parent_id, revision FROM tasks WHERE project_id = :p",
        p=project_id,
    )
    return {row["source_id"]: row for row in rows}


def outcomes(report: imports.ImportReportView) -> dict[str | None, ImportOutcome]:
    return {result.source_id: result.outcome for result in report.items or ()}


def as_actor(runtime: Runtime, who: Caller, operation: Callable[[UnitOfWork, Any], Any]) -> Any:
    return runtime.write(lambda uow: operation(uow, identity.authenticate(uow, who.token)))


@contextmanager
def writes(database: Database) -> Iterator[list[str]]:
    """The tables written to while the block runs (filled at its end)."""
    written: list[str] = []
    with statements_run(database) as run:
        yield written
    for statement in run:
        found = re.match(r"\s*(?:INSERT INTO|UPDATE|DELETE FROM)\s+\"?(\w+)", statement, re.I)
        if found:
            written.append(found.group(1))


# --- creating -------------------------------------------------------------------------------


def test_a_first_import_creates_every_item_with_its_edges_labels_and_events(
    runtime: Runtime, database: Database
) -> None:
    who = caller(runtime)
    items = chain(4)
    items[0]["labels"] = ["auth", "db", "auth"]
    items[1]["acceptanceCriteria"] = ["it logs in"]
    items[2]["outcome"] = "users can log out"
    report = import_items(runtime, who, items, source="plan.jsonl")

    assert (report.counts.created, report.counts.total) == (4, 4)
    assert report.source == "plan.jsonl" and not report.dry_run
    tasks = tasks_of(database, who.project_id)
    assert {key: row["blocked_count"] for key, row in tasks.items()} == {
        "t0": 0, "t1": 1, "t2": 1, "t3": 1,
    }  # fmt: skip
    assert {result.task_id for result in report.items or ()} == {r["id"] for r in tasks.values()}
    views = {
        view.source_id: view
        for view in runtime.read(lambda uow: work.get_tasks(uow, [r["id"] for r in tasks.values()]))
    }
    assert views["t0"].labels == ("auth", "db")
    assert views["t1"].criteria == ("it logs in",)
    # Without criteria an item is judged against its outcome, else its title.
    assert views["t2"].criteria == ("users can log out",)
    assert views["t3"].criteria == ("Task t3",)
    assert views["t3"].prerequisite_ids == (tasks["t2"]["id"],)
    created = fetch_value(
        database, "SELECT count(*) FROM events WHERE stream = :p AND kind = 'task.created'",
        p=who.project_id,
    )  # fmt: skip
    assert created == 4
    completed = fetch_all(
        database, "SELECT subject_id, payload FROM events WHERE kind = 'import.completed'"
    )
    assert [row["subject_id"] for row in completed] == [report.id]


def test_a_parent_item_is_an_objective_waiting_for_its_children(
    runtime: Runtime, database: Database
) -> None:
    who = caller(runtime)
    import_items(runtime, who, [item("epic"), item("a", parent="epic"), item("b", parent="epic")])
    tasks = tasks_of(database, who.project_id)
    assert tasks["epic"]["kind"] == "OBJECTIVE"
    assert tasks["epic"]["blocked_count"] == 2
    assert tasks["a"]["parent_id"] == tasks["epic"]["id"]

    other = caller(runtime)
    with pytest.raises(InvalidItem, match=r"item 1 \('epic'\): kind: .*OBJECTIVE"):
        import_items(
            runtime, other, [item("epic", kind="IMPLEMENTATION"), item("a", parent="epic")]
        )


def test_closed_items_are_created_closed_and_completed_ones_block_nothing(
    runtime: Runtime, database: Database
) -> None:
    who = caller(runtime)
    report = import_items(
        runtime,
        who,
        [
            item("done-elsewhere", closed={"reason": "COMPLETED", "note": "shipped in v1"}),
            item("later", closed={"reason": "DEFERRED", "reopenCondition": "after launch"}),
            item("dup", closed={"reason": "DUPLICATE", "relatedTo": "done-elsewhere"}),
            item("needs-done", prerequisites=["done-elsewhere"]),
            item("needs-later", prerequisites=["later"]),
        ],
    )
    assert report.counts.created == 5
    tasks = tasks_of(database, who.project_id)
    assert (tasks["done-elsewhere"]["state"], tasks["done-elsewhere"]["close_reason"]) == (
        "CLOSED", "COMPLETED",
    )  # fmt: skip
    assert tasks["later"]["reopen_condition"] == "after launch"
    # COMPLETED is complete: its dependent is ready; a deferred prerequisite still blocks.
    assert tasks["needs-done"]["blocked_count"] == 0
    assert tasks["needs-later"]["blocked_count"] == 1
    links = fetch_all(database, "SELECT task_id, other_id, kind FROM task_links")
    assert links == [
        {"task_id": tasks["dup"]["id"], "other_id": tasks["done-elsewhere"]["id"],
         "kind": "DUPLICATE_OF"},
    ]  # fmt: skip
    ready = runtime.read(lambda uow: work.candidates(uow, project_id=who.project_id))
    assert {view.source_id for view in ready} == {"needs-done"}


def test_a_duplicate_or_superseded_item_may_come_without_what_replaced_it(
    runtime: Runtime, database: Database
) -> None:
    """The item that replaced it may live elsewhere (another tracker, another source
    system of an export): the task is closed with its reason, and no link is made."""
    who = caller(runtime)
    report = import_items(
        runtime,
        who,
        [
            item("dup", closed={"reason": "DUPLICATE", "note": "same as JIRA-7"}),
            item("old", closed={"reason": "SUPERSEDED"}),
        ],
    )
    assert report.counts.created == 2
    tasks = tasks_of(database, who.project_id)
    assert {key: (row["state"], row["close_reason"]) for key, row in tasks.items()} == {
        "dup": ("CLOSED", "DUPLICATE"), "old": ("CLOSED", "SUPERSEDED"),
    }  # fmt: skip
    assert fetch_all(database, "SELECT task_id FROM task_links") == []


def test_closing_a_task_as_completed_in_hub_unblocks_its_dependents(
    runtime: Runtime, database: Database
) -> None:
    who = caller(runtime)
    import_items(runtime, who, chain(2))
    tasks = tasks_of(database, who.project_id)
    as_actor(runtime, who, lambda uow, actor: work.close_task(
        uow, actor, task_id=tasks["t0"]["id"], reason="COMPLETED", note="done by hand"
    ))  # fmt: skip
    assert tasks_of(database, who.project_id)["t1"]["blocked_count"] == 0
    as_actor(runtime, who, lambda uow, actor: work.reopen_task(
        uow, actor, task_id=tasks["t0"]["id"], reason="not really"
    ))  # fmt: skip
    assert tasks_of(database, who.project_id)["t1"]["blocked_count"] == 1


# --- re-importing ---------------------------------------------------------------------------


def test_reimporting_an_unchanged_file_writes_nothing_but_its_report(
    runtime: Runtime, database: Database
) -> None:
    who = caller(runtime)
    items = chain(50)
    items[3]["labels"] = ["x"]
    import_items(runtime, who, items)
    with writes(database) as written:
        report = import_items(runtime, who, items)
    assert report.counts.unchanged == 50 and report.counts.total == 50
    assert report.items == ()
    assert set(written) == {"import_reports"}, written


def test_a_changed_item_updates_its_task_never_a_duplicate(
    runtime: Runtime, database: Database
) -> None:
    who = caller(runtime)
    import_items(runtime, who, [*chain(3), item("x")])
    before = tasks_of(database, who.project_id)
    changed = [
        item("t0", title="Renamed", labels=["new"]),
        item("t1", prerequisites=["x"]),  # t0 replaced by x
        item("t2", prerequisites=["t1"], acceptanceCriteria=["a new criterion"]),
        item("x"),
    ]
    report = import_items(runtime, who, changed)
    assert outcomes(report) == {
        "t0": ImportOutcome.UPDATED, "t1": ImportOutcome.UPDATED, "t2": ImportOutcome.UPDATED,
    }  # fmt: skip
    assert report.counts.unchanged == 1
    after = tasks_of(database, who.project_id)
    assert {key: row["id"] for key, row in after.items()} == {
        key: row["id"] for key, row in before.items()
    }
    assert after["t0"]["title"] == "Renamed" and after["t0"]["revision"] == 2
    ids = [row["id"] for row in after.values()]
    views = {v.source_id: v for v in runtime.read(lambda uow: work.get_tasks(uow, ids))}
    assert views["t0"].labels == ("new",)
    assert views["t1"].prerequisite_ids == (after["x"]["id"],)
    assert views["t2"].criteria == ("a new criterion",) and views["t2"].criteria_revision == 2
    # Importing the changed file again: nothing left to change.
    again = import_items(runtime, who, changed)
    assert again.counts.unchanged == 4


def test_a_task_changed_in_hub_is_a_conflict_with_both_versions(
    runtime: Runtime, database: Database
) -> None:
    who = caller(runtime)
    import_items(runtime, who, chain(2))
    task_id = tasks_of(database, who.project_id)["t0"]["id"]
    as_actor(runtime, who, lambda uow, actor: work.edit_task(
        uow, actor, work.TaskEdit(task_id=task_id, expected_revision=1, title="Hub's title")
    ))  # fmt: skip
    unchanged = import_items(runtime, who, chain(2))
    assert unchanged.counts.unchanged == 2  # the file did not change: nothing to report

    changed = chain(2)
    changed[0]["title"] = "The file's title"
    report = import_items(runtime, who, changed)
    (result,) = report.items or ()
    assert (result.source_id, result.outcome, result.task_id) == (
        "t0", ImportOutcome.CONFLICT, task_id,
    )  # fmt: skip
    assert result.hub_version is not None and result.incoming_version is not None
    assert (result.hub_version.title, result.incoming_version.title) == (
        "Hub's title", "The file's title",
    )  # fmt: skip
    assert result.message and "changed in hub" in result.message
    assert tasks_of(database, who.project_id)["t0"]["title"] == "Hub's title"


def test_a_task_closed_in_hub_is_never_recreated_or_reopened(
    runtime: Runtime, database: Database
) -> None:
    who = caller(runtime)
    import_items(runtime, who, chain(3))
    tasks = tasks_of(database, who.project_id)
    as_actor(runtime, who, lambda uow, actor: work.close_task(
        uow, actor, task_id=tasks["t1"]["id"], reason="REJECTED", note="not wanted"
    ))  # fmt: skip
    as_actor(runtime, who, lambda uow, actor: work.close_task(
        uow, actor, task_id=tasks["t2"]["id"], reason="DEFERRED", reopen_condition="next year"
    ))  # fmt: skip
    changed = chain(3)
    changed[1]["title"] = "Try again"
    report = import_items(runtime, who, changed)
    results = {result.source_id: result for result in report.items or ()}
    assert {key: r.outcome for key, r in results.items()} == {
        "t1": ImportOutcome.SKIPPED_CLOSED, "t2": ImportOutcome.SKIPPED_CLOSED,
    }  # fmt: skip
    assert results["t1"].close_reason == "REJECTED"
    assert "not wanted" in (results["t1"].message or "")
    assert results["t2"].reopen_condition == "next year"
    after = tasks_of(database, who.project_id)
    assert len(after) == 3 and after["t1"]["state"] == "CLOSED"
    assert after["t1"]["title"] == "Task t1"


def test_a_task_carrying_the_source_id_that_no_import_made_is_adopted_only_if_equal(
    runtime: Runtime, database: Database
) -> None:
    who = caller(runtime)

    def create(title: str, source_id: str) -> Any:
        return as_actor(runtime, who, lambda uow, actor: work.create_task(uow, actor, work.NewTask(
            project_id=who.project_id, kind="IMPLEMENTATION", title=title,
            acceptance_criteria=[title], source_system=SYSTEM, source_id=source_id,
        )))  # fmt: skip

    create("Task same", "same")
    create("Hub's own", "other")
    report = import_items(runtime, who, [item("same"), item("other")])
    assert outcomes(report) == {"other": ImportOutcome.CONFLICT}
    assert report.counts.unchanged == 1
    assert fetch_value(database, "SELECT count(*) FROM import_sources") == 1
    assert fetch_value(database, "SELECT count(*) FROM tasks") == 2


# --- refusals ---------------------------------------------------------------------------------


def nothing_written(database: Database) -> None:
    for table in ("tasks", "import_reports", "import_sources", "task_prerequisites"):
        assert fetch_value(database, f"SELECT count(*) FROM {table}") == 0, table


def test_an_invalid_item_refuses_the_whole_import_naming_it(
    runtime: Runtime, database: Database
) -> None:
    who = caller(runtime)
    items = chain(4)
    items[2]["title"] = " "
    items[3]["priority"] = 5000
    with pytest.raises(InvalidItem) as refused:
        import_items(runtime, who, items)
    assert "item 3 ('t2'): title: must not be empty (and 1 more invalid item)" in str(refused.value)
    assert refused.value.details()["item"] == 3
    nothing_written(database)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"sourceSystem": SYSTEM, "sourceId": "a", "title": "A", "priorty": 1},
         r"item 1 \('a'\): priorty: is not a field of an item"),
        ({"sourceSystem": SYSTEM, "title": "A"}, r"item 1: sourceId: is required"),
        ({"sourceSystem": SYSTEM, "sourceId": "a", "title": "A", "labels": "x"},
         r"labels: must be a list of strings"),
        ({"sourceSystem": SYSTEM, "sourceId": "a", "title": "A", "kind": "REVIEW"},
         r"kind: an import makes IMPLEMENTATION, GENERAL, OBJECTIVE tasks"),
        ({"sourceSystem": SYSTEM, "sourceId": "a", "title": "A",
          "closed": {"reason": "DEFERRED"}}, r"closed.reopenCondition"),
        ({"sourceSystem": SYSTEM, "sourceId": "a", "title": "A",
          "closed": {"reason": "SUPERSEDED", "relatedTo": "a"}}, r"closed.relatedTo"),
        ({"sourceSystem": SYSTEM, "sourceId": "a", "title": "A", "prerequisites": ["a"]},
         r"its own prerequisite"),
    ],
)  # fmt: skip
def test_what_an_item_may_not_be(
    runtime: Runtime, database: Database, raw: dict[str, Any], message: str
) -> None:
    who = caller(runtime)
    with pytest.raises(InvalidItem, match=message):
        import_items(runtime, who, [raw])
    nothing_written(database)


def test_a_source_id_twice_in_one_import_is_refused_naming_both(
    runtime: Runtime, database: Database
) -> None:
    who = caller(runtime)
    with pytest.raises(InvalidItem, match=r"item 3 \('a'\): sourceId: 'a' .* is also item 1"):
        import_items(runtime, who, [item("a"), item("b"), item("a")])
    nothing_written(database)


def test_an_unknown_prerequisite_is_refused_naming_the_item(
    runtime: Runtime, database: Database
) -> None:
    who = caller(runtime)
    with pytest.raises(InvalidItem, match=r"item 2 \('b'\): prerequisite 'nowhere' is neither"):
        import_items(runtime, who, [item("a"), item("b", prerequisites=["nowhere"])])
    with pytest.raises(InvalidItem, match=r"item 1 \('b'\): parent 'nowhere'"):
        import_items(runtime, who, [item("b", parent="nowhere")])
    nothing_written(database)


def test_a_cycle_is_refused_naming_it(runtime: Runtime, database: Database) -> None:
    who = caller(runtime)
    items = [
        item("a", prerequisites=["c"]), item("b", prerequisites=["a"]),
        item("c", prerequisites=["b"]), item("d"),
    ]  # fmt: skip
    with pytest.raises(ImportCycle) as refused:
        import_items(runtime, who, items)
    assert refused.value.cycle in (["a", "c", "b"], ["c", "b", "a"], ["b", "a", "c"])
    assert "a -> c -> b -> a" in str(refused.value) or "cycle" in str(refused.value)
    # A parent waits for its children: a child needing its parent is a cycle as well.
    with pytest.raises(ImportCycle):
        import_items(runtime, who, [item("epic"), item("x", parent="epic", prerequisites=["epic"])])
    nothing_written(database)


def test_prerequisites_resolve_against_earlier_imports_of_the_project_only(
    runtime: Runtime, database: Database
) -> None:
    who = caller(runtime)
    import_items(runtime, who, [item("base")])
    later = import_items(runtime, who, [item("on-top", prerequisites=["base"])])
    assert later.counts.created == 1
    tasks = tasks_of(database, who.project_id)
    assert tasks["on-top"]["blocked_count"] == 1

    # Another project's source ids are not this project's: unknown there.
    elsewhere = caller(runtime)
    with pytest.raises(InvalidItem, match="prerequisite 'base' is neither"):
        import_items(runtime, elsewhere, [item("on-top", prerequisites=["base"])])
    # And a caller cannot import into a project that does not exist.
    with pytest.raises(Exception, match="does not exist"):
        import_items(runtime, elsewhere, [item("x")], project_id="prj_missing")


def test_a_partial_import_reports_invalid_items_and_imports_the_rest(
    runtime: Runtime, database: Database
) -> None:
    who = caller(runtime)
    items = [
        item("good"),
        item("bad", priority=99_999),
        item("needs-bad", prerequisites=["bad"]),
        item("loop-a", prerequisites=["loop-b"]),
        item("loop-b", prerequisites=["loop-a"]),
        item("good", title="again"),
        item("needs-good", prerequisites=["good"]),
    ]
    report = import_items(runtime, who, items, partial=True)
    assert report.partial
    results = {(r.number, r.source_id): r for r in report.items or ()}
    assert {key: r.outcome for key, r in results.items()} == {
        (1, "good"): ImportOutcome.CREATED,
        (2, "bad"): ImportOutcome.INVALID,
        (3, "needs-bad"): ImportOutcome.INVALID,
        (4, "loop-a"): ImportOutcome.INVALID,
        (5, "loop-b"): ImportOutcome.INVALID,
        (6, "good"): ImportOutcome.INVALID,
        (7, "needs-good"): ImportOutcome.CREATED,
    }
    assert "priority" in (results[(2, "bad")].message or "")
    assert "'bad' is invalid" in (results[(3, "needs-bad")].message or "")
    assert "cycle" in (results[(4, "loop-a")].message or "")
    assert "also item 1" in (results[(6, "good")].message or "")
    assert set(tasks_of(database, who.project_id)) == {"good", "needs-good"}


def test_a_dry_run_reports_the_same_and_stores_only_its_report(
    runtime: Runtime, database: Database
) -> None:
    who = caller(runtime)
    import_items(runtime, who, chain(3))
    changed = [*chain(3), item("new", prerequisites=["t2"])]
    changed[0]["title"] = "Renamed"
    with writes(database) as written:
        dry = import_items(runtime, who, changed, dry_run=True)
    assert set(written) == {"import_reports"}, written
    assert dry.dry_run
    assert outcomes(dry) == {"t0": ImportOutcome.UPDATED, "new": ImportOutcome.CREATED}
    assert [r.task_id for r in dry.items or () if r.source_id == "new"] == [None]
    real = import_items(runtime, who, changed)
    assert outcomes(real) == outcomes(dry) and real.counts == dry.counts
    stored = runtime.read(lambda uow: imports.list_import_reports(uow, project_id=who.project_id))
    assert [(r.dry_run, r.counts.created) for r in stored] == [(False, 1), (True, 1), (False, 3)]


def test_a_keyed_import_replays_its_report_and_refuses_another_body(
    runtime: Runtime, database: Database
) -> None:
    who = caller(runtime)
    first = import_items(runtime, who, chain(3), idempotency_key="plan-1")
    again = import_items(runtime, who, chain(3), idempotency_key="plan-1")
    assert again == first
    assert fetch_value(database, "SELECT count(*) FROM import_reports") == 1
    with pytest.raises(IdempotencyConflict):
        import_items(runtime, who, chain(4), idempotency_key="plan-1")


def test_an_import_is_bounded(runtime: Runtime, database: Database) -> None:
    bounded = Runtime(
        runtime.settings.model_copy(update={"import_max_items": 3}),
        database=database,
        clock=runtime.clock,
    )
    try:
        who = caller(bounded)
        with pytest.raises(QuotaExceeded, match="at most 3 items"):
            import_items(bounded, who, chain(4))
        assert import_items(bounded, who, chain(3)).counts.created == 3
    finally:
        bounded.release_threads()


def test_a_reporter_never_imports(runtime: Runtime) -> None:
    """The service's own line behind the credential table."""
    who = caller(runtime)
    reporter = Actor(
        principal_id=who.principal_id, principal_name="r", kind=PrincipalKind.AGENT,
        is_operator=False, credential=CredentialKind.REPORTER,
    )  # fmt: skip
    request = imports.ImportRequest(project_id=who.project_id, items=[], idempotency_key="k")
    with pytest.raises(PermissionDenied, match="reporter"):
        runtime.write(lambda uow: imports.import_tasks(uow, reporter, request))


def test_an_item_closed_at_its_source_closes_its_task_on_the_next_import(
    runtime: Runtime, database: Database
) -> None:
    who = caller(runtime)
    import_items(runtime, who, [*chain(2), item("x", prerequisites=["t1"])])
    closing = [
        item("t0"),
        item("t1", prerequisites=["t0"], closed={"reason": "COMPLETED", "note": "done by hand"}),
        item("x", prerequisites=["t1"]),
    ]
    report = import_items(runtime, who, closing)
    assert outcomes(report) == {"t1": ImportOutcome.UPDATED}
    tasks = tasks_of(database, who.project_id)
    assert (tasks["t1"]["state"], tasks["t1"]["close_reason"]) == ("CLOSED", "COMPLETED")
    # Done outside hub: what waited for it is ready.
    assert tasks["x"]["blocked_count"] == 0
    again = import_items(runtime, who, closing)
    assert again.counts.unchanged == 3 and again.items == ()


def test_an_item_moved_to_another_parent_moves_its_task(
    runtime: Runtime, database: Database
) -> None:
    who = caller(runtime)
    first = [item("epic-1"), item("epic-2"), item("a", parent="epic-1"), item("b", parent="epic-1")]
    first[1]["kind"] = "OBJECTIVE"
    import_items(runtime, who, first)
    before = tasks_of(database, who.project_id)
    assert (before["epic-1"]["blocked_count"], before["epic-2"]["blocked_count"]) == (2, 0)
    moved = [*first[:3], item("b", parent="epic-2")]
    report = import_items(runtime, who, moved)
    assert outcomes(report) == {"b": ImportOutcome.UPDATED}
    after = tasks_of(database, who.project_id)
    assert after["b"]["parent_id"] == after["epic-2"]["id"]
    assert (after["epic-1"]["blocked_count"], after["epic-2"]["blocked_count"]) == (1, 1)
    # A child may not become its own ancestor's parent: a cycle, named.
    looped = [first[0], {**first[1], "parent": "b"}, first[2], item("b", parent="epic-2")]
    with pytest.raises(ImportCycle):
        import_items(runtime, who, looped)


def test_a_superseded_item_links_to_what_replaces_it(runtime: Runtime, database: Database) -> None:
    who = caller(runtime)
    import_items(runtime, who, [
        item("new"), item("old", closed={"reason": "SUPERSEDED", "relatedTo": "new"}),
    ])  # fmt: skip
    tasks = tasks_of(database, who.project_id)
    links = fetch_all(database, "SELECT task_id, other_id, kind FROM task_links")
    assert links == [
        {"task_id": tasks["new"]["id"], "other_id": tasks["old"]["id"], "kind": "SUPERSEDES"}
    ]
