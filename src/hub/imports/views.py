"""What the imports module returns: a report, and the outcome of each item."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from hub.imports.vocabulary import ImportOutcome


@dataclass(frozen=True, slots=True)
class ImportedVersion:
    """A task's descriptive fields, as hub has them or as an item brings them (a
    conflict reports both)."""

    kind: str
    title: str
    outcome: str
    priority: int
    acceptance_criteria: tuple[str, ...]
    labels: tuple[str, ...]
    state: str | None = None  # hub's version only
    revision: int | None = None  # hub's version only


@dataclass(frozen=True, slots=True)
class ImportItemResult:
    """What happened to one item: `number` is its 1-based position (a file's line)."""

    number: int
    source_system: str | None
    source_id: str | None
    outcome: ImportOutcome
    task_id: str | None = None
    # Why: a conflict's reason, a closed task's reason and note, an invalid item's error.
    message: str | None = None
    close_reason: str | None = None
    reopen_condition: str | None = None
    hub_version: ImportedVersion | None = None  # a conflict's: the task as hub has it
    incoming_version: ImportedVersion | None = None  # a conflict's: as the item brings it


@dataclass(frozen=True, slots=True)
class ImportCounts:
    created: int
    updated: int
    unchanged: int
    conflict: int
    skipped_closed: int
    invalid: int

    @property
    def total(self) -> int:
        return (
            self.created + self.updated + self.unchanged + self.conflict
            + self.skipped_closed + self.invalid
        )  # fmt: skip


@dataclass(frozen=True)
class ImportReportView:
    """One import, or dry run. `items` lists every item that was not unchanged (those are
    only counted); None where a list of reports did not read them."""

    id: str
    project_id: str
    principal_id: str
    session_id: str | None
    created_at: datetime
    source: str
    dry_run: bool
    partial: bool
    counts: ImportCounts
    items: tuple[ImportItemResult, ...] | None = None
