"""bench/imports.py keeps running: at a tiny size, on both databases, it imports a JSON
Lines file over HTTP into a real server, imports it again and with 1 % changed, times the
sqlite-utils floor beside it and prints its figures; the re-import writes nothing. Never
its timings: those are docs/benchmarks.md's, measured on purpose."""

from __future__ import annotations

import pytest

from tests.support.bench import run_bench

pytestmark = [pytest.mark.slow, pytest.mark.server]


def test_the_imports_bench_runs_at_a_tiny_size(backend: str) -> None:
    figures = run_bench("imports.py", backend, "--items", "300")

    assert (figures["backend"], figures["items"], figures["edges"]) == (backend, 300, 300)
    assert (figures["created"], figures["reimport_unchanged"], figures["updated"]) == (
        300, 300, 3,
    )  # fmt: skip
    assert figures["rows_written_on_reimport"] == 0
    assert all(
        figures[name] > 0 for name in ("seconds", "floor_seconds", "ratio", "reimport_seconds")
    ), figures
    assert figures["rss_growth_mib"] >= 0
