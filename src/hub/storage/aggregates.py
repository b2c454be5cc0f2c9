"""Aggregates written differently on SQLite and PostgreSQL, declared once.

`json_list(column)` gathers a group's values into a JSON array, so a row can carry a
one-to-many side (a task's labels, its prerequisites) and a list reads in one statement
instead of one per side. Read back, it is a Python list (`None` where a scalar subquery
found no row; `[]` or `None` where the group is empty): `listed` makes it a tuple.

Order: PostgreSQL sorts inside the aggregate (`ORDER BY` the value, in the database's
collation, as a query's `ORDER BY` would). SQLite before 3.44 has no `ORDER BY` inside
an aggregate and leaves the order unspecified, so `listed` sorts there: SQLite's
default BINARY collation compares UTF-8 bytes, which is Python's code point order.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, ColumnElement
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement


class json_list(FunctionElement[list[Any]]):  # noqa: N801 (named like the SQL functions)
    """`json_list(column)`: the group's values of `column` as a JSON array."""

    type = JSON()
    inherit_cache = True
    name = "json_list"

    def __init__(self, column: ColumnElement[Any]) -> None:
        super().__init__(column)


def _only_argument(element: json_list, compiler: SQLCompiler, **kw: Any) -> str:
    (column,) = element.clauses
    return compiler.process(column, **kw)


@compiles(json_list, "postgresql")
def _json_list_postgresql(element: json_list, compiler: SQLCompiler, **kw: Any) -> str:
    value = _only_argument(element, compiler, **kw)
    return f"json_agg({value} ORDER BY {value})"


@compiles(json_list, "sqlite")
def _json_list_sqlite(element: json_list, compiler: SQLCompiler, **kw: Any) -> str:
    return f"json_group_array({_only_argument(element, compiler, **kw)})"


def listed(value: list[Any] | None, dialect: str) -> tuple[Any, ...]:
    """A `json_list` as read back, in the value order (see the module docstring)."""
    if not value:
        return ()
    return tuple(sorted(value)) if dialect == "sqlite" else tuple(value)
