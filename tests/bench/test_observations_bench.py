"""bench/observations.py keeps running: at a tiny size, on both databases, jobs report
observations over HTTP while subscribers listen, the same clients drive the stack floor's
no-op mutation in the same run, and the ramp raises the offered rate step by step. Never
its timings: those are docs/benchmarks.md's, measured on purpose."""

from __future__ import annotations

import pytest

from tests.support.bench import run_bench

pytestmark = [pytest.mark.slow, pytest.mark.server]

TINY = ("--jobs", "6", "--subscribers", "2", "--projects", "2", "--stack-seconds", "1")
STACK = ("stack_mutations_per_s", "stack_saturated_p99_ms", "stack_p99_ms")


def test_the_observations_bench_runs_at_a_tiny_size(backend: str) -> None:
    figures = run_bench("observations.py", backend, *TINY, "--seconds", "2")

    assert (figures["backend"], figures["jobs"], figures["subscribers"]) == (backend, 6, 2)
    assert figures["fanout_received"] > 0
    assert all(
        figures[name] > 0
        for name in ("observations_per_s", "observe_p99_ms", "fanout_p99_ms", *STACK)
    ), figures


def test_the_observations_ramp_runs_at_a_tiny_size(backend: str) -> None:
    figures = run_bench(
        "observations.py", backend, *TINY, "--ramp", "--ramp-start", "12", "--ramp-factor", "2",
        "--ramp-seconds", "2", "--ramp-steps", "2", "--ramp-p99-ms", "5000", "--ramp-warmup", "1",
    )  # fmt: skip

    assert 1 <= len(figures["steps"]) <= 2
    assert all(
        figures[name] > 0 for name in ("max_sustained_observations_per_s", "obs_ratio", *STACK)
    ), figures
