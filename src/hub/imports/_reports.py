"""Import reports: stored, and read back.

A report row keeps the counts of every outcome and, in `items`, each item that was not
unchanged (a re-import of an unchanged file of 100,000 items stores its counts, not
100,000 entries), as compact JSON: one array of fields per item (`_FIELDS`). A replay of
a keyed import answers the stored report as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from sqlalchemy import insert, select

from hub.errors import NotFound
from hub.imports.tables import ImportReport
from hub.imports.views import (
    ImportCounts,
    ImportedVersion,
    ImportItemResult,
    ImportReportView,
)
from hub.imports.vocabulary import ImportOutcome
from hub.storage.base import table_of
from hub.storage.unit_of_work import UnitOfWork

_REPORTS = table_of(ImportReport)
# An ImportItemResult is stored as a JSON array of its fields in this order, the empty
# ones at the end left out (most items are `[number, system, id, outcome, task]`); a
# conflict's versions are arrays of ImportedVersion's fields in theirs.
_FIELDS = tuple(field.name for field in fields(ImportItemResult))
_VERSION_FIELDS = tuple(field.name for field in fields(ImportedVersion))
_VERSIONS = ("hub_version", "incoming_version")
_SUMMARY = [column for column in _REPORTS.c if column.name != "items"]


def counts_of(results: Sequence[ImportItemResult], unchanged: int) -> ImportCounts:
    tally = dict.fromkeys(ImportOutcome, 0)
    for result in results:
        tally[result.outcome] += 1
    return ImportCounts(
        created=tally[ImportOutcome.CREATED],
        updated=tally[ImportOutcome.UPDATED],
        unchanged=unchanged + tally[ImportOutcome.UNCHANGED],
        conflict=tally[ImportOutcome.CONFLICT],
        skipped_closed=tally[ImportOutcome.SKIPPED_CLOSED],
        invalid=tally[ImportOutcome.INVALID],
    )


def store_report(uow: UnitOfWork, report: ImportReportView) -> None:
    counts = report.counts
    uow.session.execute(
        insert(_REPORTS),
        {
            "id": report.id, "project_id": report.project_id,
            "principal_id": report.principal_id, "session_id": report.session_id,
            "created_at": report.created_at, "source": report.source,
            "dry_run": report.dry_run, "partial": report.partial,
            "created": counts.created, "updated": counts.updated,
            "unchanged": counts.unchanged, "conflicts": counts.conflict,
            "skipped_closed": counts.skipped_closed, "invalid": counts.invalid,
            "items": [_stored(result) for result in report.items or ()],
        },
    )  # fmt: skip


def _stored(result: ImportItemResult) -> list[Any]:
    values: list[Any] = [getattr(result, name) for name in _FIELDS]
    for position in (_FIELDS.index(name) for name in _VERSIONS):
        version = values[position]
        if version is not None:
            values[position] = [getattr(version, name) for name in _VERSION_FIELDS]
    while values[-1] is None:
        values.pop()
    return values


def _result(stored: list[Any]) -> ImportItemResult:
    values = dict(zip(_FIELDS, stored, strict=False))
    values["outcome"] = ImportOutcome(values["outcome"])
    for name in _VERSIONS:
        version = values.get(name)
        if version is not None:
            known = dict(zip(_VERSION_FIELDS, version, strict=False))
            known["acceptance_criteria"] = tuple(known["acceptance_criteria"])
            known["labels"] = tuple(known["labels"])
            values[name] = ImportedVersion(**known)
    return ImportItemResult(**values)


def _view(row: Any, items: Sequence[list[Any]] | None) -> ImportReportView:
    return ImportReportView(
        id=row.id,
        project_id=row.project_id,
        principal_id=row.principal_id,
        session_id=row.session_id,
        created_at=row.created_at,
        source=row.source,
        dry_run=row.dry_run,
        partial=row.partial,
        counts=ImportCounts(
            created=row.created,
            updated=row.updated,
            unchanged=row.unchanged,
            conflict=row.conflicts,
            skipped_closed=row.skipped_closed,
            invalid=row.invalid,
        ),
        items=None if items is None else tuple(_result(item) for item in items),
    )


def get_report(uow: UnitOfWork, report_id: str) -> ImportReportView:
    """A report with its items."""
    row = uow.session.execute(select(_REPORTS).where(_REPORTS.c.id == report_id)).first()
    if row is None:
        raise NotFound("import report", report_id)
    return _view(row, row.items)


def list_reports(
    uow: UnitOfWork, project_id: str, *, after: str | None, limit: int
) -> list[ImportReportView]:
    """A project's reports, newest first, without their items."""
    statement = select(*_SUMMARY).where(_REPORTS.c.project_id == project_id)
    if after is not None:
        statement = statement.where(_REPORTS.c.id < after)
    rows = uow.session.execute(statement.order_by(_REPORTS.c.id.desc()).limit(limit))
    return [_view(row, None) for row in rows]
