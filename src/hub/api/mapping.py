"""Views to GraphQL types and GraphQL inputs to service arguments, by declaration.

A GraphQL type's plain fields are named after the fields of the view it shows, so one
function makes every type from its view: `from_view(Task, view)` fills each field the
type declares (fields with a resolver aside) from the view's attribute of the same name,
converted by the field's annotation: an enum from its value, a list from a tuple, a
nested type from its nested view, `X | None` keeping None; IDs and scalars are taken
as they are. Adding a field means declaring it on the view and on the type.

A field shown under another name than the view's says so where it is declared,
`worktree_id: str = strawberry.field(metadata=shows("identity"))`; a value the view
does not hold is given by the caller, `from_view(TaskPayload, view, server_time=now)`.

The other way, `call(work.claim_task, input)` is the operation a mutation runs: the
service function's arguments (or its command dataclass) read from the input's fields of
the same names.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from collections.abc import Callable, Mapping
from datetime import datetime
from enum import Enum
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
from strawberry.types.private import is_private
from strawberry.utils.str_converters import to_camel_case

from hub.identity.views import Actor
from hub.storage.unit_of_work import UnitOfWork

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
            # A private field is the type's own business (what a resolver reads).
            if f.base_resolver is None and not is_private(f.type)
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
        # None where the operation left out a field the request does not select
        # (`hub.api.operations._unread`); GraphQL never reads it.
        return lambda value: None if value is None else from_view(nested, value)
    if tp is JSON:
        return _json
    if isinstance(tp, NewType) or tp in _SCALARS:
        return _as_is  # an ID is its string
    raise TypeError(f"no conversion from a view to {tp!r}")


def as_json(value: Any) -> Any:
    """A GraphQL type's value as the JSON a query would answer with (field names in
    camelCase, enums by value, instants in ISO 8601), for the plain-HTTP routes that
    answer with the schema's types (the artifact upload)."""
    if has_object_definition(type(value)):
        return {
            f.graphql_name or to_camel_case(f.python_name): as_json(getattr(value, f.python_name))
            for f in type(value).__strawberry_definition__.fields
            if f.base_resolver is None and not is_private(f.type)
        }
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [as_json(item) for item in value]
    return value


# --- inputs to service arguments ---------------------------------------------------------

R = TypeVar("R")


def call(
    fn: Callable[..., R],
    input: object,
    /,
    *,
    renamed: Mapping[str, str] | None = None,
    **given: object,
) -> Callable[[UnitOfWork, Actor], R]:
    """The operation `mutate` runs: `fn(uow, actor, …)` with its arguments read from the
    GraphQL input by name, so adding an input field means declaring it on the input and on
    the service's command, not copying it here. A parameter annotated with a dataclass (a
    command) is built from the whole input (`command`); any other takes the input's field
    of the same name. `renamed` maps an input field to the argument that receives it;
    `given` supplies what the input does not hold. Every input field must land somewhere:
    a field the service would silently drop is a TypeError, which the suite meets."""
    names = dict(renamed or {})
    kwargs: dict[str, Any] = {}
    used: set[str] = set()
    for parameter, hint in _parameters(fn):
        command_class = _command_class(hint)
        if parameter in given:
            kwargs[parameter] = given[parameter]
        elif command_class is not None:
            kwargs[parameter] = _command(command_class, input, names, given, used)
        else:
            source = _source_of(parameter, names)
            if hasattr(input, source):
                kwargs[parameter] = _value(getattr(input, source), hint)
                used.add(source)
    _require_all_used(input, used, given, names, fn)
    return lambda uow, actor: fn(uow, actor, **kwargs)


def command(cls: type[T], input: object, /, **given: object) -> T:
    """The service command `cls` (a dataclass) from a GraphQL input, field by name."""
    used: set[str] = set()
    made = _command(cls, input, {}, given, used)
    _require_all_used(input, used, given, {}, cls)
    return made


def _command(
    cls: type[T],
    input: object,
    names: Mapping[str, str],
    given: Mapping[str, object],
    used: set[str],
) -> T:
    values: dict[str, Any] = {}
    hints = _hints(cls)
    for f in dataclasses.fields(cast(Any, cls)):
        if f.name in given:
            values[f.name] = given[f.name]
            continue
        source = _source_of(f.name, names)
        if hasattr(input, source):
            values[f.name] = _value(getattr(input, source), hints[f.name])
            used.add(source)
    return cast(Callable[..., T], cls)(**values)


def _source_of(argument: str, names: Mapping[str, str]) -> str:
    for source, target in names.items():
        if target == argument:
            return source
    return argument


def _require_all_used(
    input: object,
    used: set[str],
    given: Mapping[str, object],
    names: Mapping[str, str],
    target: object,
) -> None:
    fields = {f.python_name for f in type(input).__strawberry_definition__.fields}  # type: ignore[attr-defined]
    left = fields - used - set(given) - set(names)
    if left:
        raise TypeError(f"{getattr(target, '__name__', target)} takes no {sorted(left)}")


_PARAMETERS: dict[Callable[..., Any], tuple[tuple[str, Any], ...]] = {}


def _parameters(fn: Callable[..., Any]) -> tuple[tuple[str, Any], ...]:
    """A service function's parameters after `(uow, actor)`, with their annotations."""
    known = _PARAMETERS.get(fn)
    if known is None:
        hints = typing.get_type_hints(fn)
        names = list(inspect.signature(fn).parameters)[2:]
        known = _PARAMETERS[fn] = tuple((name, hints.get(name, Any)) for name in names)
    return known


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    known = _HINTS.get(cls)
    if known is None:
        known = _HINTS[cls] = typing.get_type_hints(cls)
    return known


def _command_class(hint: Any) -> type | None:
    """The dataclass a parameter or field is annotated with, `X | None` included."""
    candidates = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    for candidate in candidates:
        if isinstance(candidate, type) and dataclasses.is_dataclass(candidate):
            return candidate
    return None


def _value(value: Any, hint: Any) -> Any:
    """An input value as the service takes it: an API-only enum by its value, a list as a
    list, a nested input as the command (or plain mapping) its annotation asks for."""
    if value is None:
        return None
    if isinstance(value, Enum) and not isinstance(value, str):
        return value.value
    if isinstance(value, list | tuple):
        item = next(iter(typing.get_args(hint)), Any)
        return [_value(v, item) for v in value]
    if has_object_definition(type(value)):
        nested = _command_class(hint)
        if nested is not None:
            return command(nested, value)
        return {
            f.python_name: _value(getattr(value, f.python_name), Any)
            for f in type(value).__strawberry_definition__.fields
        }
    return value
