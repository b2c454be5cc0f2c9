"""The outermost layer of the application: a request id, an access log line and a span
for every HTTP request and websocket connection, whichever route serves it (GraphQL,
`/mcp`, uploads, exports, the dashboard, static files).

- the request id is the client's `X-Request-ID` if sane, else a new one; it is sent back
  in the response's `X-Request-ID` header (a websocket's in its handshake) and carried
  by every log line and span of the request;
- one `hub.access` line per request once it is answered (a websocket's when it closes):
  method, route template (never the raw path or its query), status, duration, client
  address, and the principal and session when the request authenticated;
- one server span, `<METHOD> <route>`, joining the caller's trace when it sends a W3C
  `traceparent`.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from opentelemetry import propagate
from opentelemetry.trace import SpanKind, Status, StatusCode
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hub.observability import tracing
from hub.observability.context import RequestContext, request_id_from, request_scope

log = logging.getLogger("hub.access")

_HEADER = b"x-request-id"
# What a websocket's line says when it closed before being accepted, or never answered.
_WEBSOCKET_REFUSED = 403
_WEBSOCKET_ACCEPTED = 101


class ObservedRequests:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        # The application's state, as Starlette's own middleware keep it reachable.
        self.state = getattr(app, "state", None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {
            name.decode("latin-1"): value.decode("latin-1")
            for name, value in scope.get("headers", ())
        }
        request_id = request_id_from(headers.get("x-request-id"))
        echoed = (_HEADER, request_id.encode("ascii"))
        method = scope.get("method", "GET") if kind == "http" else "WEBSOCKET"
        started = time.perf_counter()
        answer: dict[str, Any] = {"status": None, "complete": False}

        async def observed_send(message: Message) -> None:
            sort = message["type"]
            if sort in ("http.response.start", "websocket.http.response.start"):
                answer["status"] = message["status"]
                message = {**message, "headers": [*message.get("headers", ()), echoed]}
            elif sort == "websocket.accept":
                answer["status"] = _WEBSOCKET_ACCEPTED
                message = {**message, "headers": [*message.get("headers", ()), echoed]}
            elif sort == "websocket.close" and answer["status"] is None:
                answer["status"] = _WEBSOCKET_REFUSED
            elif sort == "http.response.body" and not message.get("more_body", False):
                answer["complete"] = True
            await send(message)

        parent = propagate.extract(headers) if tracing.recording() else None
        with request_scope(request_id) as context, tracing.span(
            method, kind=SpanKind.SERVER, parent=parent,
            attributes={"http.request.method": method, "hub.request_id": request_id},
        ) as span:
            failure: BaseException | None = None
            try:
                await self.app(scope, receive, observed_send)
            except BaseException as exc:
                failure = exc
            route = _route_template(scope)
            status = answer["status"] or (500 if kind == "http" else _WEBSOCKET_REFUSED)
            span.update_name(f"{method} {route}")
            span.set_attribute("http.route", route)
            span.set_attribute("http.response.status_code", status)
            _identify_span(span, context)
            if failure is not None:
                tracing.failed(span, failure)
            elif kind == "http" and status >= 500:
                span.set_status(Status(StatusCode.ERROR))
            _log_access(scope, context, method, route, status, started)
            if failure is not None:
                if answer["complete"]:
                    # Answered already (Starlette sends the 500 before re-raising): say
                    # it once, here, with the request's id, rather than through uvicorn.
                    log.error("unhandled error after the answer", exc_info=failure)
                    return
                raise failure


def _identify_span(span: Any, context: RequestContext) -> None:
    if context.principal_id is not None:
        span.set_attribute("hub.principal_id", context.principal_id)
    if context.session_id is not None:
        span.set_attribute("hub.session_id", context.session_id)


def _log_access(
    scope: Scope, context: RequestContext, method: str, route: str, status: int, started: float
) -> None:
    client = scope.get("client")
    log.info(
        "%s %s %s",
        method,
        route,
        status,
        extra={
            "method": method,
            "route": route,
            "status": status,
            "duration_ms": round((time.perf_counter() - started) * 1000, 3),
            "client": client[0] if client else None,
        },
    )


def _route_template(scope: Scope) -> str:
    """The matched route's template (`/artifacts/{artifact_id}`), or `unmatched`: a raw
    path carries ids, and a query may carry anything."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    return str(path) if path else "unmatched"
