"""Schema extensions: metrics per operation, refusing unstorable strings, error masking."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

from graphql import GraphQLError, StringValueNode, Visitor, visit
from strawberry.extensions import SchemaExtension

from hub.metrics import GRAPHQL_LATENCY, GRAPHQL_OPERATIONS

log = logging.getLogger("hub.api")


class OperationMetrics(SchemaExtension):
    def on_operation(self) -> Iterator[None]:
        started = time.perf_counter()
        yield
        context = self.execution_context
        name = context.operation_name or "anonymous"
        try:
            kind = context.operation_type.value
        except Exception:  # the document did not parse: there is no operation type
            kind = "invalid"
        result = context.result
        outcome = "error" if result is not None and getattr(result, "errors", None) else "ok"
        GRAPHQL_OPERATIONS.labels(name, kind, outcome).inc()
        GRAPHQL_LATENCY.labels(name, kind).observe(time.perf_counter() - started)


NUL_REFUSED = "strings must not contain NUL (U+0000) characters"
SURROGATE_REFUSED = "strings must be valid Unicode (a lone surrogate such as \\ud800 is not)"


class RefuseUnstorableStrings(SchemaExtension):
    """Refuse, before any resolver runs, strings no database can store.

    PostgreSQL text cannot hold U+0000 (its driver raises on any query parameter that
    does, lookups included) while SQLite stores it; and a lone surrogate, which JSON
    variables can carry (`"\\ud800"`) but GraphQL literals cannot, has no UTF-8 encoding at
    all. Without this, such a string is a masked server error on one backend or both. It
    is checked once here, for every module, rather than at each lookup by id.
    """

    def on_execute(self) -> Iterator[None]:
        # Strawberry turns an error raised before `yield` into the operation's result, on
        # every transport; nothing is executed.
        context = self.execution_context
        for name, value in (context.variables or {}).items():
            reason = _unstorable(value)
            if reason is not None:
                raise GraphQLError(f"variable ${name}: {reason}")
        if context.graphql_document is not None:
            found = _NulLiterals()
            visit(context.graphql_document, found)
            if found.nodes:
                raise GraphQLError(NUL_REFUSED, nodes=found.nodes)
        yield


class _NulLiterals(Visitor):
    def __init__(self) -> None:
        super().__init__()
        self.nodes: list[StringValueNode] = []

    def enter_string_value(self, node: StringValueNode, *_: object) -> None:
        if "\x00" in node.value:
            self.nodes.append(node)


def _unstorable(value: object) -> str | None:
    # Iterative: variables may nest as deep as the JSON parser allowed.
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return NUL_REFUSED
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return SURROGATE_REFUSED
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return None


def should_mask_error(error: GraphQLError) -> bool:
    """Mask anything that is not a deliberate GraphQL error: no stack trace or SQL leaks."""
    original = error.original_error
    if original is None or isinstance(original, GraphQLError):
        return False
    log.error("unexpected error in %s", error.path, exc_info=original)
    return True
