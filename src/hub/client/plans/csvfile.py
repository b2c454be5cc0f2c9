"""CSV with a header row, one item a row (docs/import-formats.md, "CSV").

The columns are named like the wire fields; `closeReason`, `closeNote`,
`reopenCondition` and `relatedTo` are the fields of `closed`, spelt as a task's. Only
`sourceId` and `title` are required columns; an empty cell is a field left out (the
server says which item lacks a required one). A list
(`acceptanceCriteria`, `prerequisites`, `labels`) is one cell, its entries separated by
`|`: criteria are sentences, and sentences use commas and semicolons where they almost
never use a bar; `\\|` is a bar inside an entry. An unknown column is refused, naming
the known ones, so a misspelt header never drops a column silently.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path

from hub.client.plans.items import Item, Located, PlanFileError, at_line

SCALARS = ("sourceSystem", "sourceId", "title", "outcome", "kind", "parent")
LISTS = ("acceptanceCriteria", "prerequisites", "labels")
CLOSED = {
    "closeReason": "reason",
    "closeNote": "note",
    "reopenCondition": "reopenCondition",
    "relatedTo": "relatedTo",
}
COLUMNS = (*SCALARS, "priority", *LISTS, *CLOSED)
REQUIRED = ("sourceId", "title")
SEPARATOR = "|"

_ENTRIES = re.compile(r"(?:\\.|[^|\\])+")


def read_csv(path: Path, default_system: str) -> Iterator[Located]:
    try:
        # utf-8-sig: spreadsheets write a byte order mark; newline="" as csv wants.
        text = path.open(encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise PlanFileError(path, "", f"cannot be read ({exc.strerror or exc})") from exc
    with text:
        rows = csv.reader(text, strict=True)
        try:
            header = next(rows, None)
        except csv.Error as exc:
            raise PlanFileError(path, "line 1", f"not CSV ({exc})") from None
        if header is None:
            raise PlanFileError(path, "line 1", "empty: a CSV plan starts with a header row")
        columns = _columns(path, header)
        line = rows.line_num + 1
        while True:
            try:
                row = next(rows, None)
            except csv.Error as exc:
                raise PlanFileError(path, f"line {line}", f"not CSV ({exc})") from None
            if row is None:
                return
            if any(cell.strip() for cell in row):
                yield Located(line, _item(path, line, columns, row, default_system))
            line = rows.line_num + 1


def _columns(path: Path, header: list[str]) -> list[str]:
    names = [name.strip() for name in header]
    unknown = [name for name in names if name not in COLUMNS]
    if unknown:
        raise PlanFileError(
            path,
            "line 1",
            f"unknown column {', '.join(map(repr, unknown))}; the columns are {', '.join(COLUMNS)}",
        )
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise PlanFileError(path, "line 1", f"column {', '.join(map(repr, twice))} appears twice")
    missing = [name for name in REQUIRED if name not in names]
    if missing:
        raise PlanFileError(
            path, "line 1", f"no {' or '.join(missing)} column: every item needs one"
        )
    return names


def _item(path: Path, line: int, columns: list[str], row: list[str], default: str) -> Item:
    if len(row) != len(columns):
        raise PlanFileError(
            path, f"line {line}", f"{len(row)} cells where the header has {len(columns)}"
        )
    cells = {name: cell.strip() for name, cell in zip(columns, row, strict=True)}
    where = at_line(line, cells.get("sourceId"))
    # An empty cell is a field left out, a required one too: the server says which
    # item lacks what (and `--partial` imports the others).
    item: Item = {"sourceSystem": cells.get("sourceSystem") or default}
    for name in SCALARS:
        if cells.get(name) and name != "sourceSystem":
            item[name] = cells[name].upper() if name == "kind" else cells[name]
    if cells.get("priority"):
        try:
            item["priority"] = int(cells["priority"])
        except ValueError:
            raise PlanFileError(
                path, where, f"priority {cells['priority']!r} is not a whole number"
            ) from None
    for name in LISTS:
        if cells.get(name):
            item[name] = split_list(cells[name])
    closed = {field: cells[column] for column, field in CLOSED.items() if cells.get(column)}
    if closed:
        if "reason" in closed:
            closed["reason"] = closed["reason"].upper()
        item["closed"] = closed
    return item


def split_list(cell: str) -> list[str]:
    """`a | b \\| c` -> ['a', 'b | c']: entries trimmed, empty ones dropped."""
    entries = (m.group(0).replace("\\|", "|").strip() for m in _ENTRIES.finditer(cell))
    return [entry for entry in entries if entry]
