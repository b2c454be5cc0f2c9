"""bench/artifacts.py keeps running: at 4 MiB, on both databases, it uploads a file to a
real server, downloads it again, copies it beside them and prints its figures, and the
bytes come back as they went. Never its timings: those are docs/benchmarks.md's,
measured on purpose."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from sqlalchemy.engine import make_url

import hub
from tests.conftest import PG_URL

pytestmark = [pytest.mark.slow, pytest.mark.server]

ROOT = Path(__file__).resolve().parents[2]
RATES = ("mib_per_s", "cp_mib_per_s", "ratio", "download_mib_per_s", "download_ratio")


def test_the_artifacts_bench_round_trips_a_small_file(backend: str) -> None:
    command = [sys.executable, str(ROOT / "bench/artifacts.py"), "--backend", backend, "--mib", "4"]
    scratch = f"hub_bench_smoke_{uuid.uuid4().hex[:12]}"
    if backend == "postgresql":
        command += ["--database-url", _on_test_server(scratch)]
    # The bench and the server it starts run the hub this test imports.
    source = str(Path(hub.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=280, env=env)
    finally:
        if backend == "postgresql":
            _drop(scratch)
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"

    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert (figures["backend"], figures["mib"], figures["round_trip"]) == (backend, 4, True)
    assert all(figures[name] > 0 for name in RATES), figures
    assert figures["rss_growth_mib"] >= 0
    assert figures["download_rss_growth_mib"] >= 0


def _on_test_server(database: str) -> str:
    return make_url(PG_URL).set(database=database).render_as_string(hide_password=False)


def _drop(database: str) -> None:
    admin = make_url(PG_URL).set(database="postgres").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database))
        )
