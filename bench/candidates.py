"""The `candidates` query on a large project: is ready work found by the index, fast?

One project with `--tasks` tasks (default 100,000) and twice as many prerequisite edges,
written in bulk. Older tasks are mostly DONE and prerequisites lean towards older tasks,
so about a quarter of the tasks end up ready; `blocked_count` is exactly the number of
each task's prerequisites that are not DONE, as the service maintains it.

Timed, `--calls` times each (default 200):
- `candidates` for the first 20, the service function through `Runtime.read` (what the
  GraphQL query runs: one statement reading the ready tasks' views, `READY_VIEWS`);
- the ready query alone (the SQL `ready_tasks(...).limit(20)` compiles to), on the driver;
- the views statement alone (`READY_VIEWS`: the ready query with each view's lease,
  criteria, prerequisites and labels), on the driver;
- the other reads that show these tasks, each through `Runtime.read` with its statements
  counted: `task(id)` (`get_task`), the loaders' batch of the candidates
  (`get_tasks`), the board's first page and one card (`board_page`, `board_card`).

The plans are shown (`EXPLAIN QUERY PLAN` / `EXPLAIN ANALYZE`): the candidates views
statement's, and the claim query's (`LIMIT 1`, `FOR UPDATE SKIP LOCKED` on PostgreSQL).

    .venv/bin/python bench/candidates.py --backend sqlite
    .venv/bin/python bench/candidates.py --backend postgresql --tasks 10000
    .venv/bin/python bench/candidates.py --profile 25   # then where a call's CPU goes

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import random
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from scratch import Scratch, bulk_write, ms, percentile, scratch_database
from sqlalchemy import Connection, event, text
from sqlalchemy.sql import Executable

from hub.identity import service as identity
from hub.ids import new_id
from hub.projects import service as projects
from hub.runtime import Runtime
from hub.work import _reading as work_reads  # the ready query's SQL, shown with its plan
from hub.work import service as work
from hub.work.tables import Task, TaskCriteria, TaskPrerequisite

INDEX = "ix_tasks_ready"
CHUNK = 5_000


# --- the project --------------------------------------------------------------------------


def build_graph(
    count: int, edges: int, seed: int
) -> tuple[list[str], list[bool], set[tuple[int, int]]]:
    """Task ids in creation order, which are DONE, and edges (task, prerequisite) by index.

    The oldest ~60 % are DONE (with 5 % exceptions either way); a prerequisite is an older
    task, drawn towards the oldest (index * r^2), as real backlogs depend on settled work.
    """
    rng = random.Random(seed)
    ids = [new_id("tsk") for _ in range(count)]
    ids.sort()  # ULIDs made in one millisecond are not ordered: make id order creation order
    cutoff = int(count * 0.6)
    done = [(index < cutoff) != (rng.random() < 0.05) for index in range(count)]
    pairs: set[tuple[int, int]] = set()
    limit = count * (count - 1) // 2
    if edges > limit:
        raise SystemExit(f"{count} tasks allow at most {limit} edges")
    while len(pairs) < edges:
        task = rng.randrange(1, count)
        prerequisite = int(task * rng.random() ** 2)
        pairs.add((task, prerequisite))
    return ids, done, pairs


def populate(
    runtime: Runtime, scratch: Scratch, count: int, edges: int, seed: int
) -> tuple[str, dict[str, int]]:
    """The project (through the service layer) and its tasks and edges (in bulk)."""

    def operator(uow: Any) -> tuple[str, str]:
        view = identity.create_principal(uow, name="bench-operator", kind="human", operator=True)
        return view.id, identity.create_token(uow, principal=view.id, label="bench").plaintext

    operator_id, token = runtime.write(operator)
    project = runtime.write(
        lambda uow: projects.create_project(
            uow, identity.authenticate(uow, token), name="candidates bench"
        )
    )
    ids, done, pairs = build_graph(count, edges, seed)
    blocked = [0] * count
    for task, prerequisite in pairs:
        if not done[prerequisite]:
            blocked[task] += 1
    rng = random.Random(seed + 1)
    now = datetime.now(UTC)
    task_rows = [
        {
            "id": task_id,
            "project_id": project.id,
            "kind": "GENERAL",
            "title": f"bench task {index}",
            "outcome": "",
            "priority": rng.randint(-3, 3),
            "state": "DONE" if done[index] else ("REVISION_NEEDED" if index % 10 == 0 else "OPEN"),
            "required": True,
            "revision": 1,
            "criteria_revision": 1,
            "generation": 1 if done[index] else 0,
            "blocked_count": blocked[index],
            "created_at": now,
            "created_by": operator_id,
            "updated_at": now,
        }
        for index, task_id in enumerate(ids)
    ]
    criteria_rows = [
        {
            "task_id": task_id,
            "revision": 1,
            "project_id": project.id,
            "criteria": ["it works"],
            "created_at": now,
            "created_by": operator_id,
        }
        for task_id in ids
    ]
    edge_rows = [
        {
            "task_id": ids[task],
            "prerequisite_id": ids[prerequisite],
            "project_id": project.id,
            "created_at": now,
        }
        for task, prerequisite in sorted(pairs)
    ]
    for table, rows in ((Task, task_rows), (TaskCriteria, criteria_rows),
                        (TaskPrerequisite, edge_rows)):  # fmt: skip
        bulk_write(scratch, table.__table__, rows)  # type: ignore[arg-type]
    with runtime.database.engine.begin() as connection:
        connection.execute(text("ANALYZE"))
    ready = sum(1 for index in range(count) if not done[index] and blocked[index] == 0)
    return project.id, {"ready": ready, "done": sum(done)}


# --- timing -----------------------------------------------------------------------------------


class StatementCounter:
    """Counts the statements an engine runs while `counting` is set."""

    def __init__(self, runtime: Runtime) -> None:
        self.count = 0
        self.counting = False
        event.listen(runtime.database.engine, "before_cursor_execute", self._seen)

    def _seen(self, *_: Any) -> None:
        if self.counting:
            self.count += 1


def time_calls(calls: int, call: Any) -> tuple[list[float], float]:
    """Wall time of each call, and the CPU time (this process) a call took on average."""
    call()  # warm: compiled-statement caches, the connection pool
    durations = []
    cpu = time.process_time()
    for _ in range(calls):
        started = time.perf_counter()
        call()
        durations.append(time.perf_counter() - started)
    return durations, (time.process_time() - cpu) / calls


def other_reads(
    runtime: Runtime, counter: StatementCounter, calls: int, project_id: str, ids: list[str]
) -> dict[str, dict[str, float]]:
    """Statements, CPU and p50 of each read that shows the same tasks another way."""
    board = work.BoardQuery(project_id)
    reads: dict[str, Any] = {
        "task": lambda uow: work.get_task(uow, ids[0]),
        "tasks_batch": lambda uow: work.get_tasks(uow, ids),
        "board_page": lambda uow: work.board_page(uow, board),
        "board_card": lambda uow: work.board_card(uow, board, ids[-1]),
    }
    found = {}
    for name, read in reads.items():
        counter.count, counter.counting = 0, True
        runtime.read(read)
        counter.counting = False
        durations, cpu = time_calls(calls, lambda read=read: runtime.read(read))
        found[name] = {
            "statements": counter.count,
            "cpu_ms": ms(cpu),
            "p50_ms": ms(percentile(durations, 50)),
        }
    return found


def profile_calls(calls: int, call: Any, top: int) -> None:
    """Where the calls' time goes: cProfile's top entries by cumulative time (the timed
    runs are made without it: profiling slows every Python call)."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        call()
    profiler.disable()
    print(f"profile of {calls} calls, by cumulative time:")
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(top)


def compiled(runtime: Runtime, statement: Executable) -> str:
    return str(
        statement.compile(
            dialect=runtime.database.engine.dialect, compile_kwargs={"literal_binds": True}
        )
    )


def explain(connection: Connection, backend: str, sql: str) -> str:
    if backend == "sqlite":
        rows = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}").all()
        return "\n".join(str(row[-1]) for row in rows)
    rows = connection.exec_driver_sql(f"EXPLAIN (ANALYZE, BUFFERS) {sql}").all()
    return "\n".join(str(row[0]) for row in rows)


def raw_sql_durations(runtime: Runtime, sql: str, calls: int) -> list[float]:
    """The ready query alone, on the driver connection (no ORM, no result objects)."""
    with runtime.database.engine.connect() as connection:
        cursor = connection.connection.dbapi_connection.cursor()  # type: ignore[union-attr]

        def run() -> None:
            cursor.execute(sql)
            cursor.fetchall()

        durations, _ = time_calls(calls, run)
        cursor.close()
        connection.rollback()
    return durations


def _lines(plan: str) -> Iterator[str]:
    for line in plan.splitlines():
        yield f"    {line}"


# --- the run ----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--edges", type=int, default=0, help="default: twice --tasks")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--first", type=int, default=20, help="candidates asked for")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--database-url", help="SQLite file, or a hub_bench* PostgreSQL db")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    parser.add_argument(
        "--profile", type=int, default=0, metavar="N",
        help="after the timings, profile the service calls and print the top N entries",
    )  # fmt: skip
    args = parser.parse_args(argv)
    edges = args.edges or 2 * args.tasks

    with scratch_database(args.backend, args.database_url, keep=args.keep) as scratch:
        runtime = scratch.runtime()
        started = time.perf_counter()
        project_id, shape = populate(runtime, scratch, args.tasks, edges, args.seed)
        print(
            f"{args.backend}: {args.tasks} tasks ({shape['ready']} ready, {shape['done']} done),"
            f" {edges} edges written in {time.perf_counter() - started:.1f} s",
            flush=True,
        )

        counter = StatementCounter(runtime)
        counter.counting = True
        offered = runtime.read(
            lambda uow: work_reads.candidates(uow, project_id=project_id, limit=args.first)
        )
        counter.counting = False
        statements = counter.count
        if len(offered) != args.first or any(view.effective_state in ("BLOCKED", "DONE")
                                             for view in offered):  # fmt: skip
            raise SystemExit(f"candidates returned {len(offered)} tasks, not all ready")

        def call() -> None:
            runtime.read(
                lambda uow: work_reads.candidates(uow, project_id=project_id, limit=args.first)
            )

        service, service_cpu = time_calls(args.calls, call)
        others = other_reads(runtime, counter, args.calls, project_id, [v.id for v in offered])
        if args.profile:
            profile_calls(args.calls, call, args.profile)

        ready_sql = compiled(runtime, work_reads.ready_tasks(project_id, ()).limit(args.first))
        candidates_sql = compiled(
            runtime, work_reads.READY_VIEWS.params(project_id=project_id, limit=args.first)
        )
        claim_statement = work_reads.ready_tasks(project_id, ()).limit(1)
        if args.backend == "postgresql":
            claim_statement = claim_statement.with_for_update(skip_locked=True)
        claim_sql = compiled(runtime, claim_statement)
        sql = raw_sql_durations(runtime, ready_sql, args.calls)
        views_sql = raw_sql_durations(runtime, candidates_sql, args.calls)
        with runtime.database.engine.connect() as connection:
            candidates_plan = explain(connection, args.backend, candidates_sql)
            claim_plan = explain(connection, args.backend, claim_sql)
            connection.rollback()
        runtime.close()

    print(
        f"candidates(first {args.first}) through Runtime.read: {statements} statements a call;"
        f" p50 {ms(percentile(service, 50))} ms, p99 {ms(percentile(service, 99))} ms,"
        f" {ms(service_cpu)} ms CPU a call"
    )
    print(
        f"the ready query alone (driver): p50 {ms(percentile(sql, 50))} ms,"
        f" p99 {ms(percentile(sql, 99))} ms"
    )
    print(
        f"the views statement alone (driver): p50 {ms(percentile(views_sql, 50))} ms,"
        f" p99 {ms(percentile(views_sql, 99))} ms"
    )
    for name, read in others.items():
        print(
            f"{name}: {read['statements']} statements a call; p50 {read['p50_ms']} ms,"
            f" {read['cpu_ms']} ms CPU a call"
        )
    print("candidates statement:", candidates_sql.replace("\n", " "))
    print("  plan:", *_lines(candidates_plan), sep="\n")
    print("claim query plan:", *_lines(claim_plan), sep="\n")
    figures = {
        "backend": args.backend,
        "tasks": args.tasks,
        "edges": edges,
        "ready": shape["ready"],
        "first": args.first,
        "calls": args.calls,
        "p50_ms": ms(percentile(service, 50)),
        "p99_ms": ms(percentile(service, 99)),
        "statements_per_call": statements,
        "cpu_ms_per_call": ms(service_cpu),
        "sql_p50_ms": ms(percentile(sql, 50)),
        "sql_p99_ms": ms(percentile(sql, 99)),
        "views_sql_p50_ms": ms(percentile(views_sql, 50)),
        "views_sql_p99_ms": ms(percentile(views_sql, 99)),
        "index_used": INDEX in candidates_plan,
        "claim_index_used": INDEX in claim_plan,
        "reads": others,
        "load_1min": round(os.getloadavg()[0], 1),
    }
    print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
