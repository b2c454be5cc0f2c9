"""Schema extensions: metrics per operation, and error masking."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

from graphql import GraphQLError
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


def should_mask_error(error: GraphQLError) -> bool:
    """Mask anything that is not a deliberate GraphQL error: no stack trace or SQL leaks."""
    original = error.original_error
    if original is None or isinstance(original, GraphQLError):
        return False
    log.error("unexpected error in %s", error.path, exc_info=original)
    return True
