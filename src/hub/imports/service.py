"""The imports module's operations: importing tasks, and reading the reports.

`import_tasks` is what the GraphQL mutation `importTasks` and `POST /api/imports` run
(docs/imports.md). One transaction: every item checked and given its outcome
(`_plan`), then the new tasks made and the changed ones edited through the work module
(`_apply`), the import states and the report stored (`_reports`). A dry run decides the
same and stores only its report (and the key's receipt): no task, edge, criteria, label,
import state or event. Imports of one project run one at a time (a lock per project on
PostgreSQL; SQLite's single writer already does it), so two imports of the same new
items never both create them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from sqlalchemy import text

from hub.errors import (
    Conflict,
    InvalidTransition,
    NotFound,
    PermissionDenied,
    QuotaExceeded,
    ValidationFailed,
    raises,
)
from hub.events.service import About, record_event
from hub.idempotency import service as idempotency
from hub.idempotency.service import Keyed
from hub.identity.views import Actor, require_full_credential
from hub.ids import new_id
from hub.imports import _reports as reports
from hub.imports import tables
from hub.imports._apply import carry_out, write_states
from hub.imports._items import (
    ImportClosure,
    ImportItem,
    batch_digest,
    fingerprint,
    read_item,
)
from hub.imports._plan import plan_import
from hub.imports.views import ImportCounts, ImportedVersion, ImportItemResult, ImportReportView
from hub.imports.vocabulary import IMPORT_TASKS, ImportEvent, ImportOutcome
from hub.inputs import clean_text
from hub.projects import service as projects
from hub.storage.export import ExportRecord, export_tables, project_tables
from hub.storage.unit_of_work import UnitOfWork

MAX_SOURCE_LABEL = 200
_IMPORT_LOCK = text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))")


@dataclass(frozen=True)
class ImportRequest:
    """An import: the items (`read_item` makes them from the wire's objects), a label
    saying where they came from (a file's name), whether to write nothing (`dry_run`) and
    whether invalid items are reported rather than refusing the whole import (`partial`).
    `items_digest`: a digest of the body the items were read from, if the caller took
    one (the HTTP route hashes the bytes as they stream); else one of the items."""

    project_id: str
    items: Sequence[ImportItem]
    source: str = ""
    dry_run: bool = False
    partial: bool = False
    idempotency_key: str | None = None
    items_digest: str | None = None


@raises(
    NotFound,
    PermissionDenied,
    Conflict,
    InvalidTransition,
    ValidationFailed,
    QuotaExceeded,
    *idempotency.KEYED,
)
def import_tasks(uow: UnitOfWork, actor: Actor, request: ImportRequest) -> Keyed[ImportReportView]:
    """Import the items (module docstring); a keyed retry answers the first's report."""
    fingerprints = [fingerprint(item) for item in request.items]
    fingerprinted = {
        "project_id": request.project_id,
        "source": request.source,
        "dry_run": request.dry_run,
        "partial": request.partial,
        "items": request.items_digest or batch_digest(request.items, fingerprints),
    }
    return idempotency.run_keyed(
        uow,
        actor,
        IMPORT_TASKS,
        request.idempotency_key,
        fingerprinted,
        authorize=lambda: require_full_credential(actor),
        replay=lambda _, prior: reports.get_report(uow, prior["report_id"]),
        execute=lambda _: _import(uow, actor, request, fingerprints),
        receipt=lambda report: {"report_id": report.id},
    )


def _import(
    uow: UnitOfWork, actor: Actor, request: ImportRequest, fingerprints: Sequence[str]
) -> ImportReportView:
    projects.ensure_project_exists(uow, request.project_id)
    source = clean_text("source", request.source, MAX_SOURCE_LABEL, required=False)
    limit = uow.settings.import_max_items
    if len(request.items) > limit:
        raise QuotaExceeded(
            f"an import holds at most {limit} items (HUB_IMPORT_MAX_ITEMS); this one has "
            f"{len(request.items)}: split it"
        )
    if uow.dialect == "postgresql":
        uow.session.execute(_IMPORT_LOCK, {"key": f"hub:imports:{request.project_id}"})
    plan = plan_import(
        uow, request.project_id, request.items, fingerprints, partial=request.partial
    )
    report_id = new_id("imp")
    carried = carry_out(
        uow,
        actor,
        request.project_id,
        plan,
        dry_run=request.dry_run,
        payload={"importReport": report_id},
    )
    del plan
    report = ImportReportView(
        id=report_id,
        project_id=request.project_id,
        principal_id=actor.principal_id,
        session_id=actor.session_id,
        created_at=uow.now(),
        source=source,
        dry_run=request.dry_run,
        partial=request.partial,
        counts=reports.counts_of(carried.results, carried.unchanged),
        items=tuple(carried.results),
    )
    reports.store_report(uow, report)
    counts = report.counts
    if not request.dry_run:
        write_states(uow, request.project_id, report_id, carried)
    if not request.dry_run and (counts.created or counts.updated):
        # Only an import that changed tasks is an event (theirs are recorded with them);
        # a re-import of an unchanged file writes its report row and nothing else.
        record_event(
            uow,
            ImportEvent.IMPORT_COMPLETED,
            About(request.project_id, report_id),
            by=actor,
            payload={
                "source": source, "created": counts.created, "updated": counts.updated,
                "unchanged": counts.unchanged, "conflict": counts.conflict,
                "skippedClosed": counts.skipped_closed, "invalid": counts.invalid,
            },
        )  # fmt: skip
    return report


def get_import_report(uow: UnitOfWork, report_id: str) -> ImportReportView:
    """A report, with its items (every item that was not unchanged)."""
    return reports.get_report(uow, report_id)


def list_import_reports(
    uow: UnitOfWork, *, project_id: str, after: str | None = None, limit: int = 50
) -> list[ImportReportView]:
    """A project's reports, newest first (without their items)."""
    projects.ensure_project_exists(uow, project_id)
    return reports.list_reports(uow, project_id, after=after, limit=limit)


def export_rows(uow: UnitOfWork, project_id: str) -> Iterator[ExportRecord]:
    """The project's import reports and each source item's import state, for an export
    (docs/exports.md)."""
    return export_tables(
        uow,
        project_id,
        project_tables(tables),
        # Named without a foreign key in the schema; the export says what it names.
        references={"import_sources": {"report_id": "import_reports"}},
    )


__all__ = [
    "IMPORT_TASKS",
    "ImportClosure",
    "ImportCounts",
    "ImportItem",
    "ImportItemResult",
    "ImportOutcome",
    "ImportReportView",
    "ImportRequest",
    "ImportedVersion",
    "export_rows",
    "get_import_report",
    "import_tasks",
    "list_import_reports",
    "read_item",
]
