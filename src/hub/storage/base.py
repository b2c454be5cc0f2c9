"""The declarative base every module's tables derive from, and shared column types."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, TypeVar

from sqlalchemy import JSON, DateTime, MetaData, String, Table, TypeDecorator
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


def one_of(column: str, values: Iterable[str]) -> str:
    """The SQL of a CHECK constraint keeping `column` to a closed set of names (a
    module's vocabulary, `one_of("state", TaskState)`, or a subset of it)."""
    return f"{column} IN ({', '.join(repr(str(v)) for v in values)})"


E = TypeVar("E", bound=StrEnum)


class Vocabulary(TypeDecorator[E]):
    """A column holding one name of a module's vocabulary (a `StrEnum`): stored as its
    string in a plain `VARCHAR(length)` (the CHECK constraint, `one_of`, keeps it to the
    vocabulary), read back as the enum member."""

    impl = String
    cache_ok = True

    def __init__(self, vocabulary: type[E], length: int) -> None:
        super().__init__(length)
        self.vocabulary = vocabulary

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else str(value)

    def process_result_value(self, value: str | None, dialect: Dialect) -> E | None:
        return None if value is None else self.vocabulary(value)


JSONDocument = JSON().with_variant(JSONB(), "postgresql")
"""A small JSON document column (JSONB on PostgreSQL)."""


def json_object(value: dict[str, Any] | None) -> dict[str, Any]:
    return dict(value or {})
