"""Reading stored state with plain SQL, so a test checks the database, not the service."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa

from hub.storage.database import Database
from hub.tables import metadata


@contextmanager
def statements_run(database: Database) -> Iterator[list[str]]:
    """The SQL statements this thread runs on `database` while the block runs (not the
    runtime's own threads': its notifier sends the last commit's wakes meanwhile on
    PostgreSQL)."""
    seen: list[str] = []
    here = threading.get_ident()

    def saw(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if threading.get_ident() == here:
            seen.append(statement)

    sa.event.listen(database.engine, "before_cursor_execute", saw)
    try:
        yield seen
    finally:
        sa.event.remove(database.engine, "before_cursor_execute", saw)


def fetch_all(database: Database, statement: str, **params: Any) -> list[dict[str, Any]]:
    with database.engine.connect() as connection:
        result = connection.execute(sa.text(statement), params)
        return [dict(row._mapping) for row in result]


def fetch_value(database: Database, statement: str, **params: Any) -> Any:
    with database.engine.connect() as connection:
        return connection.execute(sa.text(statement), params).scalar()


def every_stored_value(database: Database) -> list[tuple[str, str, str]]:
    """(table, column, value as text) for every non-null value in every hub table."""
    found: list[tuple[str, str, str]] = []
    with database.engine.connect() as connection:
        for table in metadata.sorted_tables:
            for row in connection.execute(sa.select(table)):
                for column, value in row._mapping.items():
                    if value is not None:
                        found.append((table.name, str(column), str(value)))
    return found


def decoded(value: Any) -> Any:
    """A JSON column's value: PostgreSQL hands it back decoded, SQLite as text."""
    return json.loads(value) if isinstance(value, str) else value


def events_of(database: Database, kind: str) -> list[dict[str, Any]]:
    """Stored events of one kind, oldest first: their subject, actor and payload."""
    rows = fetch_all(
        database,
        "SELECT subject_id, actor_id, payload FROM events WHERE kind = :k ORDER BY id",
        k=kind,
    )
    return [
        {"subject": row["subject_id"], "actor": row["actor_id"], **decoded(row["payload"])}
        for row in rows
    ]
