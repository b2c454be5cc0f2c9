"""Writing one row by a prebuilt statement instead of an ORM flush, on the hot mutations.

A claim, a renewal, an acceptance, a checkpoint and a submission each insert a row or
change a few columns of the task and attempt they hold (ORM rows, read once under the
lock). Flushing such a change costs the ORM's unit of work (change detection,
dependency sorting, a statement compiled per flush) several times the statement itself.
Here the INSERT or UPDATE is built once per (table, columns) and run, and the row is
then recorded in the session as stored: it reads the same as after a flush, later
changes to it flush as usual, and nothing is written twice.

Changes already pending in the session are flushed first, so statements reach the
database in the order the operation made them (a CHECK that ties two columns of a row,
or an attempt that must end before its task moves, sees them as the ORM would have
written them).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from sqlalchemy import Insert, Update, bindparam, insert, inspect, update
from sqlalchemy.orm import Session, make_transient_to_detached
from sqlalchemy.orm.attributes import set_committed_value

from hub.storage.base import Base, table_of


def insert_row(session: Session, row: Base) -> None:
    """Insert a new row and add it to the session as stored. The row is built with a
    value for every column that has a default (defaults are not computed here)."""
    session.flush()
    statement, attributes, defaulted = _insert_of(type(row))
    unset = [key for key in defaulted if key not in row.__dict__]
    if unset:
        raise TypeError(f"{type(row).__name__} needs values for {unset} (they have defaults)")
    session.execute(statement, {column: getattr(row, key) for key, column in attributes})
    for key, _ in attributes:
        if key not in row.__dict__:
            set_committed_value(row, key, None)
    make_transient_to_detached(row)
    session.add(row)


def update_row(session: Session, row: Base, values: Mapping[str, Any]) -> None:
    """Store `values` (attribute name to new value) in the row's table and on the row.
    Changes already made to the row's attributes and not yet flushed go into the same
    statement (`values` win where both name a column)."""
    state = inspect(row)
    columns = state.mapper.columns
    pending = {key: getattr(row, key) for key in state.committed_state if key in columns}
    values = {**pending, **values}
    for name in values:
        set_committed_value(row, name, values[name])
    session.flush()  # the other rows' pending changes, in the order they were made
    names = tuple(sorted(values))
    statement, key = _update_of(type(row), names)
    session.execute(
        statement,
        {"row_key": getattr(row, key), **{f"new_{name}": values[name] for name in names}},
    )


@cache
def _insert_of(
    model: type[Base],
) -> tuple[Insert, tuple[tuple[str, str], ...], tuple[str, ...]]:
    """The INSERT of every column of the model's table, (attribute, column) pairs, and
    the attributes whose columns have a default."""
    mapper = inspect(model)
    attributes = tuple((key, column.name) for key, column in mapper.columns.items())
    defaulted = tuple(
        key
        for key, column in mapper.columns.items()
        if column.default is not None or column.server_default is not None
    )
    return insert(table_of(model)), attributes, defaulted


@cache
def _update_of(model: type[Base], names: tuple[str, ...]) -> tuple[Update, str]:
    """The UPDATE of these attributes' columns of one row, by its one-column primary key,
    and the key's attribute name."""
    mapper = inspect(model)
    (key_column,) = mapper.primary_key
    table = table_of(model)
    statement = (
        update(table)
        .where(table.c[key_column.name] == bindparam("row_key"))
        .values({mapper.columns[name].name: bindparam(f"new_{name}") for name in names})
    )
    return statement, mapper.get_property_by_column(key_column).key
