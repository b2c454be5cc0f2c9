"""Rows to views, by the views' own declarations.

A module's view is a frozen dataclass whose fields are named after the columns of the
row it shows, so one function makes every view from its row: `view_of(CheckpointView,
row)` reads each field from the row's attribute of the same name, converted by the
field's annotation: a `tuple[X, ...]` from a JSON list, a `dict` copied (None is empty
unless the field is optional); anything else as it is. What the row does not hold
(judged at read time, read from another row) the caller gives: `view_of(ResourceView,
row, shared_across_projects=…)`. Adding a column to a view means declaring the field,
and nothing else. A hot read's prebuilt statement reads its rows by position instead
(`row_reader`), by the same declarations.

The API's types are made from views the same way (`hub.api.mapping`).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

V = TypeVar("V")

_Convert = Callable[[Any], Any]
_FIELDS: dict[type, tuple[tuple[str, _Convert], ...]] = {}


def view_of(cls: type[V], row: object, /, **given: object) -> V:
    """The view `cls` of `row`; `given` holds the fields the row does not."""
    values: dict[str, object] = dict(given)
    for name, convert in _fields(cls):
        if name not in values:
            values[name] = convert(getattr(row, name))
    return cast(Callable[..., V], cls)(**values)


def row_reader(cls: type[V], columns: Sequence[str]) -> Callable[..., V]:
    """`view_of` for rows of a prebuilt statement, whose first columns are `columns`
    (each a field of `cls`, in any order): read by position, the converting fields
    converted, the rest of the row left to the caller, who gives the other fields:
    `make(row, effective_state=…)`. For hot reads, where reading each field by name
    from a row costs more than the statement."""
    converts = dict(_fields(cls))
    unknown = [name for name in columns if name not in converts]
    if unknown:
        raise TypeError(f"{cls.__name__} has no fields {unknown}")
    names = tuple(columns)
    converted = tuple((name, converts[name]) for name in names if converts[name] is not _as_is)
    make = cast(Callable[..., V], cls)

    def read(row: Sequence[Any], /, **given: object) -> V:
        values: dict[str, Any] = dict(zip(names, row, strict=False))
        for name, convert in converted:
            values[name] = convert(values[name])
        return make(**values, **given)

    return read


def _fields(cls: type) -> tuple[tuple[str, _Convert], ...]:
    known = _FIELDS.get(cls)
    if known is None:
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"{cls.__name__} is not a view (a dataclass)")
        hints = typing.get_type_hints(cls)
        known = _FIELDS[cls] = tuple(
            (f.name, _converter(hints[f.name])) for f in dataclasses.fields(cls) if f.init
        )
    return known


def _as_is(value: Any) -> Any:
    return value


def _tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value or ())


def _dict(value: Any) -> dict[Any, Any]:
    return dict(value or {})


def _optional_dict(value: Any) -> dict[Any, Any] | None:
    return None if value is None else dict(value)


def _converter(tp: Any) -> _Convert:
    kinds = {typing.get_origin(tp), *(typing.get_origin(arg) for arg in typing.get_args(tp))}
    if tuple in kinds:
        return _tuple
    if dict in kinds:
        return _optional_dict if type(None) in typing.get_args(tp) else _dict
    return _as_is


@dataclasses.dataclass(frozen=True)
class Shortlist(typing.Generic[V]):
    """The first few of a set of records and how many there are in all: what a page
    that only points at them shows (the dashboard's home page), read without loading
    the rest."""

    items: list[V]
    total: int
