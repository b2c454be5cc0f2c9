"""A stand-in for the hub's import route, for testing `hub import`'s side of the wire
on its own (docs/imports.md): `POST /api/imports` reads JSON Lines of wire items from
a streamed body and answers a report; `POST /graphql` answers `resolveProject`.

Its report has the shape of the real one (`counts`, `items` with each item's
`number`, `outcome`, `hubVersion` and `incomingVersion` for a conflict). It keeps what
the real route must: a bearer token, the Idempotency-Key (the same key
and body replay the first report, another body under it is IDEMPOTENCY_CONFLICT),
all-or-nothing unless partial, source ids matched on re-import. The outcomes it
answers are simple on purpose (CONFLICT and SKIPPED_CLOSED only for the source ids a
test names), and it records every request it saw, how its body arrived included.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hub.client.plans import WIRE_FIELDS

TOKEN = "hub_pat_stand-in-token"
PROJECT_ID = "prj_standin"


@dataclass
class Seen:
    """One import request as it arrived."""

    params: dict[str, str]
    headers: dict[str, str]
    chunks: int  # the body's pieces as the server read them
    items: list[dict[str, Any]]
    status: int = 0


@dataclass
class ImportStandIn:
    projects: set[str] = field(default_factory=lambda: {"hub", PROJECT_ID})
    # Source ids a test wants answered so: changed in hub, or closed there.
    conflicts: set[str] = field(default_factory=set)
    closed: dict[str, dict[str, str]] = field(default_factory=dict)
    # Answer the next import with a 503 after applying it: the answer is lost.
    lose_next: int = 0
    # Keep no items (a large file's test): count them only.
    count_only: bool = False
    seen: list[Seen] = field(default_factory=list)
    known: dict[tuple[str, str], str] = field(default_factory=dict)  # -> digest
    tasks: dict[tuple[str, str], str] = field(default_factory=dict)  # -> task id
    receipts: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    applied: int = 0  # imports that changed something

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/graphql", self._graphql, methods=["POST"]),
                Route("/api/imports", self._import, methods=["POST"]),
            ]
        )

    # --- routes --------------------------------------------------------------------

    async def _graphql(self, request: Request) -> Response:
        if request.headers.get("authorization") != f"Bearer {TOKEN}":
            return JSONResponse(
                {"errors": [{"message": "bad token", "extensions": {"code": "UNAUTHENTICATED"}}]}
            )
        body = await request.json()
        alias = body["variables"].get("alias")
        if alias in self.projects:
            found: dict[str, Any] = {"__typename": "Project", "id": PROJECT_ID}
        else:
            found = {
                "__typename": "NotFound",
                "code": "NOT_FOUND",
                "message": f"no project {alias!r}",
                "what": "project",
            }
        return JSONResponse({"data": {"resolveProject": found}})

    async def _import(self, request: Request) -> Response:
        seen = Seen(dict(request.query_params), dict(request.headers), 0, [])
        self.seen.append(seen)
        if request.headers.get("authorization") != f"Bearer {TOKEN}":
            return self._refuse(seen, 401, "UNAUTHENTICATED", "the token was not accepted")
        if request.headers.get("content-type") != "application/x-ndjson":
            return self._refuse(seen, 400, "VALIDATION_FAILED", "Content-Type: JSON Lines")
        digest = hashlib.sha256()
        rest = b""
        items: list[dict[str, Any]] = []
        count = 0
        async for piece in request.stream():
            if not piece:
                continue
            seen.chunks += 1
            digest.update(piece)
            *lines, rest = (rest + piece).split(b"\n")
            for line in lines:
                if line.strip():
                    count += 1
                    item = json.loads(line)
                    if not self.count_only:
                        items.append(item)
        seen.items = items
        key = request.headers.get("idempotency-key", "")
        dry_run = request.query_params.get("dryRun") == "true"
        partial = request.query_params.get("partial") == "true"
        receipt = self.receipts.get(key)
        if receipt is not None:
            if receipt[0] != digest.hexdigest():
                return self._refuse(
                    seen, 409, "IDEMPOTENCY_CONFLICT", f"key {key} was used for another import"
                )
            return self._answer(seen, {**receipt[1], "replay": True})
        if self.count_only:
            return self._answer(seen, {"id": "imp_big", "counts": {"created": count}, "items": []})
        rows = [self._row(i, item) for i, item in enumerate(items, start=1)]
        invalid = [row for row in rows if row["outcome"] == "INVALID"]
        if invalid and not partial:
            first = invalid[0]
            return self._refuse(
                seen,
                400,
                "VALIDATION_FAILED",
                f"items: item {first['number']} ({first['sourceId']!r}): {first['message']}",
            )
        if not dry_run:
            self._apply(items, rows)
        report = {
            "id": f"imp_{len(self.receipts) + 1}",
            "projectId": request.query_params.get("projectId"),
            "source": request.query_params.get("source"),
            "dryRun": dry_run,
            "partial": partial,
            "counts": _counts(rows),
            "items": rows,
        }
        if not dry_run:
            self.receipts[key] = (digest.hexdigest(), report)
        if self.lose_next > 0:
            self.lose_next -= 1
            seen.status = 503
            return Response("lost", status_code=503)
        return self._answer(seen, report)

    # --- outcomes ------------------------------------------------------------------

    def _row(self, index: int, item: dict[str, Any]) -> dict[str, Any]:
        source = (str(item.get("sourceSystem")), str(item.get("sourceId")))
        row: dict[str, Any] = {"number": index, "sourceSystem": source[0], "sourceId": source[1]}
        unknown = sorted(set(item) - set(WIRE_FIELDS))
        if unknown or not item.get("title"):
            why = f"unknown field {unknown[0]!r}" if unknown else "title: is required"
            return {**row, "outcome": "INVALID", "message": why}
        task = self.tasks.get(source)
        if source[1] in self.closed:
            return {**row, "outcome": "SKIPPED_CLOSED", "taskId": task, **self.closed[source[1]]}
        if source[1] in self.conflicts:
            return {
                **row,
                "outcome": "CONFLICT",
                "taskId": task,
                "message": "the task changed in hub since the last import",
                "incomingVersion": {"title": item["title"], "state": None},
                "hubVersion": {"title": f"{item['title']} (edited in hub)", "state": "OPEN"},
            }
        if source not in self.known:
            return {**row, "outcome": "CREATED"}
        same = self.known[source] == _digest(item)
        return {**row, "outcome": "UNCHANGED" if same else "UPDATED", "taskId": task}

    def _apply(self, items: list[dict[str, Any]], rows: list[dict[str, Any]]) -> None:
        changed = False
        for item, row in zip(items, rows, strict=True):
            source = (row["sourceSystem"], row["sourceId"])
            if row["outcome"] in ("CREATED", "UPDATED"):
                changed = True
                self.known[source] = _digest(item)
                self.tasks.setdefault(source, f"tsk_{len(self.tasks) + 1}")
                row["taskId"] = self.tasks[source]
        self.applied += changed

    # --- answers -------------------------------------------------------------------

    def _answer(self, seen: Seen, report: dict[str, Any]) -> Response:
        seen.status = 200
        return JSONResponse(report)

    def _refuse(self, seen: Seen, status: int, code: str, message: str) -> Response:
        seen.status = status
        return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def _digest(item: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(item, sort_keys=True).encode()).hexdigest()


def _counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    names = {
        "CREATED": "created",
        "UPDATED": "updated",
        "UNCHANGED": "unchanged",
        "CONFLICT": "conflict",
        "SKIPPED_CLOSED": "skippedClosed",
        "INVALID": "invalid",
    }
    counts = dict.fromkeys(names.values(), 0)
    for row in rows:
        counts[names[row["outcome"]]] += 1
    return counts
