"""`GET /api/projects/{projectId}/export`: a project's records as JSON Lines, streamed
(docs/exports.md).

A bearer token, as for the rest of the API; the credential table's `exportProject` row
says which (`hub.identity._permissions`). The records are `hub.exports.project_records`,
read in one snapshot read transaction on a thread of their own (`Runtime.astream`) and
sent a page at a time as they are read: neither side holds the project in memory.

- 200, `application/x-ndjson`: one `{"table": …, "row": {…}}` per line, from `_export`
  to `_end`;
- a refusal before the first line: `{"error": {"code", "message", …}}` with the problem
  codes of the other routes (UNAUTHENTICATED 401, PERMISSION_DENIED 403, NOT_FOUND 404);
- a failure once lines were sent cannot change the status: the stream ends with an
  `_error` record instead of `_end`, and the failure is logged.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Iterator

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from hub.api.routes import refusal
from hub.errors import HubError, Unauthenticated, Unavailable
from hub.exports import ERROR_RECORD, EXPORT_RECORD, project_records
from hub.identity import service as identity
from hub.runtime import Runtime
from hub.storage.export import ExportRecord
from hub.storage.unit_of_work import UnitOfWork

log = logging.getLogger("hub.api.exports")

EXPORT_OPERATION = "exportProject"
# Lines are sent in pieces of about this many bytes (one piece per queue hand-over).
PIECE_BYTES = 256 * 1024


def export_route(runtime: Runtime) -> Route:
    async def export(request: Request) -> Response:
        project_id = request.path_params["project_id"]
        token = identity.bearer_token(request.headers.get("authorization"))
        if token is None:
            return refusal(Unauthenticated("a bearer token is required (Authorization: Bearer …)"))

        def pieces(uow: UnitOfWork) -> Iterator[bytes]:
            actor = identity.authenticate(uow, token)
            identity.authorize(actor, EXPORT_OPERATION)
            yield from _encoded(project_records(uow, project_id))

        stream = runtime.astream(pieces)
        try:
            first = await anext(stream)
        except (HubError, Unauthenticated, Unavailable) as refused:
            await stream.aclose()
            return refusal(refused)
        except Exception:
            await stream.aclose()
            log.exception("the export of project %s failed", project_id)
            return refusal(HubError("the export failed on the server"))
        return StreamingResponse(
            _sent(first, stream, project_id),
            media_type="application/x-ndjson",
            headers={
                "content-disposition": f'attachment; filename="{project_id}.jsonl"',
                "cache-control": "private, no-store",
                "x-content-type-options": "nosniff",
            },
        )

    return Route("/api/projects/{project_id}/export", export, methods=["GET"])


def _encoded(records: Iterator[ExportRecord]) -> Iterator[bytes]:
    """The records as JSON Lines, gathered into pieces of about `PIECE_BYTES`."""
    piece: list[bytes] = []
    size = 0
    for record in records:
        line = json.dumps(record.line(), ensure_ascii=False, separators=(",", ":")) + "\n"
        encoded = line.encode()
        piece.append(encoded)
        size += len(encoded)
        # The first record goes at once: it is what tells the route the export started.
        if size >= PIECE_BYTES or (len(piece) == 1 and record.table == EXPORT_RECORD):
            yield b"".join(piece)
            piece, size = [], 0
    if piece:
        yield b"".join(piece)


async def _sent(first: bytes, rest: AsyncIterator[bytes], project_id: str) -> AsyncIterator[bytes]:
    yield first
    try:
        async for piece in rest:
            yield piece
    except Exception as failure:
        log.exception("the export of project %s failed after it started", project_id)
        message = failure.message if isinstance(failure, HubError) else "the export failed"
        record = {"table": ERROR_RECORD, "row": {"message": message}}
        yield (json.dumps(record) + "\n").encode()


