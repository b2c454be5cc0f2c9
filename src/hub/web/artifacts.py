"""Reading artifacts over HTTP (docs/design.md, "Artifacts").

`GET /artifacts/{id}` downloads an available file, for an API token (`Authorization:
Bearer …`) or a dashboard sign-in (its cookie): never as a page of this site. It is an
attachment (`Content-Disposition`, with a safe file name), not to be sniffed
(`X-Content-Type-Options: nosniff`), sandboxed should anything open it
(`Content-Security-Policy: sandbox`), and served as `application/octet-stream` unless
it is plain text of an allowed type (`artifacts.views.ArtifactView.served_media_type`).
One range of bytes may be asked for (`Range: bytes=…`: 206, or 416). A deleted or
expired file is 410 with its reason; an unknown id, an upload in progress or a link is
404. The bytes stream from the store, a chunk at a time.

`GET /artifacts/{id}/preview` is a dashboard page: the record, and a text file's first
64 KiB as escaped text (HTML and SVG as their source), with a download link.

The download lives outside the dashboard's application, which drops `Authorization`
headers, and reads the sign-in cookie through the dashboard's own cookie settings
(`signin.sign_in_cookie`).
"""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route, request_response

from hub.artifacts import service as artifacts
from hub.artifacts.vocabulary import ArtifactOperation
from hub.errors import HubError, NotFound, Unauthenticated, ValidationFailed, http_problem
from hub.identity import service as identity
from hub.identity.views import Actor
from hub.runtime import Runtime
from hub.web.signin import login_redirect, require_viewer, sign_in_cookie
from hub.web.templates import render

log = logging.getLogger("hub.web.artifacts")

_DOWNLOAD_HEADERS = {
    "x-content-type-options": "nosniff",
    "content-security-policy": "sandbox",
    "cache-control": "private, no-store",
}
_RANGE = re.compile(r"bytes=(\d*)-(\d*)")


class _Unsatisfiable(Exception):
    """The range asked for holds no byte of the file."""


def download_routes(runtime: Runtime) -> list[BaseRoute]:
    """The download, mounted beside the API (module docstring)."""

    async def download(request: Request) -> Response:
        artifact_id = request.path_params["artifact_id"]
        try:
            await _reader(runtime, request)
            stored = await runtime.aread(lambda uow: artifacts.stored_file(uow, artifact_id))
        except Unauthenticated as refused:
            if "authorization" not in request.headers and _wants_a_page(request):
                return login_redirect(request)
            return _refusal(refused)
        except HubError as refused:
            return _refusal(refused)
        present = await run_in_threadpool(runtime.store.size, stored.storage_key)
        if present != stored.size:
            log.error("artifact %s: %s bytes recorded, %s in the store",
                      artifact_id, stored.size, present)
            return _refusal(NotFound("stored bytes of artifact", artifact_id))
        return _file(runtime, stored, request)

    app = SessionMiddleware(request_response(download), **sign_in_cookie(runtime.settings))
    return [Route("/artifacts/{artifact_id}", app, methods=["GET"])]


def preview_routes(runtime: Runtime) -> list[BaseRoute]:
    """The preview, a page of the dashboard (its sign-in, its layout and headers)."""

    async def preview_page(request: Request) -> Response:
        viewer = await require_viewer(runtime, request)
        artifact_id = request.path_params["artifact_id"]
        try:
            identity.authorize(viewer, ArtifactOperation.PREVIEW)
            shown = await runtime.aread(
                lambda uow: artifacts.preview(uow, runtime.store, artifact_id)
            )
        except NotFound:
            raise
        except HubError as refused:
            status, _ = http_problem(refused)
            raise HTTPException(status, refused.message) from None
        context = {"preview": shown, "preview_kib": artifacts.PREVIEW_BYTES // 1024}
        return render(request, "artifact.html", context)

    return [Route("/artifacts/{artifact_id}/preview", preview_page, methods=["GET"])]


async def _reader(runtime: Runtime, request: Request) -> Actor:
    """Who downloads: the bearer token of an API client (nothing else is looked at when
    the request carries one), else the browser's dashboard sign-in."""
    header = request.headers.get("authorization")
    if header is not None:
        token = identity.bearer_token(header)
        if token is None:
            raise Unauthenticated("the Authorization header is not `Bearer <token>`")
        actor = await runtime.aread(lambda uow: identity.authenticate(uow, token))
    else:
        actor = await require_viewer(runtime, request)
    return identity.authorize(actor, ArtifactOperation.DOWNLOAD)


def _wants_a_page(request: Request) -> bool:
    return "text/html" in request.headers.get("accept", "")


def _file(runtime: Runtime, stored: artifacts.StoredFile, request: Request) -> Response:
    view = stored.artifact
    etag = f'"{view.sha256}"'
    headers = {
        **_DOWNLOAD_HEADERS,
        "content-disposition": _attachment(view.download_name),
        "accept-ranges": "bytes",
        "etag": etag,
    }
    asked = request.headers.get("range")
    if request.headers.get("if-range", etag) != etag:
        asked = None  # the client's copy is of other bytes: send the whole file
    try:
        start, end = _byte_range(asked, stored.size)
    except _Unsatisfiable:
        refused = ValidationFailed("Range", f"the file has {stored.size} bytes")
        _, body = http_problem(refused)
        return JSONResponse(
            body, status_code=416,
            headers={**_DOWNLOAD_HEADERS, "content-range": f"bytes */{stored.size}"},
        )
    status = 200
    if (start, end) != (0, stored.size):
        status = 206
        headers["content-range"] = f"bytes {start}-{end - 1}/{stored.size}"
    headers["content-length"] = str(end - start)
    return StreamingResponse(
        runtime.store.read(stored.storage_key, start, end),
        status_code=status,
        headers=headers,
        media_type=view.served_media_type,
    )


def _byte_range(header: str | None, size: int) -> tuple[int, int]:
    """The bytes to send, `start` up to `end`: one range asked for, or the whole file
    (no range, several ranges, or one that does not parse: a server may ignore those)."""
    match = _RANGE.fullmatch((header or "").strip())
    if match is None or match.groups() == ("", ""):
        return 0, size
    first, last = match.groups()
    if not first:  # the last N bytes
        if int(last) == 0 or size == 0:
            raise _Unsatisfiable
        return max(0, size - int(last)), size
    start = int(first)
    if last and int(last) < start:
        return 0, size
    if start >= size:
        raise _Unsatisfiable
    return start, size if not last else min(int(last) + 1, size)


def _attachment(name: str) -> str:
    """`attachment` with the name as plain ASCII (anything else, quotes and separators
    replaced) and exactly, UTF-8 encoded (RFC 6266)."""
    plain = "".join(ch if 32 <= ord(ch) < 127 and ch not in '"\\;%/' else "_" for ch in name)
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(name, safe='')}"


def _refusal(error: HubError | Unauthenticated) -> Response:
    status, body = http_problem(error)
    headers: dict[str, Any] = {"x-content-type-options": "nosniff"}
    if status == 401:
        headers["www-authenticate"] = "Bearer"
    return JSONResponse(body, status_code=status, headers=headers)
