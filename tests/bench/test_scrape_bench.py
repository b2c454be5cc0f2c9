"""bench/scrape.py keeps running: at a tiny size, on both databases, it times the state
read behind /metrics beside its floor (a count of the tasks table) and names any plan
that reads a large table whole. Never its timings: those are docs/benchmarks.md's."""

from __future__ import annotations

import pytest

from tests.support.bench import run_bench

pytestmark = [pytest.mark.slow]


def test_the_scrape_bench_runs_at_a_tiny_size(backend: str) -> None:
    figures = run_bench(
        "scrape.py", backend, "--tasks", "300", "--sessions", "20", "--calls", "3"
    )

    assert (figures["backend"], figures["tasks"]) == (backend, 300)
    assert figures["statements"] > 0 and figures["ratio_to_count_floor"] > 0
    # Three of the 300 tasks are in progress, one of them with its lease already over.
    assert figures["recovery_candidates"] == 1 and figures["live_sessions"] == 2
