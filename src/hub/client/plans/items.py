"""What every plan reader yields and how it refuses a file.

An item is a dict in the import wire format (docs/imports.md): the keys below and no
others (hub's own formats are passed on as written: the server refuses what it does
not know). Readers yield `Located` items (the item and the line it starts on) so a refusal,
by the reader or later by the server, can name the line of the file a person edits.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from hub.client.errors import UsageError

Item = dict[str, Any]
# Told something a person should know about the file that does not stop the import.
Warn = Callable[[str], None]

WIRE_FIELDS = (
    "sourceSystem",
    "sourceId",
    "title",
    "outcome",
    "acceptanceCriteria",
    "kind",
    "priority",
    "parent",
    "prerequisites",
    "labels",
    "closed",
)


class Located(NamedTuple):
    line: int  # 1-based: where the item starts in its file
    item: Item


class PlanFileError(UsageError):
    """The file cannot be read as a plan of its format: one line naming the file, where
    in it (a line, or an item and its line) and why. Nothing was sent."""

    code = "PLAN_FILE"

    def __init__(self, path: Path, where: str, reason: str) -> None:
        place = f"{path}, {where}" if where else str(path)
        super().__init__(f"{place}: {reason}")
        self.path = path
        self.where = where
        self.reason = reason


def ignore(_: str) -> None:
    """The default `Warn`: nobody is listening."""


def at_line(line: int, source_id: object = None) -> str:
    """Where an item is, for a refusal: its line, and its source id when known."""
    if isinstance(source_id, str) and source_id:
        return f"line {line} ({source_id})"
    return f"line {line}"


def check_wire_item(path: Path, line: int, value: object) -> Item:
    """A wire item as hub's own formats write it: a JSON object. Its fields are the
    server's to judge (an unknown field, a missing title…), item by item, so that
    `--partial` imports the rest; the command line names the line of an item the
    server refuses."""
    if not isinstance(value, dict):
        raise PlanFileError(
            path, f"line {line}", f"an item must be a JSON object, not {_json_type(value)}"
        )
    return value


def with_source_system(items: Iterable[Located], override: str | None) -> Iterator[Located]:
    """Items with `--source-system` applied to every one of them, when given."""
    for located in items:
        if override is not None:
            located.item["sourceSystem"] = override
        yield located


def slug(text: str) -> str:
    """A source id made from a title: lower case, words joined by '-', letters of any
    script kept, accents dropped."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return re.sub(r"[\W_]+", "-", plain.lower()).strip("-")[:80].strip("-")


def _json_type(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"
