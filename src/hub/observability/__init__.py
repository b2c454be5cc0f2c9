"""Logs and traces: what an operator reads to follow a request, an operation or one
agent's session (docs/ops/logs-and-traces.md).

- `context`: the request's id, operation, principal and session, in a context
  variable the log lines and spans read;
- `logs`: JSON lines (or plain text in development) through the stdlib `logging`;
- `tracing`: OpenTelemetry spans, exported over OTLP only when an endpoint is set;
- `access`: the ASGI layer that gives every request its id, access line and span.

A server process calls `logs.configure_logging` and `tracing.configure_tracing` once,
before serving. Importing this package costs nothing else: the modules that need the
OpenTelemetry SDK import it when tracing is configured.
"""
