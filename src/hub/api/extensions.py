"""What hub adds to every GraphQL operation, as one Strawberry schema extension.

`HubOperation` does four things, each in the hook where Strawberry expects it:

- **prepared documents** (`on_parse`, `on_validate`): parsing under the token limit,
  validation (the specified rules, the depth and alias limits) and the search for NUL
  literals depend only on the document's text, so they run once per distinct text and
  are kept in a bounded LRU (`PreparedDocuments`); a request only looks its text up;
- **unstorable strings** (`on_execute`): a NUL or lone surrogate in a variable, or a
  NUL in a literal, is refused before any resolver runs;
- **error masking** (`on_operation`, `on_stream_result`): anything that is not a
  deliberate GraphQL error becomes "Unexpected error." (`should_mask_error`);
- **metrics, log line and span** (`on_operation`): a count and a duration per
  operation; one `hub.operation` log line (label, type, outcome: `ok`,
  `problem:<CODE>` or `error`, duration) and one span, `<type> <label>`, the parent of
  the operation's transactions' spans (docs/ops/logs-and-traces.md).

Why one extension rather than one per concern (it replaces Strawberry's `ParserCache`,
`ValidationCache`, `MaxTokensLimiter`, `AddValidationRules` and `MaskErrors` and two of
ours): Strawberry makes every extension, and a context manager for each of its hooks, on
every request, a cost that grows with the number of extensions, not with their work. And
per request, `ValidationCache` hashed the whole syntax tree to find its entry
(a string hashes once) and the NUL-literal search walked the tree again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from graphql import (
    ASTValidationRule,
    DocumentNode,
    FieldNode,
    GraphQLError,
    GraphQLSchema,
    OperationDefinitionNode,
    StringValueNode,
    Visitor,
    parse,
    specified_rules,
    visit,
)
from opentelemetry.trace import Span, Status, StatusCode
from strawberry.extensions import SchemaExtension
from strawberry.schema.schema import validate_document
from strawberry.types.execution import StreamExecutionResult

from hub.errors import ProblemCode, Unavailable
from hub.metrics import GRAPHQL_LATENCY, GRAPHQL_OPERATIONS
from hub.observability import tracing
from hub.observability.context import RequestContext, current, operation_scope

log = logging.getLogger("hub.api")
operations_log = logging.getLogger("hub.operation")

NUL_REFUSED = "strings must not contain NUL (U+0000) characters"
SURROGATE_REFUSED = "strings must be valid Unicode (a lone surrogate such as \\ud800 is not)"
MASKED = "Unexpected error."


@dataclass(frozen=True)
class PreparedDocument:
    """What is known about a document before any request variables: shared by every
    request with the same text, so nothing here may be changed."""

    document: DocumentNode
    validation_errors: tuple[GraphQLError, ...]
    nul_literals: tuple[StringValueNode, ...]
    # Metric label of each operation, by operation name: its root field (a schema name,
    # so clients cannot mint new metric series by naming operations).
    labels: dict[str | None, str]

    def label(self, operation_name: object) -> str:
        if self.validation_errors or not isinstance(operation_name, str | None):
            return "invalid"  # (a malformed request body is refused as such elsewhere)
        if operation_name is None and len(self.labels) == 1:
            return next(iter(self.labels.values()))
        return self.labels.get(operation_name, "unknown")


class PreparedDocuments:
    """Parsed, validated and scanned documents, by schema and text (bounded LRU).

    A document that does not parse (syntax, token limit) raises its `GraphQLError` and
    is not kept.
    """

    def __init__(
        self, limit_rules: Sequence[type[ASTValidationRule]], max_tokens: int, size: int
    ) -> None:
        self.validation_rules = (*specified_rules, *limit_rules)
        self.max_tokens = max_tokens
        self.get = lru_cache(maxsize=size)(self._prepare)

    def _prepare(self, schema: GraphQLSchema, query: str) -> PreparedDocument:
        document = parse(query, max_tokens=self.max_tokens)
        return PreparedDocument(
            document=document,
            validation_errors=tuple(self.validate(schema, document)),
            nul_literals=nul_literals(document),
            labels={
                (node.name.value if node.name else None): _root_label(node)
                for node in document.definitions
                if isinstance(node, OperationDefinitionNode)
            },
        )

    def validate(self, schema: GraphQLSchema, document: DocumentNode) -> list[GraphQLError]:
        # Strawberry's own validation: adds its rules for `Maybe` and `@oneOf` inputs.
        return validate_document(schema, document, self.validation_rules)


class HubOperation(SchemaExtension):
    """Made per request (extension instances hold the request's execution context)."""

    def __init__(self, documents: PreparedDocuments) -> None:
        self.documents = documents
        self.prepared: PreparedDocument | None = None

    def on_operation(self) -> Iterator[None]:
        started = time.perf_counter()
        # Its name is known once the document is parsed (`_record` renames it).
        with operation_scope() as observed, tracing.span("graphql") as span:
            try:
                yield
            except Exception as refusal:
                # Refused in a hook (a parse error, an unstorable string, a subscription
                # over plain HTTP): Strawberry makes the error the result after this
                # returns. (A subscription the client ends or a cancelled request is not
                # counted.)
                refused = [refusal] if isinstance(refusal, GraphQLError) else []
                self._record(started, observed, span, refused, failed=True)
                raise
            except BaseException:
                # Cancelled (a subscription its client ended, a request given up): not
                # counted, but the log says how the operation ended.
                self._log(started, observed, span, "cancelled", None)
                raise
            result = self.execution_context.result
            _mask_errors(result)
            errors = getattr(result, "errors", None) or []
            self._record(started, observed, span, errors, failed=bool(errors))

    def on_stream_result(self, result: StreamExecutionResult) -> Iterator[None]:
        # Subscriptions: each event's result reaches the client before the operation ends.
        _mask_errors(result)
        yield

    def on_parse(self) -> Iterator[None]:
        context = self.execution_context
        if context.query:
            self.prepared = self.documents.get(context.schema._schema, context.query)
            context.graphql_document = self.prepared.document
            observed = current()
            if observed is not None:  # the operation's lines from here on name it
                observed.operation = self.prepared.label(context.operation_name)
        yield

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        if self.prepared is not None:
            context.pre_execution_errors = list(self.prepared.validation_errors)
        elif context.graphql_document is not None:  # a document given already parsed
            context.pre_execution_errors = self.documents.validate(
                context.schema._schema, context.graphql_document
            )
        yield

    def on_execute(self) -> Iterator[None]:
        # Strawberry turns an error raised before `yield` into the operation's result, on
        # every transport; nothing is executed.
        refuse_unstorable_strings(self.execution_context.variables, self._nul_literals())
        yield

    def _nul_literals(self) -> tuple[StringValueNode, ...]:
        if self.prepared is not None:
            return self.prepared.nul_literals
        document = self.execution_context.graphql_document
        return nul_literals(document) if document is not None else ()

    def _record(
        self,
        started: float,
        observed: RequestContext,
        span: Span,
        errors: Sequence[GraphQLError],
        *,
        failed: bool,
    ) -> None:
        name, kind = self._label()
        GRAPHQL_OPERATIONS.labels(name, kind, "error" if failed else "ok").inc()
        GRAPHQL_LATENCY.labels(name, kind).observe(time.perf_counter() - started)
        outcome = "error" if failed else (observed.problem or "ok")
        code = _error_code(errors[0]) if errors else None
        self._log(started, observed, span, outcome, code)

    def _label(self) -> tuple[str, str]:
        """The operation's label (its root field: a schema name, so clients cannot mint
        new metric series by naming operations) and its type."""
        context = self.execution_context
        name = self.prepared.label(context.operation_name) if self.prepared else "invalid"
        try:
            kind = context.operation_type.value
        except Exception:  # the document did not parse: there is no operation type
            kind = "invalid"
        return name, kind

    def _log(
        self,
        started: float,
        observed: RequestContext,
        span: Span,
        outcome: str,
        code: str | None,
    ) -> None:
        """The operation's line and the naming of its span."""
        name, kind = self._label()
        observed.operation = name
        span.update_name(f"{kind} {name}")
        span.set_attribute("graphql.operation.type", kind)
        span.set_attribute("graphql.operation.name", name)
        span.set_attribute("hub.outcome", outcome)
        if outcome == "error":
            span.set_status(Status(StatusCode.ERROR, code or "error"))
        operations_log.info(
            "%s %s %s",
            kind,
            name,
            outcome,
            extra={
                "operation_type": kind,
                "outcome": outcome,
                "duration_ms": round((time.perf_counter() - started) * 1000, 3),
                **({"error_code": code} if code else {}),
            },
        )


def _error_code(error: GraphQLError) -> str:
    """An error's code (UNAUTHENTICATED, NOT_FOUND…): `INTERNAL` for a masked one,
    `GRAPHQL_ERROR` for one without (a syntax or validation error)."""
    if error.message == MASKED and error.original_error is None:
        return "INTERNAL"
    code = (error.extensions or {}).get("code")
    return str(code) if code else "GRAPHQL_ERROR"


def _root_label(operation: OperationDefinitionNode) -> str:
    fields = {
        node.name.value
        for node in operation.selection_set.selections
        if isinstance(node, FieldNode) and node.name.value != "__typename"
    }
    return fields.pop() if len(fields) == 1 else ("multiple" if fields else "none")


# --- unstorable strings ----------------------------------------------------------------


def refuse_unstorable_strings(
    variables: dict[str, object] | None, literals: Sequence[StringValueNode]
) -> None:
    """Refuse strings no database can store.

    PostgreSQL text cannot hold U+0000 (its driver raises on any query parameter that
    does, lookups included) while SQLite stores it; and a lone surrogate, which JSON
    variables can carry (`"\\ud800"`) but GraphQL literals cannot, has no UTF-8 encoding
    at all. Without this, such a string is a masked server error on one backend or both.
    It is checked once here, for every module, rather than at each lookup by id.
    """
    for name, value in (variables or {}).items():
        reason = _unstorable(value)
        if reason is not None:
            raise GraphQLError(f"variable ${name}: {reason}")
    if literals:
        raise GraphQLError(NUL_REFUSED, nodes=list(literals))


def nul_literals(document: DocumentNode) -> tuple[StringValueNode, ...]:
    found = _NulLiterals()
    visit(document, found)
    return tuple(found.nodes)


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


# --- error masking ---------------------------------------------------------------------


def _mask_errors(result: object) -> None:
    errors: list[GraphQLError] | None = getattr(result, "errors", None)
    if errors:
        result.errors = [_answerable(e) for e in errors]  # type: ignore[attr-defined]


def _answerable(error: GraphQLError) -> GraphQLError:
    if isinstance(error.original_error, Unavailable):
        return unavailable_error(error.original_error, error)
    return _masked(error) if should_mask_error(error) else error


def unavailable_error(cause: Unavailable, error: GraphQLError | None = None) -> GraphQLError:
    """A database that cannot serve now: a typed, retryable error (docs/ops/faults.md),
    never the masked one; over HTTP the answer is also a 503 (`hub.api.http`)."""
    return GraphQLError(
        cause.message,
        nodes=error.nodes if error else None,
        source=error.source if error else None,
        positions=error.positions if error else None,
        path=error.path if error else None,
        extensions={
            "code": ProblemCode.UNAVAILABLE,
            "retryable": True,
            "retryAfterSeconds": cause.retry_after_seconds,
        },
    )


def is_unavailable(error: GraphQLError) -> bool:
    return (error.extensions or {}).get("code") == ProblemCode.UNAVAILABLE


def _masked(error: GraphQLError) -> GraphQLError:
    # Where it happened stays (path, locations); what happened does not.
    return GraphQLError(
        MASKED,
        nodes=error.nodes,
        source=error.source,
        positions=error.positions,
        path=error.path,
        original_error=None,
    )


def should_mask_error(error: GraphQLError) -> bool:
    """Mask anything that is not a deliberate GraphQL error: no stack trace or SQL leaks."""
    original = error.original_error
    if original is None or isinstance(original, GraphQLError):
        return False
    log.error("unexpected error in %s", error.path, exc_info=original)
    return True
