"""Which reader reads a file, and the source system its items get.

The format is `--format` when given; otherwise the extension says (.json, .jsonl or
.ndjson, .csv, .md or .markdown), and for JSON files the first element says which tool
wrote it: `gh issue list --json …` (an array of issues with a number and an issue URL)
is `github`, a JSON Lines file in a `.beads` folder, or whose first line is an issue
with an id and a status or type but no source id, is `beads`. Recognising them costs
one element read; a file of hub's own items is never mistaken for either, since those
have a `sourceId`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from hub.client.errors import UsageError
from hub.client.plans.beads import looks_like_beads, read_beads
from hub.client.plans.csvfile import read_csv
from hub.client.plans.github import SYSTEM as GITHUB_SYSTEM
from hub.client.plans.github import looks_like_github, read_github
from hub.client.plans.items import Item, Located, Warn, ignore, with_source_system
from hub.client.plans.jsonfile import array_values, first_value, hub_items, line_values
from hub.client.plans.markdown import read_markdown


class Format(StrEnum):
    JSON = "json"
    JSONL = "jsonl"
    CSV = "csv"
    MARKDOWN = "markdown"
    GITHUB = "github"
    BEADS = "beads"


DESCRIPTIONS = {
    Format.JSON: "a JSON array of hub import items",
    Format.JSONL: "hub import items, one JSON object a line",
    Format.CSV: "a header row naming the item fields, one item a row",
    Format.MARKDOWN: "a checklist: - [ ] open, - [x] done, nesting for sub-items",
    Format.GITHUB: "`gh issue list --json number,title,body,labels,state,url`",
    Format.BEADS: "`.beads/issues.jsonl` of the bd tool",
}
EXTENSIONS = {
    ".json": Format.JSON,
    ".jsonl": Format.JSONL,
    ".ndjson": Format.JSONL,
    ".csv": Format.CSV,
    ".md": Format.MARKDOWN,
    ".markdown": Format.MARKDOWN,
}


def known_formats() -> str:
    return "; ".join(f"{f.value} ({DESCRIPTIONS[f]})" for f in Format)


def parse_format(name: str) -> Format:
    """The format `--format` names, or a refusal listing the known ones."""
    try:
        return Format(name.strip().lower())
    except ValueError:
        raise UsageError(f"unknown format {name!r}: the formats are {known_formats()}") from None


def guess_format(path: Path) -> Format:
    """The format of a file given without `--format` (module docstring)."""
    found = EXTENSIONS.get(path.suffix.lower())
    if found is None:
        raise UsageError(
            f"cannot tell the format of {path} from its name: pass --format, one of "
            f"{known_formats()}"
        )
    if found is Format.JSON and looks_like_github(first_value(path, array=True)):
        return Format.GITHUB
    if found is Format.JSONL and (
        path.resolve().parent.name == ".beads" or looks_like_beads(first_value(path, array=False))
    ):
        return Format.BEADS
    return found


@dataclass(frozen=True)
class Plan:
    """A file to import, read by its format's reader; `--source-system` applied."""

    path: Path
    format: Format
    source_system: str | None = None  # --source-system: every item's, when given

    @classmethod
    def open(cls, path: Path, format: str | None = None, source_system: str | None = None) -> Plan:
        if not path.is_file():
            raise UsageError(f"{path}: no such file")
        chosen = parse_format(format) if format is not None else guess_format(path)
        return cls(path, chosen, source_system)

    def located(self, warn: Warn = ignore) -> Iterator[Located]:
        """The items with the line each starts on, read as they are needed."""
        name = self.path.name
        match self.format:
            case Format.JSON:
                items = hub_items(self.path, array_values(self.path), f"file:{name}")
            case Format.JSONL:
                items = hub_items(self.path, line_values(self.path), f"file:{name}")
            case Format.CSV:
                items = read_csv(self.path, f"file:{name}")
            case Format.MARKDOWN:
                items = read_markdown(self.path, f"markdown:{name}", warn)
            case Format.GITHUB:
                items = read_github(self.path, GITHUB_SYSTEM)
            case Format.BEADS:
                items = read_beads(self.path, self.source_system, warn)
        return with_source_system(items, self.source_system)

    def items(self, warn: Warn = ignore) -> Iterator[Item]:
        """The wire items, one at a time."""
        return (located.item for located in self.located(warn))
