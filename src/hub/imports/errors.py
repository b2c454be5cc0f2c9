"""Imports-specific refusals; each is a kind of the shared problem types."""

from __future__ import annotations

from collections.abc import Sequence

from hub.errors import ValidationFailed


def item_name(number: int, source_id: str | None) -> str:
    """How a refusal names an item: its 1-based position (a file's line) and source id."""
    return f"item {number}" + (f" ({source_id!r})" if source_id else "")


class InvalidItem(ValidationFailed):
    """An item of the import is refused: the whole import is (unless partial)."""

    def __init__(
        self, number: int, source_id: str | None, message: str, *, others: int = 0
    ) -> None:
        more = f" (and {others} more invalid item{'s' if others > 1 else ''})" if others else ""
        super().__init__("items", f"{item_name(number, source_id)}: {message}{more}")
        self.number = number
        self.source_id = source_id

    def details(self) -> dict[str, object]:
        return {**super().details(), "item": self.number, "sourceId": self.source_id}


class ImportCycle(ValidationFailed):
    """The items' prerequisites and parents wait for each other in a cycle."""

    def __init__(self, source_ids: Sequence[str]) -> None:
        around = " -> ".join([*source_ids, source_ids[0]])
        super().__init__(
            "items", f"prerequisites and parents form a cycle: {around} (each waits for the next)"
        )
        self.cycle = list(source_ids)

    def details(self) -> dict[str, object]:
        return {**super().details(), "cycle": self.cycle}


class UnreadableLine(ValidationFailed):
    """A line of a JSON Lines body that is not one JSON object."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__("body", f"line {line}: {message}")
        self.line = line

    def details(self) -> dict[str, object]:
        return {**super().details(), "line": self.line}
