"""One migration history for both backends, and models that never drift from it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from hub.storage import migrations
from hub.storage.database import Database
from hub.tables import metadata
from tests.support.cli import HubCli
from tests.support.sql import fetch_all

if TYPE_CHECKING:  # imported for pytest would try to collect it as a test class
    from tests.conftest import TestDatabase


def schema_snapshot(database: Database) -> dict[str, Any]:
    inspector = sa.inspect(database.engine)
    return {
        table: {
            "columns": sorted(
                (c["name"], str(c["type"]), c["nullable"]) for c in inspector.get_columns(table)
            ),
            "indexes": sorted(i["name"] or "" for i in inspector.get_indexes(table)),
            "foreign_keys": sorted(fk["name"] or "" for fk in inspector.get_foreign_keys(table)),
            "unique": sorted(u["name"] or "" for u in inspector.get_unique_constraints(table)),
        }
        for table in sorted(inspector.get_table_names())
    }


def test_migrated_database_has_no_drift_from_the_models(database: Database) -> None:
    # `alembic check`: autogenerate finds nothing to do after `upgrade head`.
    migrations.check_no_drift(database)
    assert migrations.is_at_head(database)
    tables = set(sa.inspect(database.engine).get_table_names())
    assert {table.name for table in metadata.sorted_tables} <= tables


def test_upgrading_a_fresh_database_twice_is_a_no_op(fresh_database: TestDatabase) -> None:
    database = fresh_database.database
    assert migrations.current_revision(database) is None
    assert not migrations.is_at_head(database)

    migrations.upgrade_to_head(database)
    head = migrations.head_revision(database)
    assert migrations.current_revision(database) == head
    before = schema_snapshot(database)

    migrations.upgrade_to_head(database)
    assert migrations.current_revision(database) == head
    assert schema_snapshot(database) == before
    assert fetch_all(database, "SELECT version_num FROM alembic_version") == [{"version_num": head}]
    migrations.check_no_drift(database)


def test_hub_db_upgrade_brings_a_fresh_database_to_head(
    fresh_database: TestDatabase, fresh_cli: HubCli
) -> None:
    head = migrations.head_revision(fresh_database.database)
    behind = fresh_cli("db", "current", exit_code=1)
    assert f"head {head}" in behind.stdout
    assert f"database at revision {head}" in fresh_cli("db", "upgrade").stdout
    assert f"database at revision {head}" in fresh_cli("db", "upgrade").stdout  # again: no-op
    assert f"current {head}, head {head}" in fresh_cli("db", "current").stdout
    migrations.check_no_drift(fresh_database.database)


def test_cli_refuses_to_serve_a_database_that_is_behind(fresh_cli: HubCli) -> None:
    refused = fresh_cli("serve", "--port", "1", exit_code=2)
    assert "hub db upgrade" in refused.stderr
