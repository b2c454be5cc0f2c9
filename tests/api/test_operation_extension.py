"""What `HubOperation` adds to every operation, in process (no server, no database).

A document's parse, validation and NUL-literal search happen once per distinct text and
are shared by every request that sends it; what depends on the request (its variables,
its outcome) is still judged per request.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from graphql import GraphQLError
from prometheus_client import REGISTRY
from strawberry.types import ExecutionResult

from hub.api import extensions
from hub.api.extensions import NUL_REFUSED, HubOperation, PreparedDocuments
from hub.api.schema import build_schema
from hub.settings import Settings


def execute(query: str, variables: dict[str, Any] | None = None) -> ExecutionResult:
    schema = build_schema(Settings())
    return asyncio.run(schema.execute(query, variable_values=variables))


def unique(operation: str) -> str:
    """An operation name no other test sends, so its document is not cached yet."""
    return f"{operation}{uuid.uuid4().hex}"


def operations_total(name: str, kind: str, outcome: str) -> float:
    labels = {"operation": name, "type": kind, "outcome": outcome}
    return REGISTRY.get_sample_value("hub_graphql_operations_total", labels) or 0.0


def test_a_document_is_parsed_and_validated_once_however_many_requests_send_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []

    def counted(name: str) -> None:
        original = getattr(extensions, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return original(*args, **kwargs)

        monkeypatch.setattr(extensions, name, wrapper)

    counted("parse")
    counted("validate_document")
    query = f"query {unique('Once')} {{ __typename }}"
    for _ in range(3):
        assert execute(query).data == {"__typename": "Query"}
    assert calls == ["parse", "validate_document"]


def test_an_invalid_document_is_refused_every_time_it_is_sent() -> None:
    query = f"query {unique('Unknown')} {{ nope }}"
    for _ in range(2):
        result = execute(query)
        assert result.data is None
        assert [error.message for error in result.errors or []] == [
            "Cannot query field 'nope' on type 'Query'."
        ]


def test_a_nul_literal_is_refused_every_time_the_document_is_sent() -> None:
    query = f'query {unique("Nul")} {{ project(id: "prj_\\u0000") {{ id }} }}'
    for _ in range(2):
        result = execute(query)
        assert result.data is None
        assert [error.message for error in result.errors or []] == [NUL_REFUSED]


def test_variables_are_judged_per_request_with_a_cached_document() -> None:
    query = f"query {unique('Variables')}($name: String!) {{ __type(name: $name) {{ name }} }}"
    refused = execute(query, {"name": "Query\x00"})
    assert refused.data is None
    assert [error.message for error in refused.errors or []] == [f"variable $name: {NUL_REFUSED}"]
    accepted = execute(query, {"name": "Query"})
    assert accepted.errors is None
    assert accepted.data == {"__type": {"name": "Query"}}


def test_an_operation_refused_before_execution_is_counted_as_an_error() -> None:
    name = unique("Refused")
    before = operations_total("__type", "query", "error")
    execute(f"query {name}($name: String!) {{ __type(name: $name) {{ name }} }}", {"name": "\x00"})
    assert operations_total("__type", "query", "error") == before + 1


def test_metrics_are_labelled_by_root_field_not_by_the_name_a_client_chose() -> None:
    """Operation names are the client's to choose: as labels they would let any client
    create metric series without bound."""
    before = operations_total("__type", "query", "ok")
    for _ in range(3):
        execute(f"query {unique('Named')} {{ __type(name: \"Query\") {{ name }} }}", {})
    assert operations_total("__type", "query", "ok") == before + 3
    assert not any(
        sample.labels.get("operation", "").startswith("Named")
        for metric in REGISTRY.collect()
        for sample in metric.samples
    )


def test_an_unexpected_error_in_a_streamed_result_is_masked() -> None:
    # Subscriptions: each event's result reaches the client before the operation ends.
    leak = GraphQLError("boom", original_error=RuntimeError("SELECT secret FROM tokens"))
    deliberate = GraphQLError("not found")
    result = ExecutionResult(data=None, errors=[leak, deliberate])
    hooks = HubOperation(PreparedDocuments(limit_rules=[], max_tokens=1000, size=1))
    for _ in hooks.on_stream_result(result):
        pass
    assert [error.message for error in result.errors or []] == [
        "Unexpected error.",
        "not found",
    ]
