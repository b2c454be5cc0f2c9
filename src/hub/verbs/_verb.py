"""A verb: one named GraphQL operation under `graphql/operations/`, and what follows from it.

A `Verb` declares only what the file cannot say: its name (the file's stem), whether
the agent adapters offer it, and which of its inputs a client fills in itself. The rest
is read from the file and the schema when first asked for: the document as text (all the
command line needs, so sending one parses nothing), then its kind, its root field and
its input (which parse it, with graphql-core), the JSON Schema of that input and a
one-line summary (which read `graphql/schema.graphql`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hub.bundled import data_dir

if TYPE_CHECKING:
    from graphql import GraphQLSchema, OperationDefinitionNode


class Kind(StrEnum):
    QUERY = "query"
    MUTATION = "mutation"


# Filled in by a client wherever an input has it: the key of a keyed request is the
# client's, kept with the request so that a retry after a lost answer repeats it.
ALWAYS_FILLED: tuple[str, ...] = ("idempotencyKey",)

# A mutation takes one input object, `$input`; its fields are the verb's arguments.
_INPUT = "input"


class UnknownVerb(LookupError):
    """A name that is no verb of the registry (`hub.verbs.VERBS`)."""


@dataclass(frozen=True)
class Verb:
    """One operation of the API, defined once by its file, `graphql/operations/<name>.graphql`.

    `fills`: the arguments a client always fills in itself, from its state file, its
    session or its checkout (an attempt's id and generation); never asked of whoever
    calls the verb. `defaults`: the arguments a caller may give, which a client fills in
    from its state when they are left out (the project of the attempt held).
    """

    name: str
    agent: bool = True  # offered to agents (the command line, the MCP tools, the hooks)
    fills: tuple[str, ...] = ()
    defaults: tuple[str, ...] = ()

    @property
    def operation_name(self) -> str:
        """The operation's name in its document: `claimTask` runs `ClaimTask`."""
        return self.name[0].upper() + self.name[1:]

    @property
    def path(self) -> Path:
        return operations_dir() / f"{self.name}.graphql"

    @property
    def document(self) -> str:
        """The file as it is sent: one named operation, with its fragments."""
        return _text(self.name)

    @property
    def kind(self) -> Kind:
        return Kind(_operation(self.name).operation.value)

    @property
    def field(self) -> str:
        """The root field the operation runs, whose answer is `data[field]`: the one
        named like the verb, else its only one."""
        from graphql import FieldNode

        selected = _operation(self.name).selection_set.selections
        fields = [s.name.value for s in selected if isinstance(s, FieldNode)]
        # `attempt` also reads `viewer { serverTime }`, in the same request.
        if self.name in fields:
            return self.name
        (only,) = fields
        return only

    @property
    def input_type(self) -> str | None:
        """A mutation's input object type (`ClaimTaskInput`); None for a query, whose
        arguments are its variables."""
        from graphql import NamedTypeNode, NonNullTypeNode

        definitions = _operation(self.name).variable_definitions or ()
        if len(definitions) != 1 or definitions[0].variable.name.value != _INPUT:
            return None
        declared = definitions[0].type
        if isinstance(declared, NonNullTypeNode) and isinstance(declared.type, NamedTypeNode):
            return declared.type.name.value
        return None

    @property
    def arguments(self) -> tuple[str, ...]:
        """What the verb takes: its input object's fields, or its variables."""
        return tuple(self.input_schema()["properties"])

    @property
    def filled(self) -> tuple[str, ...]:
        """`fills`, and the `ALWAYS_FILLED` arguments this verb has."""
        taken = self.arguments
        return self.fills + tuple(n for n in ALWAYS_FILLED if n in taken and n not in self.fills)

    @property
    def summary(self) -> str:
        """One line on what the verb does: the first sentence of the schema's description
        of its root field, else of the comment that opens its file."""
        from hub.verbs._json_schema import field_description

        described = field_description(api_schema(), self.kind.value, self.field)
        return _first_sentence(described or _leading_comment(self.document))

    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of every argument, from the schema's input types."""
        from hub.verbs._json_schema import arguments_schema

        return arguments_schema(api_schema(), _operation(self.name), self.input_type)

    def tool_schema(self) -> dict[str, Any]:
        """The JSON Schema of what a caller gives: without the arguments a client fills
        in (`filled`), and with those it defaults (`defaults`) optional."""
        whole = self.input_schema()
        filled = set(self.filled)
        optional = filled | set(self.defaults)
        return {
            **whole,
            "properties": {k: v for k, v in whole["properties"].items() if k not in filled},
            "required": [name for name in whole["required"] if name not in optional],
        }

    def variables(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The operation's variables for these arguments: a mutation's go in `input`."""
        return {_INPUT: dict(arguments)} if self.input_type is not None else dict(arguments)


def operations_dir() -> Path:
    return data_dir("graphql/operations")


@functools.cache
def _text(name: str) -> str:
    path = operations_dir() / f"{name}.graphql"
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UnknownVerb(f"{name}: no operation file {path}") from None


@functools.cache
def _operation(name: str) -> OperationDefinitionNode:
    from graphql import OperationDefinitionNode, parse

    (operation,) = [
        d for d in parse(_text(name)).definitions if isinstance(d, OperationDefinitionNode)
    ]
    return operation


@functools.cache
def api_schema() -> GraphQLSchema:
    """The API's schema as exported (`graphql/schema.graphql`)."""
    from graphql import build_schema

    return build_schema((data_dir("graphql") / "schema.graphql").read_text(encoding="utf-8"))


def _leading_comment(document: str) -> str:
    lines = []
    for line in document.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.removeprefix("#").strip())
    return " ".join(lines)


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    found = re.match(r"(.+?[.!?])(\s|$)", flat)
    return found.group(1) if found else flat
