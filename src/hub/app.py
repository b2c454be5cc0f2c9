"""The ASGI application: GraphQL, the agent's verbs as MCP tools, artifact uploads and
downloads, project exports, the dashboard, health, readiness and metrics."""

from __future__ import annotations

import contextlib
import gc
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import Receive, Scope, Send

from hub.api.artifacts.upload import upload_route
from hub.api.exports import export_route
from hub.api.http import HubGraphQL
from hub.api.imports.route import import_route
from hub.api.mcp_http.route import McpEndpoint, mcp_route
from hub.api.rate_limits import RateLimits
from hub.maintenance import periodic_maintenance
from hub.metrics import HTTP_LATENCY, HTTP_REQUESTS
from hub.runtime import Runtime
from hub.storage import migrations
from hub.web.routes import web_mounts, web_routes

log = logging.getLogger("hub")


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
        try:
            state = await runtime_check(runtime)
        except Exception as exc:  # the database is unreachable: not ready, and say why
            log.warning("readiness check failed: %s", type(exc).__name__)
            return JSONResponse(
                {"status": "unavailable", "database": "unreachable"}, status_code=503
            )
        status = 200 if state["migrations"] == "current" else 503
        return JSONResponse({"status": "ok" if status == 200 else "unavailable", **state},
                            status_code=status)

    async def metrics(_request: Request) -> Response:
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(periodic_maintenance(runtime))
            await stack.enter_async_context(mcp.run())
            for background in runtime.background_tasks():
                await stack.enter_async_context(background)
            if server_process:
                # Only where the process is the server's own: frozen objects are never
                # freed, which a process that builds many apps (the tests') would leak.
                _freeze_startup_objects()
            yield

    app = Starlette(
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
        # Inside the metrics, so a request answered 429 is counted (as "unmatched": it
        # never reaches the router).
        middleware=[Middleware(RateLimits, runtime=runtime)],
    )
    app.state.runtime = runtime
    return RequestMetrics(app)  # type: ignore[return-value]


async def runtime_check(runtime: Runtime) -> dict[str, str]:
    from anyio import to_thread

    def check() -> dict[str, str]:
        runtime.database.ping()
        current = migrations.is_at_head(runtime.database)
        return {"database": "reachable", "migrations": "current" if current else "behind"}

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
    from hub.settings import load_settings

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    return create_app(Runtime(load_settings()), server_process=True)
