"""bench/write_path.py keeps running: at a tiny size, on both databases, it runs the claim
cycle through the service layer and prints CPU and statements per mutation beside the
empty write unit. Never its timings: those are docs/benchmarks.md's, measured on purpose."""

from __future__ import annotations

import pytest

from tests.support.bench import run_bench

pytestmark = [pytest.mark.slow]


def test_the_write_path_bench_runs_at_a_tiny_size(backend: str) -> None:
    figures = run_bench("write_path.py", backend, "--cycles", "5")

    assert (figures["backend"], figures["cycles"]) == (backend, 5)
    mutations = ("claim", "renew", "accept", "submit")
    assert set(figures["cpu_ms"]) == {*mutations, "floor"}
    # Every mutation does more than the empty unit it runs in.
    assert all(figures["statements"][name] > figures["statements"]["floor"] for name in mutations)
    assert figures["cycle_cpu_ms"] > 0 and figures["ratio"] > 0
