"""The declarative base every module's tables derive from, and shared column types."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, DateTime, MetaData, Table, TypeDecorator
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase

# A fixed naming convention keeps constraint names identical on SQLite and PostgreSQL,
# which Alembic's batch mode and `alembic check` both rely on.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


def table_of(model: type[Base]) -> Table:
    """A mapped class's Core table, for the prebuilt statements of hot paths (the ORM's
    per-statement overhead costs more than the statement itself there)."""
    table = model.__table__
    assert isinstance(table, Table)
    return table


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC on the way in and out, on both backends.

    SQLite stores fixed-width text with microseconds, so comparisons in SQL
    stay correct down to the microsecond (lease boundaries depend on it).
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetimes are not stored; use UTC-aware values")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


def one_of(column: str, values: tuple[str, ...]) -> str:
    """The SQL of a CHECK constraint keeping `column` to a closed set of names."""
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


JSONDocument = JSON().with_variant(JSONB(), "postgresql")
"""A small JSON document column (JSONB on PostgreSQL)."""


def json_object(value: dict[str, Any] | None) -> dict[str, Any]:
    return dict(value or {})
