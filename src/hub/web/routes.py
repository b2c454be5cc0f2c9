"""Dashboard routes (placeholder until the dashboard lands)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route

from hub.runtime import Runtime


def web_routes(runtime: Runtime) -> list[BaseRoute]:
    async def index(_request: Request) -> Response:
        return HTMLResponse("<h1>hub</h1>")

    return [Route("/", index)]


def web_mounts(runtime: Runtime) -> list[BaseRoute]:
    return []
