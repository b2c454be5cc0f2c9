"""The event log's numbering on PostgreSQL, at the driver level: the claim cycle's four
minimal write transactions (bench/claims.py's `floor_cycle`) with their events numbered
three ways, on one scratch database, one after another:

- `none`: events stored without any number (the ceiling);
- `counter`: each event takes its number from one counter row per stream, locked to the
  commit (the event log before migration 0016; SQLite's still);
- `after_commit`: each event stored unnumbered with its transaction's id, the stream's
  finished events below the horizon numbered first under a try-lock (the event log
  since migration 0016).

    .venv/bin/python bench/event_numbering.py --threads 32 --seconds 10

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os

import psycopg
from claims import create_floor, reset_floor, run_floor
from scratch import ms, percentile, scratch_database


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0, help="each mode's window")
    parser.add_argument("--tasks", type=int, default=60_000)
    parser.add_argument("--database-url", help="a hub_bench* PostgreSQL database")
    args = parser.parse_args(argv)
    figures: dict[str, object] = {"threads": args.threads, "seconds": args.seconds}
    with scratch_database("postgresql", args.database_url) as scratch:
        create_floor(scratch, args.tasks)
        for mode in ("none", "counter", "after_commit"):
            reset_floor(scratch)
            run = run_floor(
                scratch,
                threads=args.threads,
                seconds=args.seconds,
                synchronous="FULL",
                cycle=True,
                counter=mode == "counter",
                after_commit=mode == "after_commit",
            )
            figures[mode] = {
                "claims_per_s": round(run.claims_per_s, 1),
                "claim_p50_ms": ms(percentile(run.latencies, 50)),
                "claim_p99_ms": ms(percentile(run.latencies, 99)),
                "exhausted": run.exhausted,
            }
            if mode == "after_commit":
                with psycopg.connect(scratch.libpq_url, autocommit=True) as connection:
                    row = connection.execute(
                        "SELECT count(*), count(seq) FROM floor_events"
                    ).fetchone()
                    assert row is not None
                    figures[mode]["events_numbered_of"] = [row[1], row[0]]  # type: ignore[index]
            print(mode, figures[mode], flush=True)
    figures["load_1min"] = round(os.getloadavg()[0], 2)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
