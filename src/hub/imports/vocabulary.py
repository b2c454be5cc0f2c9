"""The imports module's vocabulary, declared once: the report's outcomes, the events it
appends and the operation's name in the credential table and the receipts."""

from __future__ import annotations

from enum import StrEnum


class ImportOutcome(StrEnum):
    """What an import did with one item (docs/imports.md, "Outcomes")."""

    CREATED = "CREATED"  # a new source id: a new task
    UPDATED = "UPDATED"  # changed since the last import; the task was free to change
    UNCHANGED = "UNCHANGED"  # as last imported: nothing written
    # Changed since the last import, but the task changed in hub since then, is under
    # work or done: both versions reported, hub's kept.
    CONFLICT = "CONFLICT"
    # The task is closed in hub: never re-created or reopened by an import.
    SKIPPED_CLOSED = "SKIPPED_CLOSED"
    INVALID = "INVALID"  # refused (a partial import only: the rest went in)


class ImportEvent(StrEnum):
    """The events the imports module appends."""

    IMPORT_COMPLETED = "import.completed"


# The operation's name: its row in the credential table (the GraphQL mutation and
# `POST /api/imports` alike) and its idempotency receipts.
IMPORT_TASKS = "importTasks"
