"""The /metrics state read on a large hub: is a scrape cheap at 100,000 tasks?

One project with `--tasks` tasks (default 100,000), each with one attempt, and
`--sessions` agent sessions (default 2,000, nine in ten ended), written in bulk. Most
tasks are DONE (their attempt COMPLETED); one in a hundred is in progress, a third of
those with an expired lease and some ending within the minute.

Timed, `--calls` times (default 50): `hub.scrape.read_operating_state` through
`Runtime.read` (what each scrape runs), with its statements counted, and beside it the
floors: one read unit that counts the tasks table (`ratio_to_count_floor`), and the
empty read unit (`ratio_to_empty_read`). Each statement's plan
is shown (`EXPLAIN QUERY PLAN` / `EXPLAIN`), and a plan that scans a whole large table
(tasks, attempts, agent sessions) rather than an index is named in `full_scans`.

    .venv/bin/python bench/scrape.py --backend sqlite
    .venv/bin/python bench/scrape.py --backend postgresql --tasks 20000

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from scratch import Scratch, bulk_write, ms, percentile, scratch_database
from sqlalchemy import event, text

from hub.identity import service as identity
from hub.identity.tables import AgentSession
from hub.ids import new_id
from hub.projects import service as projects
from hub.runtime import Runtime
from hub.scrape import read_operating_state
from hub.work.tables import Attempt, Task

LARGE_TABLES = ("tasks", "attempts", "agent_sessions")


def populate(runtime: Runtime, scratch: Scratch, count: int, sessions: int) -> None:
    def operator(uow: Any) -> tuple[str, str]:
        view = identity.create_principal(uow, name="bench-operator", kind="human", operator=True)
        return view.id, identity.create_token(uow, principal=view.id, label="bench").plaintext

    operator_id, token = runtime.write(operator)
    project = runtime.write(
        lambda uow: projects.create_project(
            uow, identity.authenticate(uow, token), name="scrape bench"
        )
    )
    now = datetime.now(UTC)
    session_ids = sorted(new_id("ses") for _ in range(sessions))
    bulk_write(scratch, AgentSession.__table__, [  # type: ignore[arg-type]
        {
            "id": session_id,
            "principal_id": operator_id,
            "workstation": "ws",
            "harness": "bench",
            "harness_instance": session_id,
            "started_at": now - timedelta(days=1),
            "ended_at": None if index % 10 == 0 else now - timedelta(hours=1),
        }
        for index, session_id in enumerate(session_ids)
    ])
    task_ids = sorted(new_id("tsk") for _ in range(count))
    attempt_ids = sorted(new_id("att") for _ in range(count))
    in_progress = {index for index in range(count) if index % 100 == 0}
    tasks, attempts = [], []
    for index, (task_id, attempt_id) in enumerate(zip(task_ids, attempt_ids, strict=True)):
        live = index in in_progress
        # Of the tasks in progress: a third expired, a tenth ending within the minute.
        expires = now + timedelta(seconds=30 if index % 1000 == 0 else 600)
        if live and index % 300 == 0:
            expires = now - timedelta(minutes=5)
        tasks.append({
            "id": task_id, "project_id": project.id, "kind": "GENERAL",
            "title": f"bench task {index}", "outcome": "", "priority": 0,
            "state": "IN_PROGRESS" if live else "DONE", "required": True, "revision": 1,
            "criteria_revision": 1, "generation": 1,
            "current_attempt_id": attempt_id if live else None, "blocked_count": 0,
            "created_at": now, "created_by": operator_id, "updated_at": now,
        })
        attempts.append({
            "id": attempt_id, "project_id": project.id, "task_id": task_id,
            "session_id": session_ids[index % sessions], "principal_id": operator_id,
            "workstation": "ws", "kind": "FRESH", "generation": 1,
            "state": "ACTIVE" if live else "COMPLETED", "lease_seconds": 600,
            "heartbeat_seconds": 60, "expires_at": expires if live else now,
            "criteria_revision": 1, "started_at": now, "last_progress_at": now,
            "ended_at": None if live else now,
        })
    bulk_write(scratch, Task.__table__, tasks)  # type: ignore[arg-type]
    bulk_write(scratch, Attempt.__table__, attempts)  # type: ignore[arg-type]
    with runtime.database.engine.begin() as connection:
        connection.execute(text("ANALYZE"))


def plans(runtime: Runtime, statements: list[tuple[str, Any]]) -> tuple[list[str], list[str]]:
    """Each statement's plan, and the large tables some plan reads whole."""
    shown, scans = [], []
    raw = runtime.database.engine.raw_connection()
    try:
        cursor = raw.cursor()
        for statement, parameters in statements:
            if runtime.database.is_sqlite:
                cursor.execute("EXPLAIN QUERY PLAN " + statement, parameters)
                lines = [str(row[-1]) for row in cursor.fetchall()]
                pattern = r"^SCAN ({})(?! USING (COVERING )?INDEX)"
            else:
                cursor.execute("EXPLAIN " + statement, parameters)
                lines = [str(row[0]) for row in cursor.fetchall()]
                pattern = r"Seq Scan on ({})\b"
            shown.append(" ".join(statement.split())[:160])
            shown.extend("    " + line for line in lines)
            for line in lines:
                found = re.search(pattern.format("|".join(LARGE_TABLES)), line.strip())
                if found:
                    scans.append(found.group(1))
    finally:
        raw.close()
    return shown, scans


def count_tasks(uow: Any) -> int:
    return int(uow.session.execute(text("SELECT count(*) FROM tasks")).scalar_one())


def timed(runtime: Runtime, operation: Any, calls: int) -> list[float]:
    durations = []
    for _ in range(calls):
        started = time.perf_counter()
        runtime.read(operation)
        durations.append(time.perf_counter() - started)
    return durations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--sessions", type=int, default=2_000)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--database-url", help="a hub_bench* PostgreSQL database")
    args = parser.parse_args()
    with scratch_database(args.backend, args.database_url) as scratch:
        runtime = scratch.runtime()
        try:
            populate(runtime, scratch, args.tasks, args.sessions)
            statements: list[tuple[str, Any]] = []

            def seen(_c: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
                statements.append((statement, parameters))

            event.listen(runtime.database.engine, "before_cursor_execute", seen)
            state = runtime.read(read_operating_state)
            event.remove(runtime.database.engine, "before_cursor_execute", seen)
            queries = [(s, p) for s, p in statements if s.lstrip().upper().startswith("SELECT")]
            durations = timed(runtime, read_operating_state, args.calls)
            # The floor, in the same run: one read unit counting the tasks table, the
            # least any whole-table figure costs on this machine now.
            floor = timed(runtime, count_tasks, args.calls)
            empty = timed(runtime, lambda uow: None, args.calls)
            shown, scans = plans(runtime, queries)
            print("\n".join(shown))
            print(json.dumps({
                "backend": args.backend,
                "tasks": args.tasks,
                "statements": len(queries),
                "p50_ms": ms(percentile(durations, 50)),
                "p99_ms": ms(percentile(durations, 99)),
                "count_floor_p50_ms": ms(percentile(floor, 50)),
                "ratio_to_count_floor": round(
                    percentile(durations, 50) / percentile(floor, 50), 2
                ),
                "empty_read_p50_ms": ms(percentile(empty, 50)),
                "ratio_to_empty_read": round(
                    percentile(durations, 50) / percentile(empty, 50), 2
                ),
                "full_scans": sorted(set(scans)),
                "recovery_candidates": sum(state.recovery_candidates.values()),
                "leases_expiring": sum(state.leases_expiring.values()),
                "live_sessions": state.live_sessions,
            }))
        finally:
            runtime.release_threads()


if __name__ == "__main__":
    main()
