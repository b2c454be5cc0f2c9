"""What a verb takes, as JSON Schema, derived from the API's GraphQL types.

A mutation takes one input object (`$input: ClaimTaskInput!`): its arguments are that
object's fields. A query's arguments are its variables. Either way, the schema is read
off the GraphQL types, so a field added to an input is offered wherever the verb is:

- `ID`, `String` → string; `Int` → integer; `Float` → number; `Boolean` → boolean;
  `DateTime` → string of format date-time; `JSON` → any value;
- an enum → its values; a list → an array of its items; an input object → an object of
  its fields (no others);
- non-null without a default → required; nullable → may also be null; a default is
  said (`default`), and the field may then be left out;
- descriptions are the schema's: the field's (or the argument's a variable is passed
  to), else its type's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphql import (
    ConstValueNode,
    FieldNode,
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLScalarType,
    GraphQLSchema,
    NullValueNode,
    OperationDefinitionNode,
    VariableNode,
    is_input_type,
    type_from_ast,
    value_from_ast_untyped,
)

_SCALARS: Mapping[str, Mapping[str, Any]] = {
    "ID": {"type": "string"},
    "String": {"type": "string"},
    "Int": {"type": "integer"},
    "Float": {"type": "number"},
    "Boolean": {"type": "boolean"},
    "DateTime": {"type": "string", "format": "date-time"},
    "JSON": {},
}


def field_description(schema: GraphQLSchema, kind: str, field: str) -> str | None:
    root = schema.mutation_type if kind == "mutation" else schema.query_type
    assert root is not None
    description: str | None = root.fields[field].description
    return description


def arguments_schema(
    schema: GraphQLSchema, operation: OperationDefinitionNode, input_type: str | None
) -> dict[str, Any]:
    """What an operation takes: the fields of its input object type `input_type` (a
    mutation's), else its variables."""
    if input_type is not None:
        kind = schema.type_map[input_type]
        assert isinstance(kind, GraphQLInputObjectType), f"{input_type}: no input object"
        return _object(kind, ())
    definitions = operation.variable_definitions or ()
    descriptions = _argument_descriptions(schema, operation)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for definition in definitions:
        name = definition.variable.name.value
        declared = type_from_ast(schema, definition.type)
        assert is_input_type(declared), f"${name}: no input type"
        value = _value(declared, descriptions.get(name), ())
        _with_default(value, definition.default_value, declared, name, required)
        properties[name] = value
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _argument_descriptions(
    schema: GraphQLSchema, operation: OperationDefinitionNode
) -> dict[str, str | None]:
    """Each variable passed straight to a root field's argument: that argument's
    description."""
    root = schema.mutation_type if operation.operation.value == "mutation" else schema.query_type
    assert root is not None
    found: dict[str, str | None] = {}
    for selection in operation.selection_set.selections:
        if not isinstance(selection, FieldNode) or selection.name.value not in root.fields:
            continue
        field = root.fields[selection.name.value]
        for argument in selection.arguments or ():
            if isinstance(argument.value, VariableNode) and argument.name.value in field.args:
                found[argument.value.name.value] = field.args[argument.name.value].description
    return found


def _object(kind: GraphQLInputObjectType, within: tuple[str, ...]) -> dict[str, Any]:
    if kind.name in within:
        raise ValueError(f"{' > '.join((*within, kind.name))}: a recursive input")
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, field in kind.fields.items():
        value = _value(field.type, field.description, (*within, kind.name))
        # The schema is built from SDL, so a default is the literal it was written as
        # (read from the node: graphql-core 3.2 and 3.3 keep the value differently).
        default = field.ast_node.default_value if field.ast_node else None
        _with_default(value, default, field.type, name, required)
        properties[name] = value
    described: dict[str, Any] = {"description": kind.description} if kind.description else {}
    return {
        "type": "object",
        **described,
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _with_default(
    value: dict[str, Any],
    default: ConstValueNode | None,
    kind: GraphQLInputType,
    name: str,
    required: list[str],
) -> None:
    """Say the default (a null one goes without saying); without one, a non-null
    value is required."""
    if default is None:
        if isinstance(kind, GraphQLNonNull):
            required.append(name)
    elif not isinstance(default, NullValueNode):
        value["default"] = value_from_ast_untyped(default)


def _value(
    kind: GraphQLInputType, description: str | None, within: tuple[str, ...]
) -> dict[str, Any]:
    nullable = not isinstance(kind, GraphQLNonNull)
    inner = kind.of_type if isinstance(kind, GraphQLNonNull) else kind
    value: dict[str, Any]
    if isinstance(inner, GraphQLList):
        value = {"type": "array", "items": _value(inner.of_type, None, within)}
    elif isinstance(inner, GraphQLEnumType):
        value = {"type": "string", "enum": list(inner.values)}
    elif isinstance(inner, GraphQLInputObjectType):
        value = _object(inner, within)
    else:
        assert isinstance(inner, GraphQLScalarType)
        value = dict(_SCALARS[inner.name])
    if not description and isinstance(inner, GraphQLEnumType | GraphQLInputObjectType):
        description = inner.description
    if description:
        value["description"] = description
    if nullable and "type" in value:
        value["type"] = [value["type"], "null"]
        if "enum" in value:
            value["enum"] = [*value["enum"], None]
    return value
