"""Running a `bench/` script the way a person would, at a tiny size, from a test.

The script and the server it starts import the hub this test suite imports. On
PostgreSQL it gets a scratch database of its own on the test server, which the bench
creates and drops itself (`bench/scratch.py`); the test checks that it did.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import psycopg
from sqlalchemy.engine import make_url

import hub
from tests.conftest import PG_URL

ROOT = Path(__file__).resolve().parents[2]


def run_bench(script: str, backend: str, *arguments: str) -> dict[str, Any]:
    """Run `bench/<script>` on `backend` and answer the JSON line it ends with."""
    command = [sys.executable, str(ROOT / "bench" / script), "--backend", backend, *arguments]
    scratch = f"hub_bench_smoke_{uuid.uuid4().hex[:12]}"
    if backend == "postgresql":
        url = make_url(PG_URL).set(database=scratch).render_as_string(hide_password=False)
        command += ["--database-url", url]
    source = str(Path(hub.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(command, capture_output=True, text=True, timeout=280, env=env)
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    if backend == "postgresql":
        with psycopg.connect(PG_URL) as connection:
            left = connection.execute(
                "SELECT count(*) FROM pg_database WHERE datname = %s", (scratch,)
            ).fetchone()
        assert left == (0,), f"the bench left its scratch database {scratch}"
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures
