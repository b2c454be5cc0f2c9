"""GraphQL JSON to typed records, by the records' own declarations.

A record is a frozen dataclass whose fields are named after the GraphQL fields they hold,
in snake case (`criteria_revision` holds `criteriaRevision`). That one declaration gives
both halves of talking to the API:

- `selection(Record)`: the selection set asking for exactly those fields, a nested
  record as a sub-selection; a field added to a record is asked for by every document
  that selects the record;
- `from_graphql(Record, data)`: the record read from an answer, each value converted by
  its annotation: `str`, `int`, `bool`, `float`, `datetime` (ISO 8601), a `StrEnum`,
  `X | None`, `list[X]`, `tuple[X, ...]` and nested records;
- `to_graphql(record)`: the other way, a record the client writes (a finding, a check
  result) as an input object.

An answer's shape is checked as it is read: a field the record needs that is missing or
null raises `KeyError`/`TypeError`, which the API client reports as an answer it could
not read (`hub.client.api`). A field with a default may be absent (answers selected by
other documents, such as a scripted server's); a null optional field is None.

Fields that are no GraphQL field say so in their metadata: `field(metadata=RECEIVED)` is
the object as received (kept for `--json` output), `field(metadata=GIVEN)` is passed in
by the caller (when the request was sent). Neither is selected.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from datetime import datetime
from enum import Enum
from typing import Any, TypeVar

R = TypeVar("R")

_ROLE = "hub.client.mapping"
_GIVEN = "given"
_RECEIVED = "received"
_RECEIVED_UNTYPED = "received without __typename"

# Field metadata of what is no GraphQL field: `field(metadata=RECEIVED)`.
GIVEN: Mapping[str, str] = {_ROLE: _GIVEN}  # passed to `from_graphql` by the caller
RECEIVED: Mapping[str, str] = {_ROLE: _RECEIVED}  # the object as received
RECEIVED_UNTYPED: Mapping[str, str] = {_ROLE: _RECEIVED_UNTYPED}  # without its __typename


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


@dataclasses.dataclass(frozen=True)
class _Field:
    name: str
    graphql: str
    type: Any
    role: str | None
    has_default: bool


_FIELDS: dict[type, tuple[_Field, ...]] = {}


def _fields(cls: type) -> tuple[_Field, ...]:
    known = _FIELDS.get(cls)
    if known is None:
        known = _FIELDS[cls] = _declared(cls)
    return known


def _declared(cls: type) -> tuple[_Field, ...]:
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls.__name__} is not a record (a dataclass)")
    hints = typing.get_type_hints(cls)
    return tuple(
        _Field(
            name=f.name,
            graphql=camel(f.name),
            type=hints[f.name],
            role=f.metadata.get(_ROLE),
            has_default=f.default is not dataclasses.MISSING
            or f.default_factory is not dataclasses.MISSING,
        )
        for f in dataclasses.fields(cls)
        if f.init
    )


def _optional(tp: Any) -> Any | None:
    """`X` of `X | None`, else None."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        others = [a for a in args if a is not type(None)]
        if len(others) == 1 and len(args) == 2:
            return others[0]
    return None


def _record_in(tp: Any) -> type | None:
    """The record a field's type holds (through optionals, lists and tuples), if any."""
    inner = _optional(tp)
    if inner is not None:
        return _record_in(inner)
    if typing.get_origin(tp) in (list, tuple):
        return _record_in(typing.get_args(tp)[0])
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return tp
    return None


def selection(cls: type) -> str:
    """The GraphQL selection set of a record's fields (without the braces)."""
    parts = []
    for f in _fields(cls):
        if f.role is not None:
            continue
        nested = _record_in(f.type)
        parts.append(f"{f.graphql} {{ {selection(nested)} }}" if nested else f.graphql)
    return " ".join(parts)


def from_graphql(cls: type[R], data: Mapping[str, Any], **given: Any) -> R:
    """The record `cls` read from one JSON object of the shape `selection(cls)` asks for.

    `given` holds the values of its GIVEN fields; it may offer more than the record
    declares (every answer offers when it was sent), and those are left out.
    """
    if not isinstance(data, Mapping):
        raise TypeError(f"{cls.__name__}: expected an object, got {type(data).__name__}")
    values: dict[str, Any] = {}
    for f in _fields(cls):
        if f.role == _GIVEN:
            if f.name in given or not f.has_default:
                values[f.name] = given[f.name]
            continue
        if f.role == _RECEIVED:
            values[f.name] = data
            continue
        if f.role == _RECEIVED_UNTYPED:
            values[f.name] = {k: v for k, v in data.items() if k != "__typename"}
            continue
        value = data.get(f.graphql)
        if value is None:
            if f.has_default:
                continue  # absent or null: the record's default
            if _optional(f.type) is None:
                if f.graphql in data:
                    raise TypeError(f"{cls.__name__}.{f.graphql} is null")
                raise KeyError(f.graphql)
            values[f.name] = None
            continue
        values[f.name] = _convert(f.type, value, f"{cls.__name__}.{f.graphql}")
    return cls(**values)


def _convert(tp: Any, value: Any, where: str) -> Any:
    inner = _optional(tp)
    if inner is not None:
        return None if value is None else _convert(inner, value, where)
    if value is None:
        raise TypeError(f"{where} is null")
    origin = typing.get_origin(tp)
    if origin in (list, tuple):
        if not isinstance(value, list):
            raise TypeError(f"{where}: expected a list, got {type(value).__name__}")
        item = typing.get_args(tp)[0]
        items = [_convert(item, v, where) for v in value]
        return items if origin is list else tuple(items)
    if tp is Any or origin is dict or tp is dict:
        return value
    if tp is datetime:
        return datetime.fromisoformat(str(value))
    if tp is bool:
        return bool(value)
    if tp in (str, int, float):
        return tp(value)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp(value)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return from_graphql(tp, value)
    raise TypeError(f"{where}: no conversion to {tp!r}")


def to_graphql(record: Any) -> dict[str, Any]:
    """A record as a GraphQL input object: its fields under their camel-case names."""
    return {
        camel(f.name): _input_value(getattr(record, f.name)) for f in dataclasses.fields(record)
    }


def _input_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, list | tuple):
        return [_input_value(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_graphql(value)
    return value
