"""Migration 0016 on a database that already holds events: every event keeps its number,
new events are numbered after them, and the downgrade numbers what is left and restores
the counter (both backends; on PostgreSQL the numbering moves to after commit)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from alembic import command

from hub.storage import migrations
from hub.storage.database import Database
from tests.support.sql import fetch_all

if TYPE_CHECKING:
    from tests.conftest import TestDatabase


def _execute(database: Database, statement: str) -> None:
    import sqlalchemy as sa

    with database.engine.begin() as connection:
        connection.execute(sa.text(statement))


def _numbers(database: Database) -> list[tuple[str, int, str]]:
    rows = fetch_all(database, "SELECT stream, seq, subject_id FROM events ORDER BY stream, seq")
    return [(r["stream"], r["seq"], r["subject_id"]) for r in rows]


def test_events_written_before_keep_their_numbers(fresh_database: TestDatabase) -> None:
    database = fresh_database.database
    config = migrations.alembic_config(database)
    command.upgrade(config, "0015")
    _execute(database, "INSERT INTO event_streams (stream, last_seq) VALUES ('hub', 3)")
    for seq in (1, 2, 3):
        _execute(
            database,
            "INSERT INTO events (stream, seq, project_id, kind, subject_id, actor_id,"
            f" occurred_at, payload) VALUES ('hub', {seq}, NULL, 'test.old', 'old-{seq}', NULL,"
            " '2026-12-01 00:00:00', '{}')",
        )
    before = _numbers(database)

    command.upgrade(config, "head")
    assert _numbers(database) == before
    # Written the way the new code writes (unnumbered at a place on PostgreSQL), then
    # numbered by the numbering step after the ones already there.
    if database.dialect == "postgresql":
        _execute(
            database,
            "INSERT INTO events (stream, project_id, kind, subject_id, actor_id, occurred_at,"
            " payload, log_position) VALUES ('hub', NULL, 'test.new', 'new-1', NULL,"
            " '2026-12-02 00:00:00', '{}', hub_event_ticket())",
        )
        _execute(database, "SELECT hub_number_events('hub')")
        log = fetch_all(database, "SELECT seq, subject_id FROM events ORDER BY seq")
        assert [(r["seq"], r["subject_id"]) for r in log] == [
            (1, "old-1"), (2, "old-2"), (3, "old-3"), (4, "new-1"),
        ]  # fmt: skip
        _execute(
            database,
            "INSERT INTO events (stream, project_id, kind, subject_id, actor_id, occurred_at,"
            " payload, log_position) VALUES ('hub', NULL, 'test.new', 'new-2', NULL,"
            " '2026-12-02 00:00:00', '{}', hub_event_ticket())",
        )

    command.downgrade(config, "0015")
    after = _numbers(database)
    assert after[:3] == before
    if database.dialect == "postgresql":
        # The downgrade numbered the one left unnumbered.
        assert after[3:] == [("hub", 4, "new-1"), ("hub", 5, "new-2")]
        assert fetch_all(database, "SELECT last_seq FROM event_streams") == [{"last_seq": 5}]
    command.upgrade(config, "head")
    migrations.check_no_drift(database)
