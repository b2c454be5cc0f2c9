"""OpenTelemetry spans: one per HTTP request, per GraphQL operation and per transaction.

Tracing is on only when an OTLP endpoint is configured (`otel_exporter_otlp_endpoint`,
or the standard OTEL_EXPORTER_OTLP_ENDPOINT): then `configure_tracing` installs an SDK
tracer provider that batches spans to `<endpoint>/v1/traces` over HTTP. Otherwise no
provider, no exporter, and `span` hands out one shared non-recording span without
calling OpenTelemetry at all (a no-op span still costs microseconds each, and a request
makes several).

A span records an exception's type, never its message: a database error's message can
quote the statement's parameters.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import INVALID_SPAN, Span, SpanKind, Status, StatusCode, Tracer
from opentelemetry.util.types import AttributeValue

from hub import __version__
from hub.settings import Settings

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

_tracer: Tracer | None = None


def recording() -> bool:
    """Whether hub's spans go anywhere."""
    return _tracer is not None


def use_provider(provider: TracerProvider | None) -> None:
    """Make hub's spans with `provider` (None: make none). Tests pass one with an
    in-memory exporter."""
    global _tracer
    _tracer = provider.get_tracer("hub", __version__) if provider is not None else None


def provider_for(settings: Settings) -> TracerProvider | None:
    """The tracer provider the settings ask for: None without an endpoint."""
    endpoint = settings.otel_exporter_otlp_endpoint
    if endpoint is None:
        return None
    # Imported only when used: the SDK and the exporter (protobuf, an HTTP client) are
    # not loaded by a server that does not trace.
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(
        resource=Resource.create(
            {"service.name": settings.otel_service_name, "service.version": __version__}
        )
    )
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=traces_url(endpoint))))
    return provider


def traces_url(endpoint: str) -> str:
    """The standard variable names the collector's base URL; the exporter wants the
    traces path itself."""
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith("/v1/traces") else f"{endpoint}/v1/traces"


def configure_tracing(settings: Settings) -> TracerProvider | None:
    """Install the configured provider (also as OpenTelemetry's global one, so the spans
    of libraries hub uses, the MCP SDK's, join the same traces), or none."""
    provider = provider_for(settings)
    if provider is not None:
        trace.set_tracer_provider(provider)
    use_provider(provider)
    return provider


@contextmanager
def span(
    name: str,
    *,
    kind: SpanKind = SpanKind.INTERNAL,
    attributes: Mapping[str, AttributeValue] | None = None,
    parent: Context | None = None,
    expected: tuple[type[BaseException], ...] = (),
) -> Iterator[Span]:
    """A span, current for the block (spans started inside it are its children). The
    block sets its outcome; an exception escaping it marks it failed, by type only,
    unless it is one of the `expected` (a typed refusal is an answer, not a failure)."""
    if _tracer is None:
        yield INVALID_SPAN
        return
    with _tracer.start_as_current_span(
        name,
        context=parent,
        kind=kind,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as current:
        try:
            yield current
        except expected:
            raise
        except BaseException as exc:
            failed(current, exc)
            raise


def failed(current: Span, exc: BaseException) -> None:
    current.set_status(Status(StatusCode.ERROR, type(exc).__name__))
    current.set_attribute("error.type", type(exc).__qualname__)
