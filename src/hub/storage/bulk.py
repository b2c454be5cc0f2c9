"""Many rows written straight through the database driver, inside the unit of work.

SQLAlchemy prepares every row's parameters one by one (each value through its column
type's bind processor): for a statement run once that costs nothing, for 100,000 rows of
an import it costs more than the database's own work. `insert_rows` hands the driver
rows that are already as the columns store them (`Stored` converts them):
`executemany` on SQLite, `COPY … FROM STDIN` on PostgreSQL, on the unit of work's own
connection, so they are part of its transaction (or of its savepoint in a group commit)
like any other statement.

Only plain inserts of new rows come here; constraints, defaults computed in SQL and
triggers apply as they do to any insert. Anything read back, decided or updated stays
with the ORM and Core.

**Tables with a full-text index on SQLite** (`one_statement=True`): an FTS5 index,
filled by a trigger, writes the words it holds in memory to disk at the end of every
statement. `executemany` runs one statement per row, so the index would write one small
segment per row and merge them as it goes (100,000 tasks: 7 s instead of 1 s). Those rows
go first into a temporary table of the connection and then into theirs in one
`INSERT … SELECT`, one statement: the trigger still fires per row, but the index writes
once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from enum import Enum
from typing import Any

from sqlalchemy import Table

from hub.storage.unit_of_work import UnitOfWork


class Stored:
    """Values as one database stores them in hub's column types (`storage.base`)."""

    def __init__(self, dialect: str) -> None:
        self.sqlite = dialect == "sqlite"

    def instant(self, value: datetime) -> Any:
        """A `UTCDateTime`: SQLite keeps naive UTC text with microseconds (the format
        SQLAlchemy's SQLite `DateTime` writes), PostgreSQL a `timestamptz`."""
        if value.tzinfo is None:
            raise ValueError("naive datetimes are not stored; use UTC-aware values")
        utc = value.astimezone(UTC)
        return utc.strftime("%Y-%m-%d %H:%M:%S.%f") if self.sqlite else utc

    def json(self, value: Any) -> str:
        """A `JSONDocument`: its JSON text (SQLite's TEXT; PostgreSQL parses it into
        `jsonb` as COPY reads it)."""
        return json.dumps(value)

    def flag(self, value: bool) -> Any:
        return int(value) if self.sqlite else value

    @staticmethod
    def name(value: Enum | str | None) -> str | None:
        """A `Vocabulary` column: the member's string."""
        return None if value is None else str(value.value if isinstance(value, Enum) else value)


def insert_rows(
    uow: UnitOfWork,
    table: Table,
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    one_statement: bool = False,
) -> None:
    """Insert `rows` (tuples of `columns`' values, as `Stored` gives them) into `table`;
    with `one_statement`, on SQLite, in one statement (for a full-text indexed table)."""
    session = uow.session
    session.flush()  # what the ORM holds goes first: these rows may point at it
    connection = session.connection().connection.dbapi_connection
    assert connection is not None
    names = ", ".join(columns)
    if uow.dialect == "sqlite":
        marks = ", ".join("?" for _ in columns)
        # Names from hub's own table definitions, never from a request.
        target = f"temp.bulk_{table.name}" if one_statement else table.name
        cursor = connection.cursor()
        try:
            if one_statement:
                # The columns' types (affinities) as the table declares them; no rows.
                cursor.execute(
                    f"CREATE TEMP TABLE bulk_{table.name} AS "  # noqa: S608
                    f"SELECT {names} FROM main.{table.name} WHERE 0"
                )
            cursor.executemany(
                f"INSERT INTO {target} ({names}) VALUES ({marks})",  # noqa: S608
                rows,  # type: ignore[arg-type]  # any iterable: sqlite3 reads it as it goes
            )
            if one_statement:
                cursor.execute(
                    f"INSERT INTO main.{table.name} ({names}) "  # noqa: S608
                    f"SELECT {names} FROM {target} ORDER BY rowid"
                )
                cursor.execute(f"DROP TABLE {target}")
        finally:
            cursor.close()
        return
    # psycopg's own connection: its COPY protocol, not in the DB-API.
    driver: Any = connection
    with driver.cursor() as cursor, cursor.copy(f"COPY {table.name} ({names}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
