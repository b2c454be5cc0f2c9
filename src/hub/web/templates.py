"""The Jinja2 environment the dashboard renders with.

Templates and static files live in the top-level `web/` directory, beside `src/`, so
that people who edit HTML and CSS find them without reading Python; an installed hub
carries them inside the package (`hub.bundled`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import jinja2
from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from hub.bundled import data_dir
from hub.web.links import id_href, page_of

TEMPLATE_DIR = data_dir("web/templates")
STATIC_DIR = data_dir("web/static")


def _timestamp(moment: datetime) -> str:
    # Coordinator time is UTC; say so rather than let readers guess a time zone.
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _plain(value: object) -> str:
    """Event payload values as short text (lists joined, empty shown as a dash)."""
    if isinstance(value, list | tuple):
        return ", ".join(_plain(item) for item in value) or "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None or value == "":
        return "—"
    return str(value)


def _duration(seconds: float) -> str:
    """A wait as people say it: the two largest units ("3 h 20 min", "2 d 4 h")."""
    total = max(int(seconds), 0)
    if total < 60:
        return f"{total} s"
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    parts = [(days, "d"), (hours, "h"), (minutes, "min")]
    while parts and parts[0][0] == 0:
        parts.pop(0)
    return " ".join(f"{amount} {unit}" for amount, unit in parts[:2] if amount)


def _web_link(reference: str) -> str | None:
    """The address to link an evidence reference to, if it is a web address at all.

    References are free text from agents; only http(s) becomes a link, so a
    `javascript:` or `data:` reference is shown as text and never followed.
    """
    return reference if reference.startswith(("https://", "http://")) else None


def _page_context(request: Request) -> dict[str, Any]:
    """What every page's layout needs: who is signed in, the CSRF token for forms, and
    the notice an operator action left for the page it redirected to (shown once)."""
    csrf_token = request.scope.get("csrftoken")
    session = request.scope.get("session")
    notice = session.pop("notice", None) if isinstance(session, dict) else None
    return {
        "viewer": getattr(request.state, "viewer", None),
        "csrf_token": csrf_token() if csrf_token is not None else None,
        "notice": notice if isinstance(notice, str) else None,
    }


environment = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
    autoescape=jinja2.select_autoescape(["html"]),
    # A misspelt variable is a bug to see in tests, not an empty string on a page.
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
environment.filters["timestamp"] = _timestamp
environment.filters["plain"] = _plain
environment.filters["duration"] = _duration
environment.filters["web_link"] = _web_link
environment.filters["page_of"] = page_of
# `ident|id_href(project_id, task_id)`: where an id leads from a record of that task.
environment.filters["id_href"] = lambda ident, project_id, task_id=None: id_href(
    ident, project_id=project_id, task_id=task_id
)

templates = Jinja2Templates(env=environment, context_processors=[_page_context])


def render(
    request: Request,
    name: str,
    context: Mapping[str, Any] | None = None,
    *,
    status_code: int = 200,
) -> Response:
    # Pages show data behind a login: no shared cache may keep them.
    return templates.TemplateResponse(
        request, name, dict(context or {}), status_code=status_code,
        headers={"Cache-Control": "no-store"},
    )


def render_fragment(name: str, context: Mapping[str, Any]) -> str:
    """A template outside a request (the live event stream, the CSRF refusal page)."""
    return environment.get_template(name).render(
        {"viewer": None, "csrf_token": None, "notice": None, **context}
    )
