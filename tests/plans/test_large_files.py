"""A plan file of any size is read an item at a time: what the readers hold stays flat
however big the file (docs/import-formats.md). Measured with tracemalloc, the peak of
Python allocations while every item is read; no clock is involved."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import pytest

from hub.client.plans import Plan

MIB = 1024 * 1024
# What a reader may hold at its peak: a read-ahead window, one item, the ids a Markdown
# or beads reader keeps. Far below the files' sizes.
FLAT = 2 * MIB


def _item(i: int) -> dict[str, Any]:
    return {
        "sourceId": f"t-{i}",
        "title": f"Task {i}",
        "outcome": "Something worth doing, said at length. " * 10,
        "acceptanceCriteria": ["It is done", "It is tested"],
        "prerequisites": [f"t-{i - 1}"] if i else [],
    }


def _jsonl(out: IO[str], count: int) -> None:
    for i in range(count):
        out.write(json.dumps(_item(i)) + "\n")


def _json(out: IO[str], count: int) -> None:
    out.write("[\n")
    for i in range(count):
        out.write((",\n" if i else "") + json.dumps(_item(i), indent=2))
    out.write("\n]\n")


def _csv(out: IO[str], count: int) -> None:
    out.write("sourceId,title,outcome,acceptanceCriteria,prerequisites\n")
    outcome = _item(0)["outcome"]
    for i in range(count):
        out.write(f't-{i},Task {i},"{outcome}",It is done|It is tested,t-{i - 1}\n')


def _markdown(out: IO[str], count: int) -> None:
    # Fewer, longer items: what is held per item is its id; the text is not kept.
    for i in range(count // 10):
        out.write(f"- [ ] Task {i} {{#t-{i}}}\n")
        for _ in range(10):
            out.write(f"  {_item(i)['outcome']}\n")
        out.write("  - It is done\n")


def _beads(out: IO[str], count: int) -> None:
    for i in range(count):
        issue = {
            "id": f"bd-{i:x}",
            "title": f"Task {i}",
            "description": _item(i)["outcome"],
            "status": "open",
            "priority": i % 5,
            "issue_type": "task",
            "dependencies": [
                {"issue_id": f"bd-{i:x}", "depends_on_id": f"bd-{i - 1:x}", "type": "blocks"}
            ]
            if i
            else [],
        }
        out.write(json.dumps(issue) + "\n")


def _github(out: IO[str], count: int) -> None:
    out.write("[")
    for i in range(count):
        issue = {
            "number": i + 1,
            "title": f"Issue {i}",
            "body": _item(i)["outcome"],
            "labels": [{"name": "bug"}],
            "state": "OPEN",
            "url": f"https://github.com/acme/hub/issues/{i + 1}",
        }
        out.write(("," if i else "") + json.dumps(issue))
    out.write("]")


WRITERS: dict[str, tuple[str, Callable[[IO[str], int], None]]] = {
    "jsonl": ("plan.jsonl", _jsonl),
    "json": ("plan.json", _json),
    "csv": ("plan.csv", _csv),
    "markdown": ("plan.md", _markdown),
    "beads": ("issues.jsonl", _beads),
    "github": ("issues.json", _github),
}


def peak_while_reading(path: Path, format: str) -> tuple[int, int]:
    """(items read, the peak of Python allocations while reading them)."""
    plan = Plan.open(path, format)
    tracemalloc.start()
    try:
        count = sum(1 for _ in plan.items())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return count, peak


@pytest.mark.parametrize("format", list(WRITERS))
def test_a_large_file_is_read_in_flat_memory(tmp_path: Path, format: str) -> None:
    name, writer = WRITERS[format]
    path = tmp_path / name
    with path.open("w", encoding="utf-8") as out:
        writer(out, 40_000)
    size = path.stat().st_size
    assert size > 15 * MIB
    count, peak = peak_while_reading(path, format)
    assert count == (4_000 if format == "markdown" else 40_000)
    assert peak < FLAT, f"{format}: {peak / MIB:.1f} MiB held to read {size / MIB:.0f} MiB"


@pytest.mark.slow
def test_a_100_mib_json_array_stays_flat(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    with path.open("w", encoding="utf-8") as out:
        _json(out, 200_000)
    assert path.stat().st_size > 100 * MIB
    count, peak = peak_while_reading(path, "json")
    assert count == 200_000
    assert peak < FLAT, f"{peak / MIB:.1f} MiB held"
