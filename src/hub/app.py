"""The ASGI application: GraphQL, the agent's verbs as MCP tools, artifact uploads and
downloads, project exports, the dashboard, health, readiness and metrics."""

from __future__ import annotations

import contextlib
import gc
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from anyio import to_thread
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import Receive, Scope, Send

from hub.api.artifacts.upload import upload_route
from hub.api.exports import export_route
from hub.api.http import HubGraphQL
from hub.api.imports.route import import_route
from hub.api.mcp_http.route import McpEndpoint, mcp_route
from hub.api.rate_limits import RateLimits
from hub.draining import CloseSocketsOnStop, drain_on_signals
from hub.errors import Unavailable, http_problem
from hub.maintenance import periodic_maintenance
from hub.metrics import HTTP_LATENCY, HTTP_REQUESTS
from hub.observability.access import ObservedRequests
from hub.runtime import Runtime
from hub.scrape import scrape
from hub.storage import migrations
from hub.web.routes import web_mounts, web_routes

log = logging.getLogger("hub")

_UNAVAILABLE_PAGE = (
    "<!doctype html><title>hub: database unavailable</title>"
    "<p>hub cannot use its database right now. Nothing you sent was lost; "
    "reload this page in a few seconds.</p>"
)


def _freeze_startup_objects() -> None:
    """Keep the cyclic garbage collector off what startup built (the schema, the
    mappers, the templates: hundreds of thousands of objects that live as long as the
    process), and let it run less often. Each full collection walked all of them, in
    the middle of some request: with this the server's CPU per claim cycle fell by
    about a fifth and its p99 by a third (docs/benchmarks.md, section 13)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 50)


def create_app(runtime: Runtime, *, server_process: bool = False) -> Starlette:
    graphql = HubGraphQL(runtime)
    # The MCP tools run the verbs through the schema /graphql serves (one instance).
    mcp = McpEndpoint(runtime, graphql.schema)

    async def healthz(_request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(_request: Request) -> Response:
        if runtime.drain.draining:
            # SIGTERM has arrived: a balancer should send elsewhere (hub.draining).
            return JSONResponse({"status": "draining"}, status_code=503,
                                headers={"Retry-After": "1"})
        try:
            state = await runtime_check(runtime)
        except Exception as exc:  # the database is unreachable: not ready, and say why
            log.warning("readiness check failed: %s", type(exc).__name__)
            return JSONResponse(
                {"status": "unavailable", "database": "unreachable"}, status_code=503
            )
        # A schema ahead of this code is a rolling deploy's: the new version upgraded it.
        ready = (
            state["migrations"] != migrations.SchemaState.BEHIND
            and state["database"] == "reachable"
        )
        status = 200 if ready else 503
        return JSONResponse({"status": "ok" if status == 200 else "unavailable", **state},
                            status_code=status)

    async def metrics(_request: Request) -> Response:
        # The process's counters, then the state read now (`hub.scrape`); a failing
        # database leaves the state out rather than failing the scrape.
        return Response(await scrape(runtime), media_type=CONTENT_TYPE_LATEST)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if server_process:
                # Last out: the runtime closes once nothing serves or runs any more (the
                # group writer drained, the transactions in flight finished).
                stack.push_async_callback(to_thread.run_sync, runtime.close)
                stack.enter_context(
                    drain_on_signals(runtime.drain,
                                     delay_seconds=runtime.settings.shutdown_delay_seconds)
                )
            await stack.enter_async_context(periodic_maintenance(runtime))
            await stack.enter_async_context(mcp.run())
            for background in runtime.background_tasks():
                await stack.enter_async_context(background)
            if server_process:
                # Only where the process is the server's own: frozen objects are never
                # freed, which a process that builds many apps (the tests') would leak.
                _freeze_startup_objects()
            yield

    async def database_unavailable(request: Request, exc: Exception) -> Response:
        # Any route whose database cannot serve now (the GraphQL endpoint answers its
        # own, typed): a 503 with Retry-After, never the masked 500.
        assert isinstance(exc, Unavailable)
        headers = {"Retry-After": str(exc.retry_after_seconds)}
        if "text/html" in request.headers.get("accept", ""):
            return HTMLResponse(_UNAVAILABLE_PAGE, status_code=503, headers=headers)
        status, body = http_problem(exc)
        return JSONResponse(body, status_code=status, headers=headers)

    app = Starlette(
        exception_handlers={Unavailable: database_unavailable},
        routes=[
            Route("/healthz", healthz),
            Route("/readyz", readyz),
            Route("/metrics", metrics),
            Route("/graphql", graphql, methods=["GET", "POST"]),
            WebSocketRoute("/graphql", graphql),
            mcp_route(mcp),
            upload_route(runtime),
            export_route(runtime),
            import_route(runtime),
            *web_routes(runtime),
            *web_mounts(runtime),
        ],
        lifespan=lifespan,
        # The rate limit inside the metrics, so a request answered 429 is counted (as
        # "unmatched": it never reaches the router).
        middleware=[
            Middleware(CloseSocketsOnStop, drain=runtime.drain),
            Middleware(RateLimits, runtime=runtime),
        ],
    )
    app.state.runtime = runtime
    # Outermost: the request id, access line and span cover every route and websocket.
    return ObservedRequests(RequestMetrics(app))  # type: ignore[return-value]


async def runtime_check(runtime: Runtime) -> dict[str, str]:
    def check() -> dict[str, str]:
        runtime.database.ping()
        state = migrations.schema_state(runtime.database)
        return {
            "database": "reachable" if runtime.database.writable() else "read-only",
            "migrations": state.value,
        }

    return await to_thread.run_sync(check)


class RequestMetrics:
    """Counts and times HTTP requests by route template (never by raw path)."""

    def __init__(self, app: Starlette) -> None:
        self.app = app
        self.state = app.state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = {"code": 500}

        async def record_status(message: Any) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, record_status)
        finally:
            route = _route_name(scope)
            method = scope.get("method", "GET")
            HTTP_REQUESTS.labels(route, method, str(status["code"])).inc()
            HTTP_LATENCY.labels(route, method).observe(time.perf_counter() - started)


def _route_name(scope: Scope) -> str:
    route = scope.get("route")
    path = getattr(route, "path", None)
    return str(path) if path else "unmatched"




def create_app_from_environment() -> Starlette:
    """The factory `hub serve` gives uvicorn (one runtime per worker process)."""
    from hub.observability.logs import configure_logging
    from hub.observability.tracing import configure_tracing
    from hub.settings import load_settings

    settings = load_settings()
    # Each worker process sets up its own: JSON lines or text, and spans only when an
    # OTLP endpoint is configured (docs/ops/logs-and-traces.md).
    configure_logging(settings)
    configure_tracing(settings)
    return create_app(Runtime(settings), server_process=True)
