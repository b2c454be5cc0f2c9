"""A project's export, read over HTTP and written out: `hub export` (docs/exports.md).

`ExportApi.export_records` reads `GET /api/projects/{projectId}/export`, a JSON Lines
stream of `{"table": …, "row": {…}}` records, one at a time as they arrive, and checks
that it is whole: it opens with `_export` (of a format this client reads), every table
is described by a `_table` record before its rows, and it closes with `_end`, whose
counts must be the rows received. A stream cut short, or ended by the server's `_error`,
is a failure: nothing is written.

Two writers read it:

- `write_sqlite`: a self-contained SQLite file (through sqlite-utils): one table per
  record kind with its primary key, its foreign keys (`add_foreign_keys`, then an index
  on each), full-text search on the text people look for, views for the common
  questions, and `hub_export` saying what it is. Datasette opens it as it is.
- `write_wire_items`: the project's tasks as wire import items (the format `hub import`
  reads; docs/exports.md, "Moving tasks to another hub"), written from a scratch SQLite
  file built the same way, so neither writer holds the project in memory.

Both write to a scratch file beside the destination and move it into place only once
it is complete; an existing destination is replaced only when asked to.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

import httpx
import sqlite_utils

from hub.client.api import HubApi
from hub.client.errors import (
    ProblemError,
    RequestRejected,
    TransportFailure,
    Unauthenticated,
    UsageError,
)

# The stream's format this client reads (the server's `hub.exports.FORMAT`).
FORMAT: Final = 1
EXPORT_RECORD: Final = "_export"
TABLE_RECORD: Final = "_table"
END_RECORD: Final = "_end"
ERROR_RECORD: Final = "_error"

# An export may take a while to read on the server; only silence this long is a failure.
READ_TIMEOUT_SECONDS: Final = 300.0
_BATCH: Final = 1000

# Told of each row as it is written: (table, rows written so far in all).
Progress = Callable[[str, int], None]

_COLUMN_TYPES: Final[Mapping[str, type]] = {
    "integer": int,
    "boolean": int,
    "text": str,
    "datetime": str,
    "json": str,
}

# Full-text search over what people look for (sqlite-utils' FTS5 tables; Datasette
# offers a search box on each table that has one).
FTS_COLUMNS: Final[Mapping[str, tuple[str, ...]]] = {
    "tasks": ("title", "outcome"),
    "task_criteria": ("criteria",),
    "submissions": ("result", "handoff"),
    "checkpoints": ("summary",),
    "reviews": ("summary",),
    "findings": ("title", "detail", "remedy", "resolution"),
    "lesson_versions": ("statement", "explanation"),
    "rule_versions": ("text",),
    "events": ("kind", "payload"),
}

# The common questions, as views (docs/exports.md lists them with examples).
VIEWS: Final[Mapping[str, str]] = {
    # A prerequisite stops blocking once it is done, or closed as done elsewhere.
    "open_tasks": """
SELECT t.id, t.kind, t.title, t.state, t.priority, t.blocked_count,
  (SELECT count(*) FROM task_prerequisites p JOIN tasks b ON b.id = p.prerequisite_id
    WHERE p.task_id = t.id
      AND NOT (b.state = 'DONE' OR (b.state = 'CLOSED' AND b.close_reason = 'COMPLETED'))
  ) AS unfinished_prerequisites,
  (SELECT group_concat(b.id || ' ' || b.title || ' [' || b.state || ']', '; ')
     FROM task_prerequisites p JOIN tasks b ON b.id = p.prerequisite_id
    WHERE p.task_id = t.id
      AND NOT (b.state = 'DONE' OR (b.state = 'CLOSED' AND b.close_reason = 'COMPLETED'))
  ) AS blocked_by,
  t.parent_id, t.current_attempt_id, t.created_at, t.updated_at
FROM tasks t
WHERE t.state NOT IN ('DONE', 'CLOSED')
ORDER BY t.blocked_count > 0, t.priority DESC, t.created_at, t.id""",
    "tasks_by_state": """
SELECT kind, state, count(*) AS tasks FROM tasks GROUP BY kind, state ORDER BY kind, state""",
    "review_decisions": """
SELECT s.id AS submission_id, s.task_id, t.title AS task_title, s.outcome,
  s.created_at AS submitted_at, submitter.name AS submitted_by,
  count(r.id) AS reviews,
  coalesce(sum(r.decision = 'APPROVE' AND r.reviewer_kind = 'AGENT'), 0) AS agent_approvals,
  coalesce(sum(r.decision = 'APPROVE' AND r.reviewer_kind = 'HUMAN'), 0) AS human_approvals,
  coalesce(sum(r.decision = 'REJECT'), 0) AS rejections,
  (SELECT count(*) FROM findings f WHERE f.submission_id = s.id) AS findings,
  (SELECT count(*) FROM findings f WHERE f.submission_id = s.id AND f.resolved_at IS NULL
     AND f.severity IN ('BLOCKER', 'MAJOR')) AS unresolved_required_findings
FROM submissions s
JOIN tasks t ON t.id = s.task_id
LEFT JOIN principals submitter ON submitter.id = s.principal_id
LEFT JOIN reviews r ON r.submission_id = s.id
GROUP BY s.id
ORDER BY s.created_at, s.id""",
    "review_log": """
SELECT r.created_at, r.submission_id, r.task_id, t.title AS task_title, r.decision,
  r.reviewer_kind, p.name AS reviewer, r.summary,
  (SELECT count(*) FROM findings f WHERE f.review_id = r.id) AS findings
FROM reviews r
JOIN tasks t ON t.id = r.task_id
LEFT JOIN principals p ON p.id = r.principal_id
ORDER BY r.created_at, r.id""",
    "attempts_per_agent": """
SELECT p.id AS principal_id, p.name, p.kind,
  count(a.id) AS attempts,
  count(DISTINCT a.task_id) AS tasks,
  sum(a.state = 'ACTIVE') AS active,
  sum(a.state = 'SUBMITTED') AS submitted,
  sum(a.state = 'COMPLETED') AS completed,
  sum(a.state = 'RELINQUISHED') AS relinquished,
  sum(a.state = 'SUPERSEDED') AS superseded,
  (SELECT count(*) FROM submissions s WHERE s.principal_id = p.id) AS submissions,
  min(a.started_at) AS first_claim,
  max(a.started_at) AS last_claim
FROM principals p
JOIN attempts a ON a.principal_id = p.id
GROUP BY p.id
ORDER BY attempts DESC, p.name""",
    "claim_to_done": """
SELECT task_id, title, kind, attempts, first_claimed_at, done_at,
  round((julianday(done_at) - julianday(first_claimed_at)) * 24.0, 3) AS hours
FROM (
  SELECT t.id AS task_id, t.title, t.kind,
    (SELECT count(*) FROM attempts a WHERE a.task_id = t.id) AS attempts,
    (SELECT min(a.started_at) FROM attempts a WHERE a.task_id = t.id) AS first_claimed_at,
    coalesce(
      (SELECT max(e.occurred_at) FROM events e
        WHERE e.subject_id = t.id AND e.kind = 'task.done'),
      t.updated_at) AS done_at
  FROM tasks t
  WHERE t.state = 'DONE'
)
WHERE first_claimed_at IS NOT NULL
ORDER BY done_at, task_id""",
    "who_did_what": """
SELECT coalesce(p.name, e.actor_id, '(the hub)') AS actor, e.kind,
  count(*) AS events, min(e.occurred_at) AS first_at, max(e.occurred_at) AS last_at
FROM events e
LEFT JOIN principals p ON p.id = e.actor_id
GROUP BY actor, e.kind
ORDER BY actor, events DESC, e.kind""",
}


class ExportFailed(TransportFailure):
    """The export did not arrive whole (cut short, or ended by the server's `_error`);
    nothing was written. Reading changes nothing on the server: run it again."""

    code = "EXPORT_INCOMPLETE"

    def __init__(self, message: str) -> None:
        super().__init__(message, uncertain=False)


@dataclass
class ExportSummary:
    """What an export wrote: where, what, how many rows of each table."""

    path: Path
    project_id: str
    format: str
    exported_at: str
    tables: dict[str, int] = field(default_factory=dict)
    items: int | None = None  # wire items written (jsonl)
    # Parents, prerequisites and related tasks the wire format could not say (they name
    # a task of another source system): `(task source id, field, other task's id)`.
    dropped: list[tuple[str, str, str]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {
            "path": str(self.path),
            "projectId": self.project_id,
            "format": self.format,
            "exportedAt": self.exported_at,
            "tables": dict(sorted(self.tables.items())),
            "rows": sum(self.tables.values()),
        }
        if self.items is not None:
            value["items"] = self.items
            value["droppedReferences"] = [
                {"sourceId": source, "field": name, "taskId": other}
                for source, name, other in self.dropped
            ]
        return value


class ExportApi(HubApi):
    """`HubApi` with the export's stream."""

    def export_records(self, project_id: str) -> Iterator[dict[str, Any]]:
        """The export's records as they arrive, checked whole (module docstring)."""
        path = f"/api/projects/{quote(project_id, safe='')}/export"
        timeout = httpx.Timeout(30.0, read=READ_TIMEOUT_SECONDS)
        try:
            with self._http.stream("GET", path, timeout=timeout) as response:
                if response.status_code != 200:
                    response.read()
                    raise self._refusal(response)
                yield from _checked(_lines(response), project_id)
        except httpx.HTTPError as exc:
            raise ExportFailed(
                f"the export from {self.server} broke off ({type(exc).__name__}: {exc}); "
                "nothing was written"
            ) from exc

    def _refusal(self, response: httpx.Response) -> Exception:
        if response.status_code >= 500:
            return TransportFailure(
                f"{self.server} answered HTTP {response.status_code}", uncertain=False
            )
        try:
            refusal = response.json().get("error")
        except ValueError:
            refusal = None
        if not isinstance(refusal, dict) or not refusal.get("code"):
            return RequestRejected(f"HTTP {response.status_code}: {response.text[:200]}")
        code, message = str(refusal["code"]), str(refusal.get("message") or refusal["code"])
        if code == Unauthenticated.code:
            return Unauthenticated(message)
        details = {k: v for k, v in refusal.items() if k not in ("code", "message")}
        typename = "".join(word.capitalize() for word in code.split("_"))
        return ProblemError(typename, code, message, details)


def _lines(response: httpx.Response) -> Iterator[dict[str, Any]]:
    for line in response.iter_lines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise ExportFailed(f"the export holds a line that is not JSON ({exc})") from exc
        if not isinstance(record, dict) or not isinstance(record.get("table"), str):
            raise ExportFailed("the export holds a line that is not a {table, row} record")
        yield record


def _checked(records: Iterable[dict[str, Any]], project_id: str) -> Iterator[dict[str, Any]]:
    """The records, refusing a stream that is not a whole export of `project_id`."""
    counts: Counter[str] = Counter()
    described: set[str] = set()
    first = True
    for record in records:
        table, row = record["table"], record.get("row") or {}
        if first:
            if table != EXPORT_RECORD:
                raise ExportFailed("the stream does not start like an export of hub")
            if row.get("format") != FORMAT:
                raise UsageError(
                    f"the server sends exports of format {row.get('format')}; this hub "
                    f"command reads format {FORMAT}: use a hub of the server's version"
                )
            if row.get("project_id") != project_id:
                raise ExportFailed("the server sent the export of another project")
            first = False
        elif table == ERROR_RECORD:
            raise ExportFailed(
                f"the server could not finish the export ({row.get('message')}); nothing "
                "was written: run it again"
            )
        elif table == END_RECORD:
            expected = {str(k): int(v) for k, v in (row.get("tables") or {}).items()}
            if expected != dict(counts):
                raise ExportFailed("the export's rows do not add up to what the server sent")
            yield record
            return
        elif table == TABLE_RECORD:
            described.add(str(row.get("name")))
        elif table not in described:
            raise ExportFailed(f"the export sent rows of {table} before describing it")
        else:
            counts[table] += 1
        yield record
    if first:
        raise ExportFailed("the server sent an empty export")
    raise ExportFailed("the export was cut short (no end record); nothing was written")


# --- SQLite ---------------------------------------------------------------------------


class _Builder:
    """Writes records into a SQLite file: tables as described, rows in batches."""

    def __init__(self, path: Path, progress: Progress | None) -> None:
        self.db = sqlite_utils.Database(path)
        self.db.execute("PRAGMA synchronous=OFF")  # a scratch file until it is complete
        self.progress = progress
        self.described: dict[str, dict[str, Any]] = {}
        self.pending: list[dict[str, Any]] = []
        self.pending_table = ""
        self.rows = 0
        self.meta: dict[str, Any] = {}
        self.tables: dict[str, int] = {}

    def take(self, records: Iterable[dict[str, Any]]) -> None:
        for record in records:
            table, row = record["table"], record.get("row") or {}
            if table == EXPORT_RECORD:
                self.meta = dict(row)
            elif table == TABLE_RECORD:
                self._create(row)
            elif table == END_RECORD:
                self._flush()
                self.tables = {str(k): int(v) for k, v in (row.get("tables") or {}).items()}
            else:
                if table != self.pending_table or len(self.pending) >= _BATCH:
                    self._flush()
                    self.pending_table = table
                self.pending.append(row)
                self.rows += 1
                if self.progress is not None:
                    self.progress(table, self.rows)
        self._flush()

    def _create(self, description: Mapping[str, Any]) -> None:
        name = str(description["name"])
        self.described[name] = dict(description)
        columns = {
            str(column): _COLUMN_TYPES.get(str(kind), str)
            for column, kind in description["columns"].items()
        }
        key = [str(k) for k in description.get("primary_key") or []]
        self.db.table(name).create(
            columns, pk=(key[0] if len(key) == 1 else tuple(key)) if key else None
        )

    def _flush(self) -> None:
        if self.pending:
            self.db.table(self.pending_table).insert_all(self.pending)
            self.pending = []

    def link(self) -> None:
        """Foreign keys to every table the file has (a reference to a record the export
        does not hold, a token for one, is left out), each indexed."""
        wanted = []
        for name, description in self.described.items():
            for column, other, other_column in description.get("references") or []:
                if other in self.described:
                    wanted.append((name, column, other, other_column))
        if wanted:
            self.db.add_foreign_keys(wanted)
        self.db.index_foreign_keys()

    def search(self) -> None:
        for name, columns in FTS_COLUMNS.items():
            described = self.described.get(name)
            if described is None or not set(columns) <= set(described["columns"]):
                continue
            self.db.table(name).enable_fts(columns, create_triggers=False)

    def views(self) -> None:
        for name, sql in VIEWS.items():
            self.db.create_view(name, sql.strip(), replace=True)

    def stamp(self, server: str) -> None:
        self.db.table("hub_export").insert(
            {
                "project_id": self.meta.get("project_id"),
                "exported_at": self.meta.get("exported_at"),
                "hub_version": self.meta.get("hub_version"),
                "format": self.meta.get("format"),
                "server": server,
                "rows": self.rows,
                "tables": json.dumps(dict(sorted(self.tables.items()))),
            },
            pk="project_id",
        )

    def close(self) -> None:
        self.db.close()


def write_sqlite(
    records: Iterable[dict[str, Any]],
    destination: Path,
    *,
    server: str,
    force: bool = False,
    progress: Progress | None = None,
) -> ExportSummary:
    """The export as a SQLite file at `destination` (module docstring)."""
    _refuse_existing(destination, force)
    with _scratch_beside(destination) as scratch:
        builder = _Builder(scratch, progress)
        try:
            builder.take(records)
            builder.link()
            builder.search()
            builder.views()
            builder.stamp(server)
        finally:
            builder.close()
        _move_into_place(scratch, destination, force)
    return _summary(builder, destination, "sqlite")


# --- wire import items ----------------------------------------------------------------


def write_wire_items(
    records: Iterable[dict[str, Any]],
    destination: Path,
    *,
    force: bool = False,
    progress: Progress | None = None,
) -> ExportSummary:
    """The project's tasks as wire import items, one JSON object a line (module
    docstring; docs/exports.md, "Moving tasks to another hub")."""
    _refuse_existing(destination, force)
    count = 0
    dropped: list[tuple[str, str, str]] = []
    # The scratch database beside the destination: /tmp may be a small memory disk.
    with tempfile.TemporaryDirectory(prefix=".hub-export-", dir=destination.parent) as folder:
        builder = _Builder(Path(folder) / "export.db", progress)
        try:
            builder.take(records)
            project_id = str(builder.meta.get("project_id"))
            with _scratch_beside(destination) as scratch:
                with scratch.open("w", encoding="utf-8") as out:
                    for item in wire_items(builder.db, project_id, dropped):
                        out.write(json.dumps(item, ensure_ascii=False) + "\n")
                        count += 1
                    out.flush()
                    os.fsync(out.fileno())
                _move_into_place(scratch, destination, force)
        finally:
            builder.close()
    summary = _summary(builder, destination, "jsonl")
    summary.items = count
    summary.dropped = dropped
    return summary


def wire_items(
    db: sqlite_utils.Database, project_id: str, dropped: list[tuple[str, str, str]]
) -> Iterator[dict[str, Any]]:
    """Each task of the export as a wire import item, in the order the tasks were made
    (a parent and a prerequisite are made before the tasks that name them).

    The tasks the workflow makes from a submission (its reviews and integrations) are
    not plans and are left out. A task keeps its own source system and id when it has
    them; otherwise its source system is `hub:<project id>` and its source id its id in
    this hub. A parent, prerequisite or related task is named by its source id, which
    the wire format resolves within one source system: one of another system cannot be
    said, and is reported in `dropped` instead."""
    hub_system = f"hub:{project_id}"
    identities: dict[str, tuple[str, str]] = {}
    for row in db.query("SELECT id, source_system, source_id FROM tasks"):
        if row["source_system"] and row["source_id"]:
            identities[row["id"]] = (row["source_system"], row["source_id"])
        else:
            identities[row["id"]] = (hub_system, row["id"])
    labels = _labels_of(db)
    for task in db.query(
        "SELECT t.*, c.criteria AS current_criteria FROM tasks t LEFT JOIN task_criteria c"
        " ON c.task_id = t.id AND c.revision = t.criteria_revision"
        " WHERE t.subject_submission_id IS NULL ORDER BY t.created_at, t.id"
    ):
        system, source_id = identities[task["id"]]
        named = functools.partial(_named, identities, dropped, system, source_id)
        item: dict[str, Any] = {
            "sourceSystem": system,
            "sourceId": source_id,
            "title": task["title"],
            "kind": task["kind"],
            "priority": task["priority"],
        }
        if task["outcome"]:
            item["outcome"] = task["outcome"]
        criteria = json.loads(task["current_criteria"] or "[]")
        if criteria:
            item["acceptanceCriteria"] = criteria
        parent = named(task["parent_id"], "parent")
        if parent is not None:
            item["parent"] = parent
        prerequisites = [
            found
            for row in db.query(
                "SELECT p.prerequisite_id FROM task_prerequisites p JOIN tasks b"
                " ON b.id = p.prerequisite_id WHERE p.task_id = ? ORDER BY b.created_at, b.id",
                [task["id"]],
            )
            if (found := named(row["prerequisite_id"], "prerequisites")) is not None
        ]
        if prerequisites:
            item["prerequisites"] = prerequisites
        if labels.get(task["id"]):
            item["labels"] = labels[task["id"]]
        closed = _closed(db, task, project_id, named)
        if closed is not None:
            item["closed"] = closed
        yield item


def _named(
    identities: Mapping[str, tuple[str, str]],
    dropped: list[tuple[str, str, str]],
    system: str,
    source_id: str,
    other: str | None,
    what: str,
) -> str | None:
    """The source id a task of `system` names `other` by, or None: `other` is of another
    source system (noted in `dropped`), or there is none."""
    if other is None:
        return None
    other_system, other_source = identities.get(other, ("", ""))
    if other_system != system:
        dropped.append((source_id, what, other))
        return None
    return other_source


def _closed(
    db: sqlite_utils.Database,
    task: Mapping[str, Any],
    project_id: str,
    named: Callable[[str | None, str], str | None],
) -> dict[str, Any] | None:
    """A done task is, for another hub, closed as done elsewhere (COMPLETED); a closed
    one keeps its reason, note, reopen condition and, for a duplicate or superseded one,
    the task that replaces it."""
    if task["state"] == "DONE":
        return {"reason": "COMPLETED", "note": f"done in hub: project {project_id}, {task['id']}"}
    if task["state"] != "CLOSED":
        return None
    closed: dict[str, Any] = {"reason": task["close_reason"], "note": task["close_note"] or ""}
    if task["reopen_condition"]:
        closed["reopenCondition"] = task["reopen_condition"]
    related = None
    if task["close_reason"] == "DUPLICATE":
        related = _one(db, "SELECT other_id FROM task_links WHERE task_id = ? AND kind = ?",
                       task["id"], "DUPLICATE_OF")  # fmt: skip
    elif task["close_reason"] == "SUPERSEDED":
        related = _one(db, "SELECT task_id FROM task_links WHERE other_id = ? AND kind = ?",
                       task["id"], "SUPERSEDES")  # fmt: skip
    found = named(related, "closed.relatedTo")
    if found is not None:
        closed["relatedTo"] = found
    return closed


def _one(db: sqlite_utils.Database, sql: str, *params: str) -> str | None:
    for row in db.query(sql + " ORDER BY created_at LIMIT 1", list(params)):
        return str(next(iter(row.values())))
    return None


def _labels_of(db: sqlite_utils.Database) -> dict[str, list[str]]:
    """Each task's labels, from the export's `task_labels` table (`task_id`, `label`) or
    a `labels` column of `tasks` (a JSON list), whichever the server has."""
    found: dict[str, list[str]] = {}
    names = set(db.table_names())
    if "task_labels" in names and {"task_id", "label"} <= set(db.table("task_labels").columns_dict):
        for row in db.query("SELECT task_id, label FROM task_labels ORDER BY task_id, label"):
            found.setdefault(row["task_id"], []).append(row["label"])
    elif "labels" in db.table("tasks").columns_dict:
        for row in db.query("SELECT id, labels FROM tasks WHERE labels IS NOT NULL"):
            value = json.loads(row["labels"]) if isinstance(row["labels"], str) else []
            if isinstance(value, list) and value:
                found[row["id"]] = [str(v) for v in value]
    return found


# --- files ----------------------------------------------------------------------------


def _refuse_existing(destination: Path, force: bool) -> None:
    if destination.exists() and not force:
        raise UsageError(f"{destination} exists: pass --force to replace it")
    if destination.is_dir():
        raise UsageError(f"{destination} is a folder: name the file to write")
    if not destination.parent.is_dir():
        raise UsageError(f"{destination.parent} is not a folder")


@contextlib.contextmanager
def _scratch_beside(destination: Path) -> Iterator[Path]:
    """A new file beside `destination` (the same file system, so moving it is a rename),
    removed if anything goes wrong before it is moved into place."""
    handle, name = tempfile.mkstemp(prefix=f".{destination.name}.", dir=destination.parent)
    os.close(handle)
    scratch = Path(name)
    scratch.unlink()  # sqlite-utils and open() make it anew
    try:
        yield scratch
    finally:
        scratch.unlink(missing_ok=True)


def _move_into_place(scratch: Path, destination: Path, force: bool) -> None:
    if force:
        os.replace(scratch, destination)
        return
    try:
        os.link(scratch, destination)  # never replaces a file that appeared meanwhile
    except FileExistsError:
        raise UsageError(f"{destination} exists: pass --force to replace it") from None
    except OSError:
        # A file system without hard links: the check and the move are two steps there.
        if destination.exists():
            raise UsageError(f"{destination} exists: pass --force to replace it") from None
        os.replace(scratch, destination)
        return
    scratch.unlink()


def _summary(builder: _Builder, destination: Path, kind: str) -> ExportSummary:
    return ExportSummary(
        path=destination,
        project_id=str(builder.meta.get("project_id")),
        format=kind,
        exported_at=str(builder.meta.get("exported_at")),
        tables=dict(builder.tables),
    )
