"""Signing in to the dashboard, signing out, and who is signed in.

People sign in with a password (argon2 in `hub.identity`) or by pasting their own
personal token once. Either way the server opens a sign-in of its own
(`hub.identity._web_sessions`) and the browser holds only that sign-in's random secret,
in a signed, HttpOnly, SameSite=Lax cookie (Secure outside development). Every request
presents it again and is refused once the sign-in has ended (signed out, sign-in token
revoked, principal disabled), has been idle too long or is too old; live streams check
it again while they are open (`while_signed_in`). docs/architecture.md, "The dashboard".
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import aclosing
from typing import Any, TypeVar
from urllib.parse import urlencode

from sse_starlette import ServerSentEvent
from starlette.datastructures import FormData
from starlette.requests import HTTPConnection, Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from hub.errors import Unauthenticated
from hub.events.recheck import rechecked
from hub.identity import service as identity
from hub.identity.errors import NotAPerson, SignInThrottled
from hub.identity.views import Actor
from hub.runtime import Runtime
from hub.settings import Settings
from hub.storage.unit_of_work import UnitOfWork
from hub.web.templates import render

T = TypeVar("T")

SESSION_COOKIE = "hub_session"
# The cookie carries only this: the sign-in's secret (never the principal).
SESSION_KEY = "sign_in"
SIGNED_OUT_EVENT = "signed-out"
_REFUSED = "Unknown name or wrong password."
_TOKEN_REFUSED = "That token cannot sign in here: it is unknown, revoked or expired."
# The same words whether or not the name exists: a lockout tells a guesser nothing.
_THROTTLED = (
    "Too many sign-in attempts for this name or from this address. "
    "Try again in {minutes}, or ask an operator to clear the lockout."
)
_NOT_A_PERSON = (
    "Only people sign in to the dashboard with a personal token; "
    "agent and service tokens are for the API."
)


def sign_in_cookie(settings: Settings) -> dict[str, Any]:
    """The signed cookie that carries a sign-in (Starlette's `SessionMiddleware`
    options), for the dashboard and for downloads: signed with the deployment's key, so
    any server process accepts what another issued (docs/design.md, "Scale"); HTTPS
    only, except on a developer's plain-HTTP localhost."""
    return {
        "secret_key": settings.signing_key,
        "session_cookie": SESSION_COOKIE,
        # The cookie's own lifetime is the sign-in's maximum age; the server judges that
        # and idleness itself (`hub.identity._web_sessions`).
        "max_age": settings.web_session_max_age_seconds,
        "same_site": "lax",
        "https_only": not settings.is_development,
    }


async def require_viewer(
    runtime: Runtime, request: HTTPConnection, *, activity: bool = True
) -> Actor:
    """The signed-in person, judged from the server's sign-in on every request.

    Raises `Unauthenticated`, which the dashboard answers with the login page (401 for
    an event stream). A write made for the viewer judges the sign-in again inside its
    own transaction (`identity.require_web_session`). `activity=False` (live
    streams, which a browser reopens by itself) does not count as use of the sign-in.
    """
    secret = request.session.get(SESSION_KEY)
    if not isinstance(secret, str):
        request.session.clear()  # a cookie from before server-side sign-ins, or nothing
        raise Unauthenticated("sign in to the dashboard first")
    try:
        viewer = await runtime.aread(lambda uow: identity.authenticate_web_session(uow, secret))
    except Unauthenticated:
        request.session.clear()
        raise
    actor = viewer.actor
    if activity and viewer.refresh_due:
        web_session_id = actor.web_session_id
        assert web_session_id is not None
        await runtime.awrite(lambda uow: identity.refresh_web_session(uow, web_session_id))
    request.state.viewer = actor
    return actor


async def read_for_viewer(
    runtime: Runtime, request: HTTPConnection, read: Callable[[UnitOfWork], T]
) -> T:
    """A page's one read transaction, for a signed-in viewer only (`require_viewer`
    first: a stranger learns nothing, not even whether the record exists)."""
    await require_viewer(runtime, request)
    return await runtime.aread(read)


async def while_signed_in(
    runtime: Runtime, viewer: Actor, events: AsyncIterator[ServerSentEvent]
) -> AsyncIterator[ServerSentEvent]:
    """A dashboard live stream that lasts only as long as the viewer's sign-in.

    Every `credential_recheck_seconds` the sign-in is judged again; once it no longer
    holds, the browser gets one last `signed-out` event saying why, and the stream ends.
    Checking does not count as activity: a page left open does not keep a sign-in alive.
    """
    web_session_id = viewer.web_session_id
    assert web_session_id is not None

    async def check() -> None:
        await runtime.aread(lambda uow: identity.require_web_session(uow, web_session_id))

    guarded = rechecked(events, check, every_seconds=runtime.settings.credential_recheck_seconds)
    async with aclosing(guarded):
        try:
            async for event in guarded:
                yield event
        except Unauthenticated as gone:
            yield ServerSentEvent(
                data=f"You were signed out: {gone.message}. Sign in again to follow live.",
                event=SIGNED_OUT_EVENT,
            )


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
        if SESSION_KEY in request.session:
            try:
                await require_viewer(runtime, request)
            except Unauthenticated:
                pass  # an ended sign-in: show the form (the cookie is cleared)
            else:
                return RedirectResponse(
                    safe_next(request.query_params.get("next")), status_code=303
                )
        return render(request, "login.html", _form_context(request.query_params))

    async def login(request: Request) -> Response:
        form = await request.form()
        token = _field(form, "token")
        previous = request.session.get(SESSION_KEY)
        # Counted against the name typed (a pasted token names none) and the address,
        # before anything is checked (`hub.identity._login_throttles`).
        account = None if token else _field(form, "name")
        address = request.client.host if request.client else None
        try:
            await runtime.awrite(
                lambda uow: identity.admit_login(uow, account=account, address=address)
            )
            # Checked in a read (the password hash is slow on purpose); the sign-in is
            # then opened in a write that checks the principal and token again.
            if token:
                actor = await runtime.aread(lambda uow: identity.authenticate(uow, token))
            else:
                name, password = _field(form, "name"), _field(form, "password", strip=False)
                actor = await runtime.aread(
                    lambda uow: identity.login_with_password(uow, name=name, password=password)
                )

            def open_sign_in(uow: UnitOfWork) -> identity.OpenedWebSession:
                opened = identity.open_web_session(
                    uow, actor, replaces=previous if isinstance(previous, str) else None
                )
                identity.login_succeeded(uow, account=account, address=address)
                return opened

            opened = await runtime.awrite(open_sign_in)
        except SignInThrottled as throttled:
            return _throttled(request, form, throttled.retry_after_seconds)
        except NotAPerson:
            return _refused(request, form, _NOT_A_PERSON)
        except Unauthenticated:
            return _refused(request, form, _TOKEN_REFUSED if token else _REFUSED)
        request.session.clear()
        request.session[SESSION_KEY] = opened.secret
        return RedirectResponse(safe_next(_field(form, "next")), status_code=303)

    async def logout(request: Request) -> Response:
        secret = request.session.get(SESSION_KEY)
        request.session.clear()
        if isinstance(secret, str):
            # Ended on the server: a copy of the cookie taken before is worth nothing now.
            await runtime.awrite(lambda uow: identity.end_web_session(uow, secret))
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


def _throttled(request: Request, form: FormData, retry_after: int) -> Response:
    minutes = -(-retry_after // 60)
    message = _THROTTLED.format(minutes="1 minute" if minutes == 1 else f"{minutes} minutes")
    response = render(request, "login.html", {**_form_context(form), "error": message},
                      status_code=429)
    response.headers["Retry-After"] = str(retry_after)
    return response
