"""Inputs of the imports mutation: the items in the wire's shape (docs/imports.md)."""

from __future__ import annotations

from typing import Any

import strawberry

from hub.api.work.enums import CloseReason, TaskKind


@strawberry.input(description="The item is closed at its source: imported closed.")
class ImportClosedInput:
    reason: CloseReason
    note: str = ""
    reopen_condition: str | None = strawberry.field(default=None, description="DEFERRED needs it.")
    related_to: str | None = strawberry.field(
        default=None,
        description="The source id of the item that replaces it (SUPERSEDED and DUPLICATE "
        "need it), of the same source system.",
    )


@strawberry.input(description="One task from another system, by its stable source id.")
class ImportItemInput:
    source_system: str = strawberry.field(
        description="Where the item comes from (e.g. markdown:plan.md): scopes sourceId."
    )
    source_id: str = strawberry.field(description="Stable across runs: the item's identity.")
    title: str
    outcome: str = ""
    acceptance_criteria: list[str] = strawberry.field(
        default_factory=list,
        description="None given: the outcome, else the title, is its one criterion.",
    )
    kind: TaskKind | None = strawberry.field(
        default=None,
        description="IMPLEMENTATION unless other items name it as their parent (OBJECTIVE).",
    )
    priority: int = 0
    parent: str | None = strawberry.field(
        default=None, description="The source id of its parent item (same source system)."
    )
    prerequisites: list[str] = strawberry.field(
        default_factory=list,
        description="Source ids of the items it needs first (same source system): in this "
        "import, or imported before.",
    )
    labels: list[str] = strawberry.field(default_factory=list)
    closed: ImportClosedInput | None = None


@strawberry.input
class ImportTasksInput:
    project_id: strawberry.ID
    items: list[ImportItemInput]
    source: str = strawberry.field(default="", description="A label: the file's name.")
    dry_run: bool = strawberry.field(
        default=False, description="Decide and report; write nothing but the report."
    )
    partial: bool = strawberry.field(
        default=False,
        description="Report invalid items (INVALID) and import the rest, instead of "
        "refusing the whole import.",
    )
    idempotency_key: str | None = None


def wire_item(item: ImportItemInput) -> dict[str, Any]:
    """An input item as the wire's JSON object (`imports.read_item` reads either)."""
    closed = item.closed
    return {
        "sourceSystem": item.source_system,
        "sourceId": item.source_id,
        "title": item.title,
        "outcome": item.outcome,
        "acceptanceCriteria": list(item.acceptance_criteria),
        "kind": None if item.kind is None else item.kind.value,
        "priority": item.priority,
        "parent": item.parent,
        "prerequisites": list(item.prerequisites),
        "labels": list(item.labels),
        "closed": None
        if closed is None
        else {
            "reason": closed.reason.value,
            "note": closed.note,
            "reopenCondition": closed.reopen_condition,
            "relatedTo": closed.related_to,
        },
    }
