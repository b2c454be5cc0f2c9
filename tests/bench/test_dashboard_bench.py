"""bench/dashboard.py keeps running: at a tiny size, on both databases, it draws the
board of a big and a small project and the home page through a real server for
concurrent viewers, again while agents run the claims bench's claim cycle on another
project, follows the board's live stream from open boards while tasks are claimed, and
prints its figures. Never its timings: those are docs/benchmarks.md's, measured on
purpose."""

from __future__ import annotations

import pytest

from tests.support.bench import run_bench

pytestmark = [pytest.mark.slow, pytest.mark.server]


def test_the_dashboard_bench_runs_at_a_tiny_size(backend: str) -> None:
    figures = run_bench(
        "dashboard.py", backend, "--tasks", "200", "--in-progress", "6", "--projects", "3",
        "--viewers", "2", "--rounds", "2", "--streams", "3", "--changes", "2",
        "--claim-agents", "2", "--claim-seconds", "2",
    )

    assert (figures["backend"], figures["tasks"], figures["in_progress"]) == (backend, 200, 6)
    assert figures["deliveries"] == 3 * 2  # every open board heard of every change
    assert all(
        figures[name] > 0
        for name in ("board_p95_ms", "board_small_p95_ms", "home_p95_ms", "healthz_p95_ms",
                     "board_alone_p95_ms", "sse_p99_ms", "board_under_claims_p95_ms",
                     "board_under_claims_ratio", "claims_p95_ms", "claims_cycles_per_s",
                     "claims_alone_p95_ms", "claims_alone_cycles_per_s", "claims_slowdown")
    ), figures
    assert (figures["claim_agents"], figures["double_owned"]) == (2, 0)
