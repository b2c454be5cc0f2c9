"""Signing in to the dashboard, signing out, and who is signed in.

decisions.md §1: humans log in with a password (argon2 in `hub.identity`) or by pasting
a personal token once; either way the browser then holds only a signed, HttpOnly,
SameSite=Lax cookie naming the principal. The principal is read again on every
request, so a disabled principal is signed out at its next request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from starlette.datastructures import FormData
from starlette.requests import HTTPConnection, Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from hub.errors import Unauthenticated
from hub.identity import service as identity
from hub.identity.actor import Actor
from hub.runtime import Runtime
from hub.web.templates import render

SESSION_KEY = "principal_id"
_REFUSED = "Unknown name or wrong password."
_TOKEN_REFUSED = "That token cannot sign in here: it is unknown, revoked or expired."
_NOT_A_PERSON = (
    "Only people sign in to the dashboard with a personal token; "
    "agent and service tokens are for the API."
)


async def require_viewer(runtime: Runtime, request: HTTPConnection) -> Actor:
    """The signed-in human, re-read from the database.

    Raises `Unauthenticated`, which the dashboard answers with the login page.
    """
    principal_id = request.session.get(SESSION_KEY)
    if not isinstance(principal_id, str):
        raise Unauthenticated("sign in to the dashboard first")
    try:
        actor = await runtime.aread(lambda uow: identity.actor_for_principal(uow, principal_id))
    except Unauthenticated:
        request.session.clear()
        raise
    if not actor.is_human:
        request.session.clear()
        raise Unauthenticated("only people sign in to the dashboard")
    request.state.viewer = actor
    return actor


def login_redirect(request: HTTPConnection) -> Response:
    here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    query = "" if here == "/" else "?" + urlencode({"next": here})
    return RedirectResponse(f"/login{query}", status_code=303)


def safe_next(target: str | None) -> str:
    """Only a path on this site: `next` must never send a fresh login somewhere else."""
    if not target or not target.startswith("/") or target.startswith(("//", "/\\")):
        return "/"
    return target


def signin_routes(runtime: Runtime) -> list[BaseRoute]:
    async def login_form(request: Request) -> Response:
        if isinstance(request.session.get(SESSION_KEY), str):
            return RedirectResponse(safe_next(request.query_params.get("next")), status_code=303)
        return render(request, "login.html", _form_context(request.query_params))

    async def login(request: Request) -> Response:
        form = await request.form()
        token = _field(form, "token")
        try:
            if token:
                actor = await runtime.aread(lambda uow: identity.authenticate(uow, token))
            else:
                name, password = _field(form, "name"), _field(form, "password", strip=False)
                actor = await runtime.aread(
                    lambda uow: identity.login_with_password(uow, name=name, password=password)
                )
        except Unauthenticated:
            return _refused(request, form, _TOKEN_REFUSED if token else _REFUSED)
        # A pasted token must be a person's own personal token, never a session or reporter one.
        if not actor.is_human or (token and actor.credential != "personal"):
            return _refused(request, form, _NOT_A_PERSON)
        request.session.clear()
        request.session[SESSION_KEY] = actor.principal_id
        return RedirectResponse(safe_next(_field(form, "next")), status_code=303)

    async def logout(request: Request) -> Response:
        request.session.clear()
        return RedirectResponse("/login?signed_out=1", status_code=303)

    return [
        Route("/login", login_form, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
    ]


def _field(form: FormData, name: str, *, strip: bool = True) -> str:
    value = form.get(name)
    if not isinstance(value, str):
        return ""
    return value.strip() if strip else value


def _form_context(values: Mapping[str, Any]) -> dict[str, object]:
    def text(key: str) -> str:
        value = values.get(key)
        return value if isinstance(value, str) else ""

    return {
        "name": text("name"),
        "next": safe_next(text("next")),
        "signed_out": bool(text("signed_out")),
        "error": None,
    }


def _refused(request: Request, form: FormData, message: str) -> Response:
    context = {**_form_context(form), "error": message}
    return render(request, "login.html", context, status_code=401)
