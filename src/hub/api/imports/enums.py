"""GraphQL enums of the imports module: its vocabulary (`hub.imports.vocabulary`),
exposed as declared there (the same names, values and order)."""

from __future__ import annotations

import strawberry

from hub.imports.vocabulary import ImportOutcome

strawberry.enum(
    ImportOutcome,
    description='What an import did with an item (docs/imports.md, "Outcomes"): CREATED a '
    "task; UPDATED its task (changed since the last import, the task free to change); "
    "UNCHANGED (nothing written); CONFLICT (changed, but its task changed in hub since the "
    "last import, is under work or done: both versions reported, hub's kept); "
    "SKIPPED_CLOSED (its task is closed in hub: never re-created or reopened); INVALID "
    "(refused; a partial import only).",
)

__all__ = ["ImportOutcome"]
