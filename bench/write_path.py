"""The claim cycle's write path in one process: CPU and statements per mutation.

No HTTP, no GraphQL: one thread runs the four mutations of `bench/claims.py`'s cycle
(claimTask, renewLease, recordAcceptance, submitAttempt) through the service layer,
each in its own write unit as the API runs it (the bearer token authenticated inside
it, the answer's unselected fields left out as `claims.py`'s documents leave them), on a
scratch database. Each mutation's CPU time is this thread's (`thread_time`),
so the machine's other load moves it less than wall time. The floor, measured in the
same run, is the empty write unit: the transaction and the authentication every
mutation pays before doing anything (`floor_ms`); `ratio` is a cycle's CPU over four
floors.

For comparing two versions of the code on a shared machine, run it alternately against
each checkout (`PYTHONPATH=<checkout>/src`): the figures of one run are only compared
with each other and with the runs beside it.

    .venv/bin/python bench/write_path.py                    # SQLite, 500 cycles
    .venv/bin/python bench/write_path.py --backend postgresql

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

from claims import prepare
from scratch import scratch_database
from sqlalchemy import event

from hub.identity import service as identity
from hub.identity.views import Actor
from hub.review import service as review
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work

CYCLE = ("claim", "renew", "accept", "submit")
# What claims.py's documents do not select, as the API tells the operation
# (`UnitOfWork.unread`): its claim, renewal and acceptance answers show no task.
UNREAD = {name: frozenset({"task"}) for name in ("claim", "renew", "accept")}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--cycles", type=int, default=500)
    parser.add_argument("--database-url", help="a hub_bench* PostgreSQL database")
    args = parser.parse_args(argv)
    print(json.dumps(run(args.backend, args.database_url, args.cycles)), flush=True)


def run(backend: str, database_url: str | None, cycles: int) -> dict[str, Any]:
    with scratch_database(backend, database_url, keep=False) as scratch:
        runtime = scratch.runtime()
        try:
            fixture = prepare(runtime, 1, cycles + 100)
            personal = fixture.agent_tokens[0]
            token = runtime.write(
                lambda uow: identity.start_session(
                    uow,
                    identity.authenticate(uow, personal),
                    workstation="bench",
                    harness="bench",
                    harness_instance=uuid.uuid4().hex,
                )
            ).token
            cpu: Counter[str] = Counter()
            statements: Counter[str] = Counter()
            running = [""]

            @event.listens_for(runtime.database.engine, "before_cursor_execute")
            def count(*_: Any) -> None:
                statements[running[0]] += 1

            def mutation(name: str, operation: Callable[[UnitOfWork, Actor], Any]) -> Any:
                def answered(uow: UnitOfWork) -> Any:
                    uow.unread = UNREAD.get(name, frozenset())
                    return operation(uow, identity.authenticate(uow, token))

                running[0] = name
                started = time.thread_time()
                made = runtime.write(answered)
                cpu[name] += time.thread_time() - started
                return made

            def cycle() -> None:
                claim = mutation(
                    "claim",
                    lambda uow, actor: work.claim_task(
                        uow,
                        actor,
                        work.ClaimRequest(fixture.project_id, idempotency_key=_key()),
                    ),
                )
                held = {"attempt_id": claim.attempt.id, "generation": claim.attempt.generation}
                mutation(
                    "renew",
                    lambda uow, actor: work.renew_lease(uow, actor, **held, idempotency_key=_key()),
                )
                mutation(
                    "accept",
                    lambda uow, actor: work.record_acceptance(
                        uow, actor, **held, criteria_revision=1, evidence=["bench: checked"]
                    ),
                )
                mutation(
                    "submit",
                    lambda uow, actor: review.submit_attempt(
                        uow,
                        actor,
                        work.SubmitRequest(
                            **held, outcome="DELIVERED", result="done", idempotency_key=_key()
                        ),
                    ),
                )

            for _ in range(min(50, cycles)):  # warm the statement caches
                cycle()
            # As `hub serve` does after startup: the long-lived heap out of the collector.
            gc.collect()
            gc.freeze()
            cpu.clear()
            statements.clear()
            for _ in range(cycles):
                cycle()
                mutation("floor", lambda uow, actor: None)
        finally:
            runtime.close()
    per = {name: cpu[name] / cycles * 1000 for name in (*CYCLE, "floor")}
    cycle_ms = sum(per[name] for name in CYCLE)
    return {
        "backend": backend,
        "cycles": cycles,
        "cpu_ms": {name: round(value, 3) for name, value in per.items()},
        "statements": {name: round(statements[name] / cycles, 2) for name in (*CYCLE, "floor")},
        "cycle_cpu_ms": round(cycle_ms, 3),
        "floor_ms": round(per["floor"], 3),
        "ratio": round(cycle_ms / (4 * per["floor"]), 2),
    }


def _key() -> str:
    return uuid.uuid4().hex


if __name__ == "__main__":
    main()
