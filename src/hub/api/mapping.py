"""Views to GraphQL types, by the types' own declarations.

A GraphQL type's plain fields are named after the fields of the view it shows, so one
function makes every type from its view: `from_view(Task, view)` fills each field the
type declares (fields with a resolver aside) from the view's attribute of the same name,
converted by the field's annotation: an enum from its value, a list from a tuple, a
nested type from its nested view, `X | None` keeping None; IDs and scalars are taken
as they are. Adding a field means declaring it on the view and on the type.

A field shown under another name than the view's says so where it is declared,
`worktree_id: str = strawberry.field(metadata=shows("identity"))`; a value the view
does not hold is given by the caller, `from_view(TaskPayload, view, server_time=now)`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from operator import attrgetter
from types import SimpleNamespace
from typing import Any, NewType, TypeVar, cast

from strawberry.scalars import JSON
from strawberry.types.base import (
    StrawberryList,
    StrawberryOptional,
    has_object_definition,
)
from strawberry.types.enum import StrawberryEnumDefinition
from strawberry.types.lazy_type import LazyType

T = TypeVar("T")

_SCALARS = (str, int, float, bool, datetime)

_VIEW_FIELD = "hub.api.view_field"


def shows(view_field: str) -> Mapping[str, str]:
    """Field metadata: this field shows the view's `view_field` (a dotted path reads
    through nested views: `attempt.lease`)."""
    return {_VIEW_FIELD: view_field}


def from_view(cls: type[T], view: object, /, **given: object) -> T:
    """The GraphQL type `cls` showing `view`; `given` holds the values it does not hold."""
    values: dict[str, object] = dict(given)
    for name, read, convert in _fields(cls):
        if name not in values:
            values[name] = convert(read(view))
    return cast(Callable[..., T], cls)(**values)


def payload(cls: type[T], field: str | None = None) -> Callable[[object, datetime], T]:
    """A mutation's answer (`mutate`'s `to_payload`): the payload `cls` at `now`, from a
    result that holds its fields by name, or, with `field`, that is that one field."""

    def answer(result: object, now: datetime) -> T:
        held = result if field is None else SimpleNamespace(**{field: result})
        return from_view(cls, held, server_time=now)

    return answer


_Convert = Callable[[Any], Any]
_FIELDS: dict[type, tuple[tuple[str, _Convert, _Convert], ...]] = {}


def _fields(cls: type) -> tuple[tuple[str, _Convert, _Convert], ...]:
    """Each plain field's name, how to read it from a view, how to convert the value."""
    known = _FIELDS.get(cls)
    if known is None:
        if not has_object_definition(cls):
            raise TypeError(f"{cls.__name__} is not a GraphQL type")
        known = _FIELDS[cls] = tuple(
            (
                f.python_name,
                attrgetter(f.metadata.get(_VIEW_FIELD, f.python_name)),
                _converter(f.type),
            )
            for f in cls.__strawberry_definition__.fields
            if f.base_resolver is None
        )
    return known


def _as_is(value: Any) -> Any:
    return value


def _json(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value  # a view's tuple: a JSON list


def _converter(tp: Any) -> _Convert:
    """How a view's value becomes the value of a field of GraphQL type `tp`."""
    if isinstance(tp, LazyType):
        return _converter(tp.resolve_type())
    if isinstance(tp, StrawberryOptional):
        inner = _converter(tp.of_type)
        return lambda value: None if value is None else inner(value)
    if isinstance(tp, StrawberryList):
        item = _converter(tp.of_type)
        return lambda values: [item(value) for value in values]
    if isinstance(tp, StrawberryEnumDefinition):
        return tp.wrapped_cls
    if isinstance(tp, type) and has_object_definition(tp):
        nested = tp
        return lambda value: from_view(nested, value)
    if tp is JSON:
        return _json
    if isinstance(tp, NewType) or tp in _SCALARS:
        return _as_is  # an ID is its string
    raise TypeError(f"no conversion from a view to {tp!r}")
