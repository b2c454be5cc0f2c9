"""bench/mcp.py keeps running: at a tiny size, on both databases, it claims and
checkpoints through the agent client and through `hub agent mcp` against a real server,
and times cold starts beside their floors. Never its timings: those are
docs/benchmarks.md's, measured on purpose."""

from __future__ import annotations

import pytest

from tests.support.bench import run_bench

pytestmark = [pytest.mark.slow, pytest.mark.server]

FIGURES = (
    "client_claim_ms", "mcp_claim_ms", "client_checkpoint_ms", "mcp_checkpoint_ms",
    "client_claim_p95_ms", "mcp_claim_p95_ms", "sdk_call_ms",
    "mcp_over_client_ratio_claim", "mcp_over_client_ratio_checkpoint",
    "cold_start_ms", "floor_python_ms", "floor_sdk_server_ms", "cold_start_over_sdk_floor",
)  # fmt: skip


def test_the_mcp_bench_runs_at_a_tiny_size(backend: str) -> None:
    figures = run_bench("mcp.py", backend, "--rounds", "2", "--warmup", "1", "--starts", "1")

    assert (figures["backend"], figures["rounds"]) == (backend, 2)
    assert all(figures[name] > 0 for name in FIGURES), figures
    assert figures["tools_listed"] > 0
