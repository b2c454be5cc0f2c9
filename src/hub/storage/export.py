"""A project's rows, table by table, page by page, as JSON-ready records (docs/exports.md).

Each domain module exports its own tables through its service (`work.service.export_rows`
and its siblings), with `export_tables` here: every table of the module that carries a
`project_id` column, so a table a module adds later is exported without anyone
remembering to. `hub.exports` strings the modules together in one read transaction.

What a module's export yields, for each table:

- one `_table` record describing it (name, columns and their kinds, primary key, the
  references to other tables), even when it has no row, so that a reader can build the
  table and its foreign keys without knowing hub's schema;
- then its rows, in primary-key order, read a page at a time by keyset pagination
  (`WHERE key > last key of the previous page ORDER BY key LIMIT n`): memory stays one
  page whatever the project's size, and no page is read twice or skipped.

References between a project's rows are composite foreign keys `(project_id, x_id) →
x(project_id, id)` in hub; an export holds one project, so they are described without
`project_id` (`task_id → tasks.id`). References to records outside the project (the
principals and agent sessions rows name) are carried by each record (`refers_to`), so
that the identity module can export exactly the principals and sessions the project's
rows name, and nobody else.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from types import ModuleType
from typing import Any, Final

from sqlalchemy import JSON, Boolean, Column, FromClause, Integer, Table, select, tuple_
from sqlalchemy.sql.elements import ColumnElement

from hub.storage.base import Base, UTCDateTime
from hub.storage.unit_of_work import UnitOfWork

# Rows read per statement. A page is held in memory while it is sent, nothing more.
PAGE_SIZE: Final = 500

# Records about the export itself rather than a table's row start with an underscore.
TABLE_RECORD: Final = "_table"
PROJECT_COLUMN: Final = "project_id"


@dataclass(frozen=True, slots=True)
class ExportRecord:
    """One line of an export: a row of `table` (column name → JSON value), or a record
    about the export itself (`_export`, `_table`, `_end`, `_error`).

    `refers_to`: (table, id) of records outside the project this row names (principals,
    agent sessions), for their module to export; not part of the line."""

    table: str
    row: dict[str, Any]
    refers_to: tuple[tuple[str, str], ...] = field(default=())

    def line(self) -> dict[str, Any]:
        return {"table": self.table, "row": self.row}


def project_tables(tables_module: ModuleType) -> list[Table]:
    """The tables a module declares (in `tables_module`, in declaration order) that hold
    a project's rows: those with a `project_id` column."""
    found: list[Table] = []
    for value in vars(tables_module).values():
        if not (isinstance(value, type) and issubclass(value, Base) and value is not Base):
            continue
        if value.__module__ != tables_module.__name__:
            continue
        table = value.__table__
        if isinstance(table, Table) and PROJECT_COLUMN in table.c and table not in found:
            found.append(table)
    return found


def export_tables(
    uow: UnitOfWork,
    project_id: str,
    tables: Sequence[Table],
    *,
    omit: Mapping[str, Collection[str]] | None = None,
    keys: Mapping[str, Sequence[str]] | None = None,
    references: Mapping[str, Mapping[str, str]] | None = None,
) -> Iterator[ExportRecord]:
    """Every table's description and rows of one project (`export_table` for each)."""
    for table in tables:
        yield from export_table(
            uow,
            table,
            project_id,
            omit=(omit or {}).get(table.name, ()),
            key=(keys or {}).get(table.name),
            references=(references or {}).get(table.name),
        )


def export_table(
    uow: UnitOfWork,
    table: Table,
    project_id: str,
    *,
    scope: str = PROJECT_COLUMN,
    omit: Collection[str] = (),
    key: Sequence[str] | None = None,
    references: Mapping[str, str] | None = None,
    page_size: int | None = None,
    rows_from: FromClause | None = None,
) -> Iterator[ExportRecord]:
    """One table's description, then its rows where `scope` is the project, a page at a
    time in the order of `key` (default: the primary key; it must be unique among the
    rows exported).

    `omit`: columns never exported (secrets, storage internals). `references`: columns
    naming a record of another table without a foreign key in the schema (an event's
    actor, a finding's task), as column → table, described like the foreign keys.
    `rows_from`: where the rows are read, if not from `table` itself (a view with its
    columns: the event log's on PostgreSQL)."""
    size = page_size or PAGE_SIZE
    columns = [c for c in table.columns if c.name not in omit]
    key_columns = [table.c[name] for name in key] if key else list(table.primary_key.columns)
    outside = _outside_references(table)
    for column, target in (references or {}).items():
        known = table.metadata.tables.get(target)
        if known is None or PROJECT_COLUMN not in known.c:
            outside[column] = target
    yield ExportRecord(TABLE_RECORD, describe(table, columns, key_columns, references))
    names = [c.name for c in columns]
    extra = [c for c in key_columns if c.name not in names]
    source = table if rows_from is None else rows_from
    read_key = [source.c[c.name] for c in key_columns]
    statement = (
        select(*(source.c[c.name] for c in [*columns, *extra]))
        .where(source.c[scope] == project_id)
        .order_by(*read_key)
        .limit(size)
    )
    # Positions in a result row, worked out once: rows are read as plain tuples, and
    # only the datetime columns need converting (a vocabulary member is a `str`).
    position = {name: i for i, name in enumerate([*names, *(c.name for c in extra)])}
    times = [position[c.name] for c in columns if isinstance(c.type, UTCDateTime)]
    named = [(position[name], target) for name, target in outside.items() if name in position]
    keys = [position[c.name] for c in key_columns]
    last: tuple[Any, ...] | None = None
    while True:
        page = statement if last is None else statement.where(_after(read_key, last))
        rows = uow.session.execute(page).all()
        for row in rows:
            values = list(row[: len(names)])
            for i in times:
                if values[i] is not None:
                    values[i] = values[i].isoformat(timespec="microseconds")
            refers = tuple((target, str(row[i])) for i, target in named if row[i] is not None)
            yield ExportRecord(table.name, dict(zip(names, values, strict=True)), refers)
        if len(rows) < size:
            return
        last = tuple(rows[-1][i] for i in keys)


def export_chosen(
    uow: UnitOfWork,
    table: Table,
    ids: Collection[str],
    *,
    omit: Collection[str] = (),
    page_size: int | None = None,
) -> Iterator[ExportRecord]:
    """A table's description, then the rows whose `id` is one of `ids` (records outside
    any project that a project's rows name), in id order, a page of ids at a time."""
    columns = [c for c in table.columns if c.name not in omit]
    key = table.c["id"]
    yield ExportRecord(TABLE_RECORD, describe(table, columns, [key]))
    size = page_size or PAGE_SIZE
    chosen = sorted(set(ids))
    for start in range(0, len(chosen), size):
        page = chosen[start : start + size]
        statement = select(*columns).where(key.in_(page)).order_by(key)
        for row in uow.session.execute(statement).mappings():
            yield ExportRecord(table.name, {c.name: to_json(row[c.name]) for c in columns})


def describe(
    table: Table,
    columns: Sequence[Column[Any]],
    key: Sequence[Column[Any]],
    references: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A table as a reader needs it: its columns and their kinds (`text`, `integer`,
    `boolean`, `datetime`, `json`), its primary key and its references, each
    `[column, table, column]`, without the `project_id` that every one of them shares."""
    names = {c.name for c in columns}
    found: list[list[str]] = []
    for constraint in table.foreign_key_constraints:
        pairs = [
            (element.parent.name, element.column)
            for element in constraint.elements
            if element.parent.name != PROJECT_COLUMN
        ]
        if len(pairs) != 1 or pairs[0][0] not in names:
            continue
        column, target = pairs[0]
        if column == PROJECT_COLUMN or (target.table.name == table.name and column == target.name):
            continue
        found.append([column, target.table.name, target.name])
    for column, target_table in (references or {}).items():
        found.append([column, target_table, "id"])
    return {
        "name": table.name,
        "columns": {c.name: _kind(c) for c in columns},
        "primary_key": [c.name for c in key],
        "references": found,
    }


def to_json(value: Any) -> Any:
    """A column's value as JSON: datetimes as ISO 8601 in UTC to the microsecond (so text
    order is time order), vocabulary names as their strings."""
    if isinstance(value, datetime):
        return value.isoformat(timespec="microseconds")
    if isinstance(value, Enum):
        return value.value
    return value


def _kind(column: Column[Any]) -> str:
    kind = column.type
    if isinstance(kind, UTCDateTime):
        return "datetime"
    if isinstance(kind, Boolean):
        return "boolean"
    if isinstance(kind, Integer):
        return "integer"
    if isinstance(kind, JSON):
        return "json"
    return "text"


def _outside_references(table: Table) -> dict[str, str]:
    """Single-column foreign keys to tables that are not a project's (principals, agent
    sessions, tokens), other than the project itself: column → table."""
    found: dict[str, str] = {}
    for constraint in table.foreign_key_constraints:
        if len(constraint.elements) != 1:
            continue
        element = constraint.elements[0]
        target = element.column.table
        if element.parent.name == PROJECT_COLUMN or PROJECT_COLUMN in target.c:
            continue
        if target.name == "projects":
            continue
        found[element.parent.name] = target.name
    return found


def _after(key: Sequence[ColumnElement[Any]], last: tuple[Any, ...]) -> ColumnElement[bool]:
    after: ColumnElement[bool] = (
        key[0] > last[0] if len(key) == 1 else tuple_(*key) > tuple_(*last)
    )
    return after
