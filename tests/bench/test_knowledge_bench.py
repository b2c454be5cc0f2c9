"""bench/knowledge.py keeps running: at a tiny size, on both databases, it seeds through
the service and in bulk (its own check that both write the same rows), times the
service, the floor and a real server, and prints its figures. Never its timings: those
are docs/benchmarks.md's, measured on purpose."""

from __future__ import annotations

import pytest

from tests.support.bench import run_bench

pytestmark = [pytest.mark.slow, pytest.mark.server]

FIGURES = (
    "p50_ms", "p95_ms", "project_p50_ms", "project_p95_ms", "http_p50_ms", "http_p95_ms",
    "http_project_p50_ms", "http_project_p95_ms", "floor_p50_ms", "floor_p95_ms",
)  # fmt: skip


def test_the_knowledge_search_bench_runs_at_a_tiny_size(backend: str) -> None:
    figures = run_bench(
        "knowledge.py", backend,
        "--lessons", "300", "--projects", "5", "--searches", "5", "--calls", "5",
    )  # fmt: skip

    assert (figures["backend"], figures["lessons"], figures["projects"]) == (backend, 300, 5)
    assert all(figures[name] > 0 for name in FIGURES), figures
    assert figures["ratio"] is not None
