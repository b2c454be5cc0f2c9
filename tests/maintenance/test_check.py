"""`hub maintenance check`: clean on a healthy database, and each invariant it checks
found when a test breaks it with raw SQL (docs/ops/maintenance.md, "What a finding
means")."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator

import pytest

from hub.runtime import Runtime
from hub.storage.database import Database
from hub.work.tables import Attempt
from tests.conftest import raw_sql
from tests.maintenance.conftest import World, number_every_event
from tests.support.cli import HubCli
from tests.support.sql import fetch_value

ONE_ACTIVE = "uq_attempts_one_active_per_task"


def findings(cli: HubCli) -> list[str]:
    """A failing check's findings (it exits 1), a line each: its `checked:` lines and
    its count left out."""
    printed = cli("maintenance", "check", exit_code=1).stdout.splitlines()
    found = [line for line in printed if not line.startswith("checked:")]
    count = len(found) - 1
    assert found[-1] == f"{count} breach{'es' if count != 1 else ''}"
    return found[:-1]


def test_a_healthy_database_checks_clean(world: World, cli: HubCli, runtime: Runtime) -> None:
    printed = cli("maintenance", "check").stdout
    assert "checked: declared indexes exist" in printed
    assert "work.one_current_attempt" in printed and "events.dense_numbering" in printed
    assert printed.rstrip().endswith("no breaches")
    if runtime.database.is_sqlite:
        assert "checked: SQLite integrity_check and foreign_key_check" in printed
    report = json.loads(cli("maintenance", "check", "--json").stdout)
    assert report["clean"] is True and report["breaches"] == []


@pytest.fixture
def without_one_active_index(database: Database) -> Iterator[None]:
    """The partial unique index that holds one ACTIVE attempt per task, dropped for the
    test and made again after it (the PostgreSQL half's schema outlives the test)."""
    raw_sql(database, f"DROP INDEX {ONE_ACTIVE}")
    yield
    raw_sql(database, "DELETE FROM attempts WHERE id = 'att_twin'")
    (index,) = [i for i in Attempt.__table__.indexes if i.name == ONE_ACTIVE]
    index.create(database.engine)


def test_check_finds_two_current_attempts_of_a_task(
    world: World, cli: HubCli, database: Database, without_one_active_index: None
) -> None:
    columns = (
        "project_id, task_id, session_id, principal_id, workstation, kind, generation, state, "
        "lease_seconds, heartbeat_seconds, expires_at, criteria_revision, started_at, "
        "last_progress_at"
    )
    raw_sql(
        database,
        f"INSERT INTO attempts (id, {columns}) SELECT 'att_twin', {columns} FROM attempts "
        "WHERE id = :attempt",
        attempt=world.attempt,
    )
    found = findings(cli)
    assert found == [
        f"storage.indexes: index {ONE_ACTIVE}: missing",
        f"work.one_current_attempt: task {world.claimed}: 2 ACTIVE attempts (at most one)",
        f"work.active_attempt_is_current: attempt att_twin: ACTIVE, but task "
        f"{world.claimed}'s current attempt is {world.attempt}",
    ]
    report = json.loads(cli("maintenance", "check", "--json", exit_code=1).stdout)
    assert report["clean"] is False
    assert {b["invariant"] for b in report["breaches"]} == {
        "storage.indexes", "work.one_current_attempt", "work.active_attempt_is_current",
    }


def test_check_finds_a_task_whose_current_attempt_has_ended(
    world: World, cli: HubCli, database: Database
) -> None:
    raw_sql(database, "UPDATE attempts SET state = 'SUBMITTED' WHERE id = :a", a=world.attempt)
    assert findings(cli) == [
        f"work.current_attempt: task {world.claimed}: its current attempt {world.attempt} "
        "is SUBMITTED, not ACTIVE"
    ]


def test_check_finds_an_attempt_ahead_of_its_tasks_generation(
    world: World, cli: HubCli, database: Database
) -> None:
    raw_sql(database, "UPDATE attempts SET generation = 7 WHERE id = :a", a=world.attempt)
    assert findings(cli) == [
        f"work.generation: attempt {world.attempt}: generation 7, past task "
        f"{world.claimed}'s 1"
    ]


def test_check_finds_blocked_counts_that_do_not_match_the_graph(
    world: World, cli: HubCli, database: Database
) -> None:
    raw_sql(database, "UPDATE tasks SET blocked_count = 0 WHERE id = :t", t=world.dependent)
    raw_sql(database, "UPDATE tasks SET blocked_count = 3 WHERE id = :t", t=world.parent)
    assert sorted(findings(cli)) == sorted([
        f"work.blocked_count: task {world.dependent}: blocked_count 0, but 1 incomplete "
        "prerequisites and required children",
        f"work.blocked_count: task {world.parent}: blocked_count 3, but 1 incomplete "
        "prerequisites and required children",
    ])


def test_check_finds_lesson_and_rule_counters_that_do_not_match_their_rows(
    world: World, cli: HubCli, database: Database
) -> None:
    raw_sql(
        database,
        "UPDATE lessons SET version = 2, open_disputes = 0, not_useful_votes = 4 WHERE id = :l",
        l=world.lesson,
    )
    raw_sql(database, "UPDATE rules SET version = 3 WHERE id = :r", r=world.rule)
    assert findings(cli) == [
        f"knowledge.lesson_version: lesson {world.lesson}: version 2, but its newest "
        "version is 1",
        f"knowledge.open_disputes: lesson {world.lesson}: open_disputes 0, but 1 OPEN disputes",
        f"knowledge.votes: lesson {world.lesson}: votes 1 useful / 4 not, but ratings "
        "1 useful / 0 not",
        f"knowledge.rule_version: rule {world.rule}: version 3, but its newest revision is 1",
    ]


def test_check_finds_gaps_and_wrong_counters_in_an_event_stream(
    world: World, cli: HubCli, database: Database
) -> None:
    number_every_event(database)
    last = fetch_value(
        database, "SELECT last_seq FROM event_streams WHERE stream = :p", p=world.project
    )
    raw_sql(database, "DELETE FROM events WHERE stream = :p AND seq = 2", p=world.project)
    raw_sql(database, "UPDATE event_streams SET last_seq = last_seq + 5 WHERE stream = 'hub'")
    hub_last = fetch_value(database, "SELECT last_seq FROM event_streams WHERE stream = 'hub'")
    # An event of the project moved out of it: it is in the project's stream no more.
    moved = fetch_value(
        database, "SELECT min(id) FROM events WHERE stream = :p AND seq = 3", p=world.project
    )
    raw_sql(database, "UPDATE events SET project_id = NULL WHERE id = :e", e=moved)
    assert findings(cli) == [
        f"events.last_seq: stream hub: last_seq {hub_last}, but its last stored number is "
        f"{hub_last - 5}",
        f"events.dense_numbering: stream {world.project}: {last - 1} numbered events "
        f"between 1 and {last}: 1 numbers missing",
        f"events.stream_of_project: stream {world.project}: 1 events of no project in it "
        f"(the first: event id {moved})",
    ]


def test_check_finds_an_event_stream_without_its_counter_row(
    world: World, cli: HubCli, database: Database
) -> None:
    number_every_event(database)
    last = fetch_value(
        database, "SELECT last_seq FROM event_streams WHERE stream = :p", p=world.project
    )
    raw_sql(database, "DELETE FROM event_streams WHERE stream = :p", p=world.project)
    assert findings(cli) == [
        f"events.counter_row: stream {world.project}: events numbered up to {last} but no "
        "counter row"
    ]


def test_check_finds_tombstones_that_keep_a_result(
    world: World, cli: HubCli, database: Database
) -> None:
    principal, operation, key = (
        fetch_value(database, f"SELECT {column} FROM idempotency_receipts "
                    "WHERE operation = 'claimTask'")
        for column in ("principal_id", "operation", "key")
    )
    raw_sql(
        database,
        "UPDATE idempotency_receipts SET tombstone = :yes WHERE operation = 'claimTask'",
        yes=True,
    )
    assert findings(cli) == [
        f"idempotency.result_until_tombstone: receipt {principal}/{operation}/{key}: "
        "a tombstone that keeps a result"
    ]


def test_check_finds_rows_whose_references_dangle_on_sqlite(
    world: World, cli: HubCli, database: Database
) -> None:
    if not database.is_sqlite:
        pytest.skip("PostgreSQL never lets a foreign key dangle; SQLite does with it off")
    path = database.url.database
    assert path
    database.dispose()
    # A connection of its own, with foreign keys off (SQLite's default), writes the row.
    with sqlite3.connect(path) as connection:
        connection.execute(
            "INSERT INTO task_labels (task_id, label, project_id) VALUES ('tsk_gone', 'x', :p)",
            {"p": world.project},
        )
    found = findings(cli)
    assert len(found) == 1
    assert found[0].startswith("storage.foreign_keys: task_labels row ")
    assert "references a missing row of tasks" in found[0]
