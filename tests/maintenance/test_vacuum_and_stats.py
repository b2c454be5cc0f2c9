"""`hub maintenance vacuum` and `hub maintenance stats` (docs/ops/maintenance.md)."""

from __future__ import annotations

import json

import pytest

from hub.runtime import Runtime
from hub.storage.database import Database
from tests.conftest import raw_sql
from tests.maintenance.conftest import World
from tests.support.cli import HubCli


def test_vacuum_shrinks_a_sqlite_file_after_deletes(cli: HubCli, database: Database) -> None:
    if not database.is_sqlite:
        pytest.skip("PostgreSQL is never vacuumed FULL: the next test")
    raw_sql(database, "CREATE TABLE scratch (body TEXT)")
    raw_sql(database, "INSERT INTO scratch SELECT hex(randomblob(2000)) FROM "
            "(WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) "
            "SELECT i FROM n)")
    raw_sql(database, "DROP TABLE scratch")  # its pages are free now, the file as large
    database.dispose()
    report = json.loads(cli("maintenance", "vacuum", "--json").stdout)
    assert report["backend"] == "sqlite"
    before, after = report["before"], report["after"]
    assert before["databaseBytes"] + before["walBytes"] > 8_000_000
    assert after["databaseBytes"] < 2_000_000 and after["walBytes"] == 0
    printed = cli("maintenance", "vacuum").stdout
    assert "database file: " in printed and "WAL file: 0 B -> 0 B" in printed


def test_vacuum_on_postgresql_advises_and_analyzes_only_when_asked(
    cli: HubCli, database: Database
) -> None:
    if not database.is_postgresql:
        pytest.skip("SQLite's vacuum: the test before")
    report = json.loads(cli("maintenance", "vacuum", "--json").stdout)
    assert report["backend"] == "postgresql"
    assert report["autovacuum"] in ("on", "off")
    assert "tasks" in {table["table"] for table in report["tables"]}
    assert report["analyzed"] == [] and report["worthVacuuming"] == []
    assert "autovacuum: " in cli("maintenance", "vacuum").stdout
    analyzed = json.loads(cli("maintenance", "vacuum", "--analyze", "--json").stdout)
    assert "tasks" in analyzed["analyzed"] and "events" in analyzed["analyzed"]


def test_stats_counts_rows_receipts_and_the_oldest_open_attempt(
    world: World, cli: HubCli, runtime: Runtime
) -> None:
    report = json.loads(cli("maintenance", "stats", "--json").stdout)
    assert report["backend"] == runtime.database.dialect
    assert report["tables"]["tasks"] == 5 and report["tables"]["attempts"] == 1
    assert report["databaseBytes"] > 0
    assert (report["walBytes"] is None) == runtime.database.is_postgresql
    assert report["events"] == report["tables"]["events"] > 0
    # Keyed: the claim, the lesson, its rating and dispute, the rule.
    assert report["receipts"] >= 4 and report["tombstones"] == 0
    assert report["artifactBytes"] == 0
    oldest = report["oldestActiveAttempt"]
    assert (oldest["attempt"], oldest["task"]) == (world.attempt, world.claimed)
    printed = cli("maintenance", "stats").stdout
    assert f"oldest active attempt: {world.attempt} (task {world.claimed})" in printed
    assert "receipts: " in printed and "database size: " in printed
    assert ("WAL size: " in printed) == runtime.database.is_sqlite
