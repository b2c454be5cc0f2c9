"""Spans: the HTTP request's, its GraphQL operation's as a child, and its transactions'
as the operation's children, on whatever thread they ran (a SQLite group commit's
writer, a PostgreSQL pool thread); no tracer at all without an OTLP endpoint."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

from hub.observability import tracing
from hub.observability.context import current, request_scope
from hub.runtime import Runtime
from hub.settings import Settings
from hub.storage.unit_of_work import UnitOfWork
from tests.conftest import AgentSession, Principal, runtime_settings
from tests.observability.conftest import Spans
from tests.support import work

CLAIM = (
    "mutation($input: ClaimTaskInput!) { claimTask(input: $input) { __typename"
    " ... on Problem { code } } }"
)


def claim(server: str, agent: AgentSession, project: str, request_id: str) -> httpx.Response:
    return httpx.post(
        f"{server}/graphql",
        json={"query": CLAIM,
              "variables": {"input": {"projectId": project, "idempotencyKey": work.key()}}},
        headers={"Authorization": f"Bearer {agent.token}", "X-Request-ID": request_id},
        timeout=30,
    )


def test_request_operation_and_transaction_spans_nest(
    server: str,
    operator: Principal,
    agent: Callable[..., AgentSession],
    spans: Spans,
    backend: str,
) -> None:
    worker = agent()
    project = work.create_project(operator.api)
    work.new_task(operator.api, project)
    response = claim(server, worker, project, "traced-claim")
    assert response.json()["data"]["claimTask"]["__typename"] == "ClaimPayload"

    [request] = [
        span for span in spans.named("POST /graphql")
        if span.attributes and span.attributes["hub.request_id"] == "traced-claim"
    ]
    assert request.attributes is not None
    assert request.attributes["http.route"] == "/graphql"
    assert request.attributes["http.response.status_code"] == 200
    assert request.attributes["hub.principal_id"] == worker.principal.id
    assert request.attributes["hub.session_id"] == worker.session_id
    [operation] = [s for s in spans.named("mutation claimTask") if spans.parent_of(s) == request]
    assert operation.attributes is not None
    assert operation.attributes["hub.outcome"] == "ok"
    transactions = [s for s in spans.named("transaction write") if s.parent
                    and s.parent.span_id == operation.context.span_id]
    assert len(transactions) == 1
    [transaction] = transactions
    assert transaction.attributes is not None
    assert transaction.attributes["hub.transaction.outcome"] == "commit"
    assert transaction.attributes["db.system.name"] == backend
    assert transaction.attributes["hub.transaction.group_commit"] == (backend == "sqlite")
    assert request.context.trace_id == operation.context.trace_id == transaction.context.trace_id


def test_writes_committed_together_keep_their_own_requests_spans(
    server: str,
    operator: Principal,
    agent: Callable[..., AgentSession],
    spans: Spans,
) -> None:
    """Concurrent claims: on SQLite the writer thread commits them in groups, each
    operation still under its own request's operation span."""
    count = 8
    workers = [agent() for _ in range(count)]
    project = work.create_project(operator.api)
    for _ in range(count):
        work.new_task(operator.api, project)
    with ThreadPoolExecutor(count) as pool:
        answers = list(pool.map(
            lambda n: claim(server, workers[n], project, f"claim-{n}"), range(count)
        ))
    assert all(a.json()["data"]["claimTask"]["__typename"] == "ClaimPayload" for a in answers)

    claims = [
        transaction for transaction in spans.named("transaction write")
        if transaction.parent is not None  # (not the test's own, making principals)
        and spans.parent_of(transaction).name == "mutation claimTask"
    ]
    assert len(claims) == count
    for transaction in claims:
        request = spans.parent_of(spans.parent_of(transaction))
        assert request.attributes is not None
        principal = request.attributes["hub.principal_id"]
        request_id = str(request.attributes["hub.request_id"])
        assert principal == workers[int(request_id.removeprefix("claim-"))].principal.id


def test_a_typed_problem_does_not_mark_the_transaction_failed(
    server: str, operator: Principal, spans: Spans
) -> None:
    payload = work.claim(operator.api, "prj_00000000000000000000000000")
    assert payload["__typename"] != "ClaimPayload"
    [operation] = spans.named("mutation claimTask")
    assert operation.attributes is not None
    assert operation.attributes["hub.outcome"] == f"problem:{payload['code']}"
    [transaction] = [s for s in spans.named("transaction write") if spans.parent_of(s) == operation]
    assert transaction.attributes is not None
    assert transaction.attributes["hub.transaction.outcome"] == "refused"
    assert transaction.status.is_ok


def test_without_an_endpoint_there_is_no_tracer(tmp_path: Path) -> None:
    settings = runtime_settings(f"sqlite:///{tmp_path / 'hub.db'}", tmp_path)
    assert settings.otel_exporter_otlp_endpoint is None
    assert tracing.configure_tracing(settings) is None
    assert not tracing.recording()
    with tracing.span("nothing") as span:
        assert not span.is_recording()


def test_an_endpoint_exports_over_otlp_http(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")
    settings = Settings(var_dir=tmp_path, _env_file=None)  # type: ignore[call-arg]
    assert settings.otel_exporter_otlp_endpoint == "http://collector:4318"
    provider = tracing.provider_for(settings)
    assert provider is not None
    try:
        [processor] = provider._active_span_processor._span_processors
        exporter = processor.span_exporter  # type: ignore[attr-defined]
        assert isinstance(exporter, OTLPSpanExporter)
        assert exporter._endpoint == "http://collector:4318/v1/traces"
        assert provider.resource.attributes["service.name"] == "hub"
    finally:
        provider.shutdown()
    monkeypatch.setenv("HUB_OTEL_EXPORTER_OTLP_ENDPOINT", "")
    assert Settings(_env_file=None).otel_exporter_otlp_endpoint is None  # type: ignore[call-arg]


def test_each_write_committed_in_one_group_runs_in_its_callers_context(
    runtime: Runtime, spans: Spans, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Five writes queued behind a blocked one: on SQLite the writer thread commits them
    as one group, and each still logs under its own request and traces under its own
    span (on PostgreSQL they run on pool threads, the same holds)."""
    started, release = threading.Event(), threading.Event()
    seen: dict[int, str | None] = {}
    groups: list[int] = []
    if runtime._group_writer is not None:
        commit_group = runtime._group_writer._commit_group

        def counted(group: list[Any]) -> None:
            groups.append(len(group))
            commit_group(group)

        monkeypatch.setattr(runtime._group_writer, "_commit_group", counted)

    def blocker(_uow: UnitOfWork) -> None:
        started.set()
        release.wait(30)

    def write(n: int) -> Callable[[UnitOfWork], None]:
        def operation(_uow: UnitOfWork) -> None:
            context = current()
            seen[n] = context.request_id if context else None

        return operation

    async def one(n: int) -> None:
        with request_scope(f"request-{n}"), tracing.span(f"operation {n}"):
            await runtime.awrite(write(n))

    async def main() -> None:
        first = asyncio.ensure_future(runtime.awrite(blocker))
        await asyncio.to_thread(started.wait, 30)
        queued = [asyncio.ensure_future(one(n)) for n in range(5)]
        await asyncio.sleep(0)  # each task runs up to its submission, then waits
        release.set()
        await asyncio.gather(first, *queued)

    asyncio.run(main())
    assert seen == {n: f"request-{n}" for n in range(5)}
    for n in range(5):
        [operation] = spans.named(f"operation {n}")
        [transaction] = [
            s for s in spans.named("transaction write")
            if s.parent is not None and s.parent.span_id == operation.context.span_id
        ]
        assert transaction.context.trace_id == operation.context.trace_id
    if backend == "sqlite":
        assert groups == [1, 5]
