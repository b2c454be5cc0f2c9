"""An import of many tasks over HTTP, then the same file again, then with 1 % changed,
beside the floor: sqlite-utils writing the same rows and edges into bare tables.

`--items` items (default 100,000) are written to a JSON Lines file from a fixed seed, the
wire's items (docs/imports.md, "The item"): a title, a criterion, a label, and
`--items` prerequisite edges (each item after the first needs one earlier item, chosen at
random, and the last needs a second), so the prerequisites form a random DAG. Then, in
the same run, on the same disk:

- the floor: the file read and parsed, and its rows (one per item, its criteria and
  labels as JSON) and edges inserted by sqlite-utils (`insert_all`) into two bare tables
  of a new SQLite file (WAL, as hub's), in one transaction;
- the first import: `hub import plan.jsonl --project P --json`, the command a team runs,
  against a real uvicorn process serving hub (`bench/claims.py`'s `served`) on an empty
  project, timed from the command's start to its exit: it reads the file, streams it to
  `POST /api/imports`, and prints the report, which the server answers after it has
  checked every item, written every task, criteria revision, edge, label, event and
  import state, and committed;
- the re-import: the same file again; `rows_written_on_reimport` is how many rows of the
  tables an import writes (tasks, criteria, edges, labels, import states, events) it
  added, and how many tasks it touched (`updated_at` moved): 0 is the goal;
- the changed import: the file with every hundredth item's title changed (1 %).

While each import runs, the server's resident memory is watched as bench/artifacts.py
does (its VmHWM reset just before, VmRSS sampled every 20 ms); `rss_growth_mib` is the
largest growth over the resident size just before. A small import into another project
first warms the server's code paths. `server_cpu_s` is the server's CPU time for the first
import (steadier than wall time on a shared machine).

    .venv/bin/python bench/imports.py
    .venv/bin/python bench/imports.py --backend postgresql
    .venv/bin/python bench/imports.py --items 10000      # a quick look

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlite_utils
from claims import Server, served
from scratch import Scratch, scratch_database
from sqlalchemy import bindparam, text

from artifacts import watched
from hub.identity import service as identity
from hub.projects import service as projects
from hub.runtime import Runtime
from hub.storage.base import UTCDateTime

SEED = 25
SYSTEM = "bench:plan.jsonl"
# The tables an import writes, and so a re-import of an unchanged file must not.
WRITTEN = (
    "tasks", "task_criteria", "task_prerequisites", "task_labels", "import_sources", "events",
)  # fmt: skip


# --- the file, the caller, the floor -------------------------------------------------------


def items(count: int, changed: bool = False) -> Iterator[dict[str, Any]]:
    """The import's items: the same for the same count (a fixed seed); `changed`: every
    hundredth title differs."""
    rng = random.Random(SEED)
    for index in range(count):
        item: dict[str, Any] = {
            "sourceSystem": SYSTEM,
            "sourceId": f"item-{index}",
            "title": f"Task {index}: {rng.choice(WORDS)} the {rng.choice(WORDS)}"
            + (" (changed)" if changed and index % 100 == 50 else ""),
            "acceptanceCriteria": [f"the {rng.choice(WORDS)} works ({index})"],
            "labels": [rng.choice(LABELS)],
            "priority": rng.randrange(-5, 6),
        }
        if index:
            needs = [f"item-{rng.randrange(index)}"]
            if index == count - 1 and index > 1:
                needs.append(f"item-{index - 1}")
            item["prerequisites"] = sorted(set(needs))
        yield item


WORDS = (
    "parse", "migrate", "index", "cache", "render", "validate", "stream", "retry", "lock",
    "schema", "token", "session", "queue", "report", "export", "import", "search", "page",
)  # fmt: skip
LABELS = ("api", "db", "web", "cli", "docs", "infra")


def write_file(path: Path, count: int, changed: bool = False) -> tuple[int, int]:
    """The JSON Lines file; its items and prerequisite edges."""
    edges = 0
    with path.open("w") as file:
        for item in items(count, changed):
            edges += len(item.get("prerequisites", ()))
            file.write(json.dumps(item) + "\n")
    return count, edges


def prepare(runtime: Runtime) -> tuple[str, str, str]:
    """An operator's personal token and two empty projects (one to warm up on)."""

    def operator(uow: Any) -> tuple[str, str, str]:
        principal = identity.create_principal(
            uow, name="bench-importer", kind="human", operator=True
        )
        token = identity.create_token(uow, principal=principal.id, label="bench").plaintext
        actor = identity.authenticate(uow, token)
        warm = projects.create_project(uow, actor, name="warm-up").id
        return token, projects.create_project(uow, actor, name="imports bench").id, warm

    return runtime.write(operator)


def floor(path: Path, folder: Path) -> float:
    """Seconds for sqlite-utils to read the file and insert its rows and edges."""
    target = folder / "floor.db"
    database = sqlite_utils.Database(target)
    database.enable_wal()
    database["tasks"].create(  # type: ignore[union-attr]
        {"id": str, "project_id": str, "kind": str, "title": str, "outcome": str,
         "priority": int, "state": str, "source_system": str, "source_id": str,
         "criteria": str, "labels": str, "created_at": str},
        pk="id",
    )  # fmt: skip
    database["task_prerequisites"].create(  # type: ignore[union-attr]
        {"task_id": str, "prerequisite_id": str}, pk=("task_id", "prerequisite_id")
    )
    started = time.perf_counter()
    now = time.strftime("%Y-%m-%d %H:%M:%S")
    rows, edges = [], []
    with path.open() as file:
        for line in file:
            item = json.loads(line)
            rows.append({
                "id": item["sourceId"], "project_id": "bench", "kind": "IMPLEMENTATION",
                "title": item["title"], "outcome": "", "priority": item.get("priority", 0),
                "state": "OPEN", "source_system": item["sourceSystem"],
                "source_id": item["sourceId"],
                "criteria": json.dumps(item.get("acceptanceCriteria", [])),
                "labels": json.dumps(item.get("labels", [])), "created_at": now,
            })  # fmt: skip
            edges.extend(
                {"task_id": item["sourceId"], "prerequisite_id": needed}
                for needed in item.get("prerequisites", ())
            )
    with database.conn:
        database["tasks"].insert_all(rows, batch_size=1000)  # type: ignore[union-attr]
        database["task_prerequisites"].insert_all(edges, batch_size=1000)  # type: ignore[union-attr]
    seconds = time.perf_counter() - started
    database.close()
    target.unlink()
    return seconds


# --- the imports ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Importer:
    """`hub import` as a team runs it, against the bench's server with its token."""

    server: Server
    token: str
    folder: Path

    def send(self, path: Path, project_id: str) -> dict[str, Any]:
        command = Path(sys.executable).with_name("hub")
        environment = {
            **os.environ,
            "HUB_SERVER": self.server.url,
            "HUB_TOKEN": self.token,
            # Its pending keys (none remain after an answer) beside the scratch database.
            "HUB_AGENT_STATE": str(self.folder / "agent-state.json"),
        }
        done = subprocess.run(
            [str(command), "import", str(path), "--project", project_id, "--json"],
            env=environment, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"hub import exited {done.returncode}: {done.stdout[:2000]}"
                             f"{done.stderr[:2000]}")  # fmt: skip
        report: dict[str, Any] = json.loads(done.stdout)["report"]
        return report

    def timed(self, path: Path, project_id: str) -> tuple[float, float, float, dict[str, Any]]:
        """Seconds, server CPU seconds, the server's RSS growth (MiB) and the report."""
        cpu = self.server.cpu_seconds()
        with watched(self.server.pid) as memory:
            started = time.perf_counter()
            report = self.send(path, project_id)
            seconds = time.perf_counter() - started
        return seconds, self.server.cpu_seconds() - cpu, memory.growth_mib, report


def footprint(scratch: Scratch, since: datetime) -> int:
    """How many rows the tables an import writes hold, plus the tasks and import states
    changed at `since` or later: what a re-import wrote is the difference."""
    runtime = scratch.runtime()
    moved = (
        ("tasks", "updated_at"), ("import_sources", "imported_at"),
    )  # fmt: skip
    try:
        with runtime.database.engine.connect() as connection:
            rows = sum(
                int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar() or 0)
                for table in WRITTEN
            )
            for table, column in moved:
                later = text(f"SELECT count(*) FROM {table} WHERE {column} >= :t").bindparams(
                    bindparam("t", type_=UTCDateTime())
                )
                rows += int(connection.execute(later, {"t": since}).scalar() or 0)
    finally:
        runtime.close()
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--database-url", help="SQLite file, or a hub_bench* PostgreSQL db")
    parser.add_argument(
        "--server-wrapper",
        default="",
        help="command the server runs under, e.g. 'py-spy record -o imports.svg --'",
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args(argv)
    if args.items < 2:
        parser.error("--items must be at least 2")

    with scratch_database(args.backend, args.database_url, keep=args.keep) as scratch:
        started = time.perf_counter()
        plan, changed_plan, warm_plan = (
            scratch.folder / name for name in ("plan.jsonl", "changed.jsonl", "warm.jsonl")
        )
        count, edges = write_file(plan, args.items)
        write_file(changed_plan, args.items, changed=True)
        write_file(warm_plan, min(args.items, 200))
        runtime = scratch.runtime()
        token, project_id, warm_project = prepare(runtime)
        runtime.close()
        _say(f"{args.backend}: {count} items, {edges} edges ready in "
             f"{time.perf_counter() - started:.1f} s; scratch {scratch.folder}")  # fmt: skip
        floor_seconds = floor(plan, scratch.folder)
        _say(f"floor (sqlite-utils): {floor_seconds:.2f} s")
        limits = {"HUB_IMPORT_MAX_ITEMS": str(max(args.items, 200_000))}
        with served(
            scratch, workers=1, synchronous="FULL", pool_size=4,
            wrapper=args.server_wrapper, settings=limits,
        ) as server:  # fmt: skip
            importer = Importer(server, token, scratch.folder)
            importer.send(warm_plan, warm_project)
            seconds, cpu, first_rss, first = importer.timed(plan, project_id)
            _say(f"first import: {seconds:.2f} s (server CPU {cpu:.2f} s), {first['counts']}")
            mark = datetime.now(UTC)
            before = footprint(scratch, mark)
            again_seconds, again_cpu, again_rss, again = importer.timed(plan, project_id)
            after = footprint(scratch, mark)
            _say(f"re-import: {again_seconds:.2f} s (server CPU {again_cpu:.2f} s), "
                 f"{again['counts']}")  # fmt: skip
            changed_seconds, changed_cpu, changed_rss, changed = importer.timed(
                changed_plan, project_id
            )
            _say(f"1 % changed: {changed_seconds:.2f} s (server CPU {changed_cpu:.2f} s), "
                 f"{changed['counts']}")  # fmt: skip

    written = after - before
    print(
        json.dumps(
            {
                "backend": args.backend,
                "items": count,
                "edges": edges,
                "seconds": round(seconds, 2),
                "server_cpu_s": round(cpu, 2),
                "floor_seconds": round(floor_seconds, 2),
                "ratio": round(seconds / floor_seconds, 2),
                "created": first["counts"]["created"],
                "reimport_seconds": round(again_seconds, 2),
                "reimport_server_cpu_s": round(again_cpu, 2),
                "reimport_unchanged": again["counts"]["unchanged"],
                "rows_written_on_reimport": written,
                "changed_seconds": round(changed_seconds, 2),
                "changed_server_cpu_s": round(changed_cpu, 2),
                "updated": changed["counts"]["updated"],
                "rss_growth_mib": max(first_rss, again_rss, changed_rss),
                "load_average": round(os.getloadavg()[0], 2),
            }
        ),
        flush=True,
    )


def _say(message: str) -> None:
    print(message, flush=True)


if __name__ == "__main__":
    main()
