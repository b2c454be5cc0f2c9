"""bench/artifacts.py keeps running: at 4 MiB, on both databases, it uploads a file to a
real server, downloads it again, copies it and sends it to the stack's floor beside
them and prints its figures, and the bytes come back as they went. Never its timings:
those are docs/benchmarks.md's, measured on purpose."""

from __future__ import annotations

import pytest

from tests.support.bench import run_bench

pytestmark = [pytest.mark.slow, pytest.mark.server]

RATES = (
    "mib_per_s", "cp_mib_per_s", "ratio", "download_mib_per_s", "download_ratio",
    "stack_mib_per_s", "stack_ratio", "stack_cp_ratio",
)  # fmt: skip


def test_the_artifacts_bench_round_trips_a_small_file(backend: str) -> None:
    figures = run_bench("artifacts.py", backend, "--mib", "4")

    assert (figures["backend"], figures["mib"], figures["round_trip"]) == (backend, 4, True)
    assert all(figures[name] > 0 for name in RATES), figures
    assert figures["rss_growth_mib"] >= 0
    assert figures["download_rss_growth_mib"] >= 0
