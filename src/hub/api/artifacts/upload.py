"""`POST /api/artifacts`: an upload, streamed (docs/design.md, "Artifacts").

The body is the file's bytes, sent as they are (no multipart form); the metadata is in
the query (`projectId`, `name`, `mediaType`, `retention`, and the optional `taskId`,
`attemptId`, `jobId`, `evidenceId`, `reviewId`) and the headers (`Authorization:
Bearer …`, `Idempotency-Key`, `Content-Length` where known). What it does is the
artifacts module's (`artifacts.receive_upload`); this route only reads the request
and writes the answer:

- 201 (a new artifact) or 200 (a keyed retry's replay): `{"artifact": {…}, "replay":
  …, "serverTime": …}`, the artifact with the fields of the GraphQL `Artifact` type;
- a refusal: `{"error": {"code", "message", …}}` with the problem codes of GraphQL
  (VALIDATION_FAILED 400, UNAUTHENTICATED 401, PERMISSION_DENIED 403, NOT_FOUND 404,
  IDEMPOTENCY_CONFLICT 409, QUOTA_EXCEEDED 413: `hub.errors.http_problem`), never a
  stack trace.
"""

from __future__ import annotations

import dataclasses
import logging

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from strawberry.utils.str_converters import to_camel_case

from hub.api.artifacts.types import Artifact
from hub.api.mapping import as_json, from_view
from hub.api.routes import bearer, caller, known_parameters, refusal
from hub.artifacts import service as artifacts
from hub.artifacts.vocabulary import ArtifactOperation
from hub.errors import HubError, Unauthenticated, Unavailable, ValidationFailed
from hub.runtime import Runtime
from hub.storage.outage import disk_full

log = logging.getLogger("hub.api.artifacts")

# The query's parameters: the upload request's fields in the API's spelling; what the
# headers carry is not among them.
_FROM_HEADERS = {"declared_size", "idempotency_key"}
PARAMETERS = {
    to_camel_case(f.name): f.name
    for f in dataclasses.fields(artifacts.UploadRequest)
    if f.name not in _FROM_HEADERS
}
_REQUIRED = ("projectId", "name")


def upload_route(runtime: Runtime) -> Route:
    async def upload(request: Request) -> Response:
        try:
            token = bearer(request)
            upload_request = _upload_request(request)
            answer = await artifacts.receive_upload(
                runtime.awrite,
                caller(token, ArtifactOperation.UPLOAD),
                runtime.store,
                upload_request,
                request.stream(),
            )
        except ClientDisconnect:
            # The client is gone: nobody reads an answer; the upload left nothing behind.
            return Response(status_code=400)
        except (HubError, Unauthenticated, Unavailable) as refused:
            return refusal(refused)
        except OSError as failed:
            if not disk_full(failed):
                log.exception("an upload failed")
                return refusal(HubError("the upload failed on the server; nothing was stored"))
            # Staging could not grow: what was received is gone, and the client may
            # send it again once there is room (docs/ops/faults.md).
            log.warning("an upload found the disk full: %s", failed.strerror)
            return refusal(Unavailable("the server's disk is full"))
        except Exception:
            log.exception("an upload failed")
            return refusal(HubError("the upload failed on the server; nothing was stored"))
        view = answer.artifact
        return JSONResponse(
            {
                "artifact": as_json(from_view(Artifact, view)),
                "replay": answer.replay,
                "serverTime": answer.server_time.isoformat(),
            },
            status_code=200 if answer.replay else 201,
            headers={"Location": view.download_path} if view.download_path else None,
        )

    return Route("/api/artifacts", upload, methods=["POST"])


def _upload_request(request: Request) -> artifacts.UploadRequest:
    """The upload's metadata from the query and the headers, before any byte is read."""
    query = request.query_params
    known_parameters(query, PARAMETERS, "an upload")
    for name in _REQUIRED:
        if not query.get(name):
            raise ValidationFailed(name, "is required")
    if request.headers.get("content-type", "").lower().startswith("multipart/"):
        raise ValidationFailed(
            "Content-Type", "send the file's bytes as the body, not as a multipart form"
        )
    length = request.headers.get("content-length")
    if length is not None and not (length.isascii() and length.isdigit()):
        raise ValidationFailed("Content-Length", "must be a number of bytes")
    values = {field: query[name] for name, field in PARAMETERS.items() if query.get(name)}
    return artifacts.UploadRequest(
        **values,
        declared_size=None if length is None else int(length),
        idempotency_key=request.headers.get("idempotency-key") or None,
    )
