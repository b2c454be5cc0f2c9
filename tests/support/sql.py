"""Reading stored state with plain SQL, so a test checks the database, not the service."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from hub.storage.database import Database
from hub.tables import metadata


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
