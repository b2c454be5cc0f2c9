"""Task views read in one statement (`work._task_views`), on both databases: the sides a
view carries (prerequisites, labels, criteria) come in the database's own order, a batch
shows each task as a lookup does, and a lookup, a batch or the candidates cost one
statement whatever the number of tasks."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from hub.runtime import Runtime
from hub.storage.database import Database
from hub.work import service as work
from tests.support.imports import caller, import_items, item
from tests.support.sql import fetch_all, statements_run


@contextmanager
def selects(database: Database) -> Iterator[list[str]]:
    """The SELECT statements this thread runs while the block runs (filled at its end)."""
    found: list[str] = []
    with statements_run(database) as run:
        yield found
    found.extend(statement for statement in run if re.match(r"\s*SELECT", statement, re.I))


def test_a_view_carries_its_prerequisites_and_labels_in_the_databases_order(
    runtime: Runtime, database: Database
) -> None:
    who = caller(runtime)
    items = [item(f"p{i}") for i in range(4)]
    items.append(
        item(
            "z",
            prerequisites=["p3", "p0", "p2"],
            labels=["zeta", "Alpha", "été", "beta", "alpha"],
            acceptanceCriteria=["first", "second"],
        )
    )
    report = import_items(runtime, who, items)
    ids = {result.source_id: result.task_id for result in report.items or ()}

    view = runtime.read(lambda uow: work.get_task(uow, ids["z"]))

    ordered_prerequisites = [
        row["prerequisite_id"]
        for row in fetch_all(
            database,
            "SELECT prerequisite_id FROM task_prerequisites WHERE task_id = :t"
            " ORDER BY prerequisite_id",
            t=ids["z"],
        )
    ]
    ordered_labels = [
        row["label"]
        for row in fetch_all(
            database, "SELECT label FROM task_labels WHERE task_id = :t ORDER BY label", t=ids["z"]
        )
    ]
    assert view.prerequisite_ids == tuple(ordered_prerequisites)
    assert sorted(view.prerequisite_ids) == sorted(ids[f"p{i}"] for i in (0, 2, 3))
    assert view.labels == tuple(ordered_labels)
    assert view.criteria == ("first", "second")
    assert (view.blocked_count, view.effective_state) == (3, "BLOCKED")
    lone = runtime.read(lambda uow: work.get_task(uow, ids["p1"]))
    assert (lone.prerequisite_ids, lone.labels) == ((), ())


def test_a_batch_shows_each_task_as_a_lookup_does_in_the_order_asked(runtime: Runtime) -> None:
    who = caller(runtime)
    items = [item("a"), item("b", prerequisites=["a"], labels=["x"]), item("c")]
    report = import_items(runtime, who, items)
    ids = [result.task_id for result in report.items or ()]
    asked = [ids[2], ids[0], ids[1], ids[0]]

    batch = runtime.read(lambda uow: work.get_tasks(uow, asked))
    alone = [runtime.read(lambda uow, task_id=task_id: work.get_task(uow, task_id))
             for task_id in asked]  # fmt: skip

    assert [view.id for view in batch] == asked
    assert batch == alone


def test_a_lookup_a_batch_and_the_candidates_are_one_statement_each(
    runtime: Runtime, database: Database
) -> None:
    who = caller(runtime)
    report = import_items(
        runtime, who, [item(f"t{i}", labels=[f"l{i}"], prerequisites=[]) for i in range(12)]
    )
    ids = [result.task_id for result in report.items or ()]

    with selects(database) as lookup:
        runtime.read(lambda uow: work.get_task(uow, ids[0]))
    with selects(database) as batch:
        runtime.read(lambda uow: work.get_tasks(uow, ids))
    with selects(database) as offered:
        found = runtime.read(lambda uow: work.candidates(uow, project_id=who.project_id))

    assert len(found) == 12
    assert (len(lookup), len(batch), len(offered)) == (1, 1, 1)
