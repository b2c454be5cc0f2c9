"""`POST /api/imports`: an import as JSON Lines, streamed (docs/imports.md, "Over HTTP").

The body is one import item (the wire's JSON object) per line, `Content-Type:
application/x-ndjson`; the query says where (`projectId`) and how (`source`, `dryRun`,
`partial`); the headers carry `Authorization: Bearer …` and `Idempotency-Key`. The
caller is authenticated and authorized (the credential table's `importTasks` row)
before a byte of the body is read, and again in the import's own transaction. The body
is read as it streams, a line at a time, never whole: each line parsed as it completes
(off the event loop, a batch of lines at a time), a line longer than
`HUB_IMPORT_MAX_LINE_BYTES` or a body of more than `HUB_IMPORT_MAX_ITEMS` items refused
as soon as it shows; a line that is not a JSON object refuses the whole import naming its
line, even a partial one, and nothing is written. Items are numbered by their line, blank
lines skipped. A keyed retry is told by the body's bytes (and the query): the same again
replays the first import's report, another is `IdempotencyConflict`.

The answer: 200 `{"report": {…}, "replay": …, "serverTime": …}`, the report with the
fields of the GraphQL `ImportReport` (its `items` included), or a refusal as every plain
route answers one (`hub.api.routes.refusal`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import AsyncIterator, Iterator, Sequence
from datetime import datetime
from typing import Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from hub.api.routes import bearer, caller, known_parameters, refusal
from hub.errors import (
    HubError,
    QuotaExceeded,
    Unauthenticated,
    Unavailable,
    ValidationFailed,
)
from hub.idempotency.service import Keyed
from hub.imports import service as imports
from hub.imports.errors import UnreadableLine
from hub.runtime import Runtime
from hub.settings import Settings
from hub.storage.unit_of_work import UnitOfWork

log = logging.getLogger("hub.api.imports")

PARAMETERS = ("projectId", "source", "dryRun", "partial")
# Lines parsed per hop to a worker thread.
_BATCH_LINES = 2000
_FORMS = ("multipart/", "application/x-www-form-urlencoded")


def import_route(runtime: Runtime) -> Route:
    async def receive(request: Request) -> Response:
        try:
            token = bearer(request)
            query = _query(request)
            authorized = caller(token, imports.IMPORT_TASKS)
            # Who is calling, before the body is read: a refusal costs no upload.
            await runtime.aread(authorized)
            items, digest = await read_items(request.stream(), runtime.settings)
            import_request = imports.ImportRequest(
                **query,
                items=items,
                items_digest=digest,
                idempotency_key=request.headers.get("idempotency-key") or None,
            )

            def run(uow: UnitOfWork) -> tuple[Keyed[imports.ImportReportView], datetime]:
                done = imports.import_tasks(uow, authorized(uow), import_request)
                return done, uow.now()

            done, instant = await runtime.awrite(run)
        except ClientDisconnect:
            # The client is gone: nobody reads an answer, and nothing was written.
            return Response(status_code=400)
        except (HubError, Unauthenticated, Unavailable) as refused:
            return refusal(refused)
        except Exception:
            log.exception("an import failed")
            return refusal(HubError("the import failed on the server; nothing was stored"))
        return StreamingResponse(
            answer(done.value, done.replayed, instant), media_type="application/json"
        )

    return Route("/api/imports", receive, methods=["POST"])


def _query(request: Request) -> dict[str, Any]:
    query = request.query_params
    known_parameters(query, PARAMETERS, "an import")
    project_id = query.get("projectId")
    if not project_id:
        raise ValidationFailed("projectId", "is required")
    kind = request.headers.get("content-type", "").lower()
    if kind.startswith(_FORMS):
        raise ValidationFailed(
            "Content-Type", "send the items as JSON Lines (application/x-ndjson), not a form"
        )
    return {
        "project_id": project_id,
        "source": query.get("source", ""),
        "dry_run": _flag(query.get("dryRun"), "dryRun"),
        "partial": _flag(query.get("partial"), "partial"),
    }


def _flag(value: str | None, name: str) -> bool:
    if value is None or value.lower() in ("", "false", "0"):
        return False
    if value.lower() in ("true", "1"):
        return True
    raise ValidationFailed(name, "must be true or false")


async def read_items(
    body: AsyncIterator[bytes], settings: Settings
) -> tuple[list[imports.ImportItem], str]:
    """The body's items, read line by line as it streams, and the SHA-256 of its bytes."""
    digest = hashlib.sha256()
    limit, longest = settings.import_max_items, settings.import_max_line_bytes
    items: list[imports.ImportItem] = []
    pending = b""  # the line still arriving
    lines: list[bytes] = []
    first = 1  # the line number of lines[0]
    async for chunk in body:
        digest.update(chunk)
        pieces = (pending + chunk).split(b"\n")
        pending = pieces.pop()
        lines.extend(pieces)
        if len(pending) > longest:
            raise UnreadableLine(first + len(lines), f"is longer than {longest} bytes")
        if len(lines) >= _BATCH_LINES:
            items.extend(await asyncio.to_thread(_parse, lines, first, longest))
            first += len(lines)
            lines = []
            if len(items) > limit:
                raise _too_many(limit)
    if pending:
        lines.append(pending)
    items.extend(await asyncio.to_thread(_parse, lines, first, longest))
    if len(items) > limit:
        raise _too_many(limit)
    return items, digest.hexdigest()


def _too_many(limit: int) -> QuotaExceeded:
    return QuotaExceeded(
        f"an import holds at most {limit} items (HUB_IMPORT_MAX_ITEMS): split the file"
    )


def _parse(lines: Sequence[bytes], first: int, longest: int) -> list[imports.ImportItem]:
    items = []
    for number, line in enumerate(lines, start=first):
        if not line.strip():
            continue
        if len(line) > longest:
            raise UnreadableLine(number, f"is longer than {longest} bytes")
        try:
            raw = json.loads(line)
        except UnicodeDecodeError:
            raise UnreadableLine(number, "is not UTF-8 text") from None
        except json.JSONDecodeError as bad:
            raise UnreadableLine(number, f"is not JSON ({bad.msg} at column {bad.colno})") from None
        if not isinstance(raw, dict):
            raise UnreadableLine(number, "is not a JSON object (one item per line)")
        items.append(imports.read_item(number, raw))
    return items


# --- the answer ------------------------------------------------------------------------------
# Written out rather than through the GraphQL types (`from_view`, `as_json`), and sent as
# it is written, a slice of items at a time: a first import of 100,000 items answers
# 100,000 of them, which would cost more memory as one JSON document than the import
# itself. A test keeps the names the schema's.

_ITEMS_PER_CHUNK = 1000


def answer(report: imports.ImportReportView, replay: bool, instant: datetime) -> Iterator[bytes]:
    """`{"report": {…, "items": […]}, "replay": …, "serverTime": …}`, in pieces."""
    head = json.dumps({"report": report_json(report, items=False)})
    # The report object is left open for its items: `…}}` loses its last two braces.
    yield f'{head[:-2]}, "items": ['.encode()
    results = report.items or ()
    for start in range(0, len(results), _ITEMS_PER_CHUNK):
        piece = ", ".join(
            json.dumps(_item_json(result)) for result in results[start : start + _ITEMS_PER_CHUNK]
        )
        yield (piece if start == 0 else ", " + piece).encode()
    tail = json.dumps({"replay": replay, "serverTime": instant.isoformat()})
    yield f"]}}, {tail[1:]}".encode()


def report_json(report: imports.ImportReportView, *, items: bool = True) -> dict[str, Any]:
    counts = report.counts
    written: dict[str, Any] = {
        "id": report.id,
        "projectId": report.project_id,
        "principalId": report.principal_id,
        "sessionId": report.session_id,
        "createdAt": report.created_at.isoformat(),
        "source": report.source,
        "dryRun": report.dry_run,
        "partial": report.partial,
        "counts": {
            "created": counts.created,
            "updated": counts.updated,
            "unchanged": counts.unchanged,
            "conflict": counts.conflict,
            "skippedClosed": counts.skipped_closed,
            "invalid": counts.invalid,
            "total": counts.total,
        },
    }
    if items:
        written["items"] = [_item_json(result) for result in report.items or ()]
    return written


def _item_json(result: imports.ImportItemResult) -> dict[str, Any]:
    return {
        "number": result.number,
        "sourceSystem": result.source_system,
        "sourceId": result.source_id,
        "outcome": str(result.outcome),
        "taskId": result.task_id,
        "message": result.message,
        "closeReason": None if result.close_reason is None else str(result.close_reason),
        "reopenCondition": result.reopen_condition,
        "hubVersion": _version_json(result.hub_version),
        "incomingVersion": _version_json(result.incoming_version),
    }


def _version_json(version: imports.ImportedVersion | None) -> dict[str, Any] | None:
    if version is None:
        return None
    return {
        "kind": str(version.kind),
        "title": version.title,
        "outcome": version.outcome,
        "priority": version.priority,
        "acceptanceCriteria": list(version.acceptance_criteria),
        "labels": list(version.labels),
        "state": None if version.state is None else str(version.state),
        "revision": version.revision,
    }
