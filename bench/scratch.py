"""A scratch database per bench run, migrated to head, and the figures benches print.

SQLite: a new file in a new temporary folder. PostgreSQL: a database whose name starts
with `hub_bench`, dropped and recreated (a bench never touches any other database).
"""

from __future__ import annotations

import math
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql
from sqlalchemy.engine import make_url

from hub.storage import migrations
from hub.storage.database import Database

DEFAULT_POSTGRESQL_URL = "postgresql://postgres@127.0.0.1:5432/hub_bench"
SCRATCH_PREFIX = "hub_bench"


@dataclass(frozen=True)
class Scratch:
    backend: str
    url: str  # SQLAlchemy URL the service uses (HUB_DATABASE_URL)
    folder: Path  # a temporary folder: the SQLite file, var/ and artifacts/ of the server

    @property
    def sqlite_path(self) -> str:
        return str(make_url(self.url).database)

    @property
    def libpq_url(self) -> str:
        """The URL psycopg connects with (no `+psycopg` driver suffix)."""
        return make_url(self.url).set(drivername="postgresql").render_as_string(hide_password=False)


@contextmanager
def scratch_database(
    backend: str, url: str | None = None, *, keep: bool = False
) -> Iterator[Scratch]:
    """A fresh, migrated database for one run; removed afterwards unless `keep`."""
    folder = Path(tempfile.mkdtemp(prefix="hub-bench-"))
    try:
        if backend == "sqlite":
            scratch = Scratch(backend, url or f"sqlite:///{folder / 'hub.db'}", folder)
            if Path(scratch.sqlite_path).exists():
                raise SystemExit(f"refusing to reuse an existing SQLite file: {scratch.url}")
        elif backend == "postgresql":
            scratch = Scratch(backend, url or DEFAULT_POSTGRESQL_URL, folder)
            _recreate_postgresql(scratch.libpq_url)
        else:
            raise SystemExit(f"unknown backend {backend!r}")
        database = Database(scratch.url)
        try:
            migrations.upgrade_to_head(database)
        finally:
            database.dispose()
        yield scratch
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)


def _recreate_postgresql(url: str) -> None:
    parsed = make_url(url)
    name = parsed.database or ""
    if not name.startswith(SCRATCH_PREFIX):
        raise SystemExit(
            f"refusing to drop database {name!r}: bench databases are named {SCRATCH_PREFIX}*"
        )
    admin = parsed.set(database="postgres").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)
