"""The dashboard as its own Starlette application, with its own middleware.

The cookie session and CSRF checks belong to the browser-facing pages only: API
clients (`/graphql`, `/healthz`, `/readyz`, `/metrics`) authenticate with bearer tokens
and never see them. `hub.app` lists the API routes first and mounts this application
at `/` last, so it receives every path the API does not claim, and answers unknown
ones with its own 404 page.

Layers, outermost first: security headers; dropping any `Authorization` header; the
signed cookie that carries the sign-in's secret (`hub.web.signin`); CSRF (every
state-changing form carries a token; `/login` is checked even before any cookie exists,
against login CSRF); then the routes.

The dashboard never reads bearer tokens, and asgi-csrf skips its check for any request
that carries `Authorization: Bearer …` (right for APIs, wrong here): without the header
dropped first, a cross-site form with a cookie and any bearer header would pass.
"""

from __future__ import annotations

import logging
from typing import Any

from asgi_csrf import asgi_csrf
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hub.errors import NotFound, Unauthenticated, Unavailable
from hub.runtime import Runtime
from hub.web.actions import action_routes
from hub.web.agents import agents_routes
from hub.web.artifact_list import artifact_list_routes
from hub.web.artifacts import preview_routes
from hub.web.board import board_routes
from hub.web.imports import import_routes
from hub.web.jobs import jobs_routes
from hub.web.knowledge import knowledge_routes
from hub.web.live import live_routes
from hub.web.pages import page_routes
from hub.web.places import place_routes
from hub.web.reviews import review_routes
from hub.web.signin import SESSION_COOKIE as SESSION_COOKIE
from hub.web.signin import login_redirect, sign_in_cookie, signin_routes
from hub.web.tasks import task_routes
from hub.web.templates import STATIC_DIR, render, render_fragment

log = logging.getLogger("hub.web")

_CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "object-src 'none'",
])
_SECURITY_HEADERS = {
    "content-security-policy": _CONTENT_SECURITY_POLICY,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
}
_ROUTE_KEY = "hub.web.matched_route"


def create_dashboard(runtime: Runtime) -> ASGIApp:
    settings = runtime.settings
    # Cookies travel over HTTPS only, except on a developer's plain-HTTP localhost.
    secure = not settings.is_development
    # Both cookies are signed with the deployment's key, not a per-process one: any
    # server process must accept what another one issued (docs/design.md, "Scale").
    # The sign-in cookie's settings are `signin.sign_in_cookie`'s (downloads read it too).
    routes: list[BaseRoute] = [
        *signin_routes(runtime),
        *page_routes(runtime),
        *board_routes(runtime),
        *live_routes(runtime),
        *jobs_routes(runtime),
        *review_routes(runtime),
        *task_routes(runtime),
        *knowledge_routes(runtime),
        *import_routes(runtime),
        *preview_routes(runtime),
        *artifact_list_routes(runtime),
        *place_routes(runtime),
        *agents_routes(runtime),
        *action_routes(runtime),
        Mount("/static", app=StaticFiles(directory=STATIC_DIR), name="static"),
    ]
    dashboard = Starlette(
        routes=routes,
        middleware=[
            Middleware(SecurityHeaders),
            Middleware(DropAuthorization),
            Middleware(SessionMiddleware, **sign_in_cookie(settings)),
            Middleware(
                asgi_csrf,
                signing_secret=settings.signing_key,
                always_protect={"/login"},
                cookie_secure=secure,
                cookie_samesite="Lax",
                send_csrf_failed=_csrf_refused,
            ),
            Middleware(_RecordRoute),
        ],
        exception_handlers={
            Unauthenticated: _sign_in_required,
            NotFound: _not_found,
            Unavailable: _unavailable,
            HTTPException: _http_error,
            Exception: _server_error,
        },
    )
    return _ReportRoute(dashboard)


class SecurityHeaders:
    """Headers every dashboard response carries: no framing, no sniffing, own scripts only."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in _SECURITY_HEADERS.items():
                    if name not in headers:
                        headers.append(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)


class DropAuthorization:
    """Removes `Authorization` headers before the CSRF check sees the request (module
    docstring): the dashboard authenticates by its cookie only."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and any(
            name.lower() == b"authorization" for name, _ in scope.get("headers", ())
        ):
            headers = [(n, v) for n, v in scope["headers"] if n.lower() != b"authorization"]
            scope = {**scope, "headers": headers}
        await self.app(scope, receive, send)


class _ReportRoute:
    """Hands the route the dashboard matched back to `hub.app`'s request metrics.

    The metrics label requests by route template, read from the scope after the
    request. asgi-csrf passes a *copy* of the scope inwards, so the inner router's
    `route` never reaches that outer scope; a box shared by reference carries it out.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        matched: list[BaseRoute] = []
        scope[_ROUTE_KEY] = matched
        try:
            await self.app(scope, receive, send)
        finally:
            if matched:
                scope["route"] = matched[0]


class _RecordRoute:
    """The inner half of `_ReportRoute`: runs just outside the router."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        finally:
            box = scope.get(_ROUTE_KEY)
            route = scope.get("route")
            if isinstance(box, list) and isinstance(route, BaseRoute):
                box.append(route)


async def _sign_in_required(request: Request, _exc: Exception) -> Response:
    # An EventSource cannot follow a login page; tell it plainly it is not signed in.
    if "text/event-stream" in request.headers.get("accept", ""):
        return PlainTextResponse("sign in to the dashboard first", status_code=401)
    return login_redirect(request)


async def _not_found(request: Request, _exc: Exception) -> Response:
    return _error_page(request, 404, "Not found", "There is nothing at this address.")


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        return await _not_found(request, exc)
    response = _error_page(request, exc.status_code, "Request refused", str(exc.detail))
    response.headers.update(exc.headers or {})
    return response


async def _unavailable(request: Request, exc: Exception) -> Response:
    # The database cannot serve now (docs/ops/faults.md): say so, and that it passes.
    assert isinstance(exc, Unavailable)
    body = render_fragment("error.html", {
        "status": 503,
        "title": "Temporarily unavailable",
        "message": "hub cannot use its database right now. Nothing was lost; reload "
        "this page in a few seconds.",
    })
    return HTMLResponse(
        body, status_code=503, headers={"Retry-After": str(exc.retry_after_seconds)}
    )


async def _server_error(request: Request, exc: Exception) -> Response:
    log.exception("dashboard request failed", exc_info=exc)
    # Rendered without the request: the failure may have been in the session or CSRF layer.
    body = render_fragment("error.html", {
        "status": 500,
        "title": "Something went wrong",
        "message": "The server could not show this page. Try again in a moment.",
    })
    return HTMLResponse(body, status_code=500)


def _error_page(request: Request, status: int, title: str, message: str) -> Response:
    context = {"status": status, "title": title, "message": message}
    return render(request, "error.html", context, status_code=status)


async def _csrf_refused(scope: Scope, send: Send, _reason: Any) -> None:
    body = render_fragment("error.html", {
        "status": 403,
        "title": "Form expired",
        "message": (
            "This form could not be accepted: its security token is missing or out of date. "
            "Go back, reload the page and try again."
        ),
    })
    response = HTMLResponse(body, status_code=403)
    await response(scope, _no_body, send)


async def _no_body() -> Message:
    return {"type": "http.disconnect"}
