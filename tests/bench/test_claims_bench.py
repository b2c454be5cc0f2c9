"""bench/claims.py keeps running: at a tiny size, on both databases, agents run the claim
cycle against a real server, the stack floor's no-op mutation is driven by as many
clients in the same run, the driver-level floors run, and the figures, ratios to both
floors, come out; on PostgreSQL the locks were sampled. Never its timings: those are
docs/benchmarks.md's, measured on purpose."""

from __future__ import annotations

import pytest

from tests.support.bench import run_bench

pytestmark = [pytest.mark.slow, pytest.mark.server]

FIGURES = (
    "claims_per_s", "p99_ms", "floor_claims_per_s", "ratio", "stack_mutations_per_s",
    "stack_p99_ms", "stack_ratio", "p99_ratio", "server_cpu_ms_per_claim",
)  # fmt: skip


def test_the_claims_bench_runs_at_a_tiny_size(backend: str) -> None:
    figures = run_bench(
        "claims.py", backend, "--agents", "2", "--seconds", "1.5", "--warmup", "0.5",
        "--floor-seconds", "0.5", "--stack-seconds", "1", "--tasks", "400",
    )  # fmt: skip

    assert (figures["backend"], figures["agents"]) == (backend, 2)
    assert all(figures[name] > 0 for name in FIGURES), figures
    assert (figures["mutations_per_cycle"], figures["double_owned"]) == (4, 0)
    if backend == "postgresql":
        assert figures["pg_lock_samples"] > 0
        assert figures["pg_lock_waits_max"] >= 0
        assert figures["event_streams_row_locks_seen"] >= 0
