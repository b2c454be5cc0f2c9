"""GraphQL types of the imports module. `POST /api/imports` answers a report with the
same field names (`route`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.imports.enums import ImportOutcome
from hub.api.mapping import from_view
from hub.api.operations import read
from hub.api.work.enums import CloseReason, TaskKind, TaskState
from hub.imports import service as imports


@strawberry.type(
    description="A task's descriptive fields, as hub has them or as an item brings them."
)
class ImportedVersion:
    kind: TaskKind
    title: str
    outcome: str
    priority: int
    acceptance_criteria: list[str]
    labels: list[str]
    state: TaskState | None = strawberry.field(description="Hub's version only.")
    revision: int | None = strawberry.field(description="Hub's version only.")


@strawberry.type(description="What an import did with one item.")
class ImportItemResult:
    number: int = strawberry.field(description="The item's 1-based position: a file's line.")
    source_system: str | None
    source_id: str | None
    outcome: ImportOutcome
    task_id: strawberry.ID | None = strawberry.field(
        description="The item's task (none for a dry run's new task or an invalid item)."
    )
    message: str | None = strawberry.field(
        description="Why: a conflict's reason, a closed task's reason and note, an invalid "
        "item's error."
    )
    close_reason: CloseReason | None = strawberry.field(description="SKIPPED_CLOSED: why closed.")
    reopen_condition: str | None = strawberry.field(
        description="SKIPPED_CLOSED as DEFERRED: when it should come back."
    )
    hub_version: ImportedVersion | None = strawberry.field(
        description="CONFLICT: the task as hub has it (kept)."
    )
    incoming_version: ImportedVersion | None = strawberry.field(
        description="CONFLICT: the task as the item brings it (not applied)."
    )


@strawberry.type
class ImportCounts:
    created: int
    updated: int
    unchanged: int
    conflict: int
    skipped_closed: int
    invalid: int
    total: int


@strawberry.type(description="One import (or dry run): who, when, from what, what it did.")
class ImportReport:
    id: strawberry.ID
    project_id: strawberry.ID
    principal_id: strawberry.ID
    session_id: strawberry.ID | None
    created_at: datetime
    source: str = strawberry.field(description="Where the items came from (a file's name).")
    dry_run: bool = strawberry.field(description="Decided, reported, nothing else written.")
    partial: bool = strawberry.field(description="Invalid items reported, the rest imported.")
    counts: ImportCounts
    loaded: strawberry.Private[tuple[imports.ImportItemResult, ...] | None] = None

    @strawberry.field(
        description="Every item that was not UNCHANGED (those are only counted), in the "
        "import's order; `outcomes` keeps those with these outcomes."
    )
    async def items(
        self, info: Info[HubContext, Any], outcomes: list[ImportOutcome] | None = None
    ) -> list[ImportItemResult]:
        found = self.loaded
        if found is None:
            report_id = str(self.id)
            view = await read(info, lambda uow, _: imports.get_import_report(uow, report_id))
            found = view.items or ()
        wanted = set(outcomes or ())
        return [
            from_view(ImportItemResult, result)
            for result in found
            if not wanted or result.outcome in wanted
        ]


def report_of(view: imports.ImportReportView) -> ImportReport:
    return from_view(ImportReport, view, loaded=view.items)
