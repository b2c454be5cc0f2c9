"""What the observability tests read: the log lines a server in this process writes, as
parsed JSON objects, and the spans it makes, in memory."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from hub.observability import tracing
from hub.observability.logs import JsonLines


class LogLines:
    """Every line logged while the fixture lives, formatted as `hub serve` writes them."""

    def __init__(self) -> None:
        self.stream = io.StringIO()
        self.handler = logging.StreamHandler(self.stream)
        self.handler.setFormatter(JsonLines())

    def text(self) -> str:
        self.handler.flush()
        return self.stream.getvalue()

    def all(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.text().splitlines() if line.strip()]

    def of_request(self, request_id: str) -> list[dict[str, Any]]:
        return [line for line in self.all() if line.get("request_id") == request_id]

    def by(self, logger: str, **fields: Any) -> list[dict[str, Any]]:
        return [
            line for line in self.all()
            if line["logger"] == logger and all(line.get(k) == v for k, v in fields.items())
        ]


@pytest.fixture
def log_lines() -> Iterator[LogLines]:
    root = logging.getLogger()
    lines = LogLines()
    level = root.level
    root.addHandler(lines.handler)
    root.setLevel(logging.INFO)
    try:
        yield lines
    finally:
        root.removeHandler(lines.handler)
        root.setLevel(level)


class Spans:
    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    def finished(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [span for span in self.finished() if span.name == name]

    def parent_of(self, span: ReadableSpan) -> ReadableSpan:
        assert span.parent is not None, f"{span.name} has no parent"
        parents = [s for s in self.finished() if s.context.span_id == span.parent.span_id]
        assert len(parents) == 1, f"the parent of {span.name} was not recorded"
        return parents[0]


@pytest.fixture
def spans() -> Iterator[Spans]:
    recorded = Spans()
    tracing.use_provider(recorded.provider)
    try:
        yield recorded
    finally:
        tracing.use_provider(None)
        recorded.provider.shutdown()
