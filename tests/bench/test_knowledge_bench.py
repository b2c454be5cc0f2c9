"""bench/knowledge.py keeps running: at a tiny size, on both databases, it seeds through
the service and in bulk (its own check that both write the same rows), times the
service, the floor and a real server, and prints its figures. Never its timings: those
are docs/benchmarks.md's, measured on purpose."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import make_url

import hub
from tests.conftest import PG_URL

pytestmark = [pytest.mark.slow, pytest.mark.server]

ROOT = Path(__file__).resolve().parents[2]
FIGURES = (
    "p50_ms", "p95_ms", "project_p50_ms", "project_p95_ms", "http_p50_ms", "http_p95_ms",
    "http_project_p50_ms", "http_project_p95_ms", "floor_p50_ms", "floor_p95_ms",
)  # fmt: skip


def test_the_knowledge_search_bench_runs_at_a_tiny_size(backend: str) -> None:
    command = [
        sys.executable, str(ROOT / "bench/knowledge.py"), "--backend", backend,
        "--lessons", "300", "--projects", "5", "--searches", "5", "--calls", "5",
    ]  # fmt: skip
    scratch = f"hub_bench_smoke_{uuid.uuid4().hex[:12]}"
    if backend == "postgresql":
        command += ["--database-url", _on_test_server(scratch)]
    # The bench and the server it starts run the hub this test imports.
    source = str(Path(hub.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(command, capture_output=True, text=True, timeout=280, env=env)
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"

    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert (figures["backend"], figures["lessons"], figures["projects"]) == (backend, 300, 5)
    assert all(figures[name] > 0 for name in FIGURES), figures
    assert figures["ratio"] is not None
    if backend == "postgresql":  # the scratch database is dropped afterwards
        with psycopg.connect(PG_URL) as connection:
            left = connection.execute(
                "SELECT count(*) FROM pg_database WHERE datname = %s", (scratch,)
            ).fetchone()
        assert left == (0,)


def _on_test_server(database: str) -> str:
    return make_url(PG_URL).set(database=database).render_as_string(hide_password=False)
