"""A scratch database per bench run, migrated to head, rows written into it in bulk, and
the figures benches print.

SQLite: a new file in a new temporary folder. PostgreSQL: a database whose name starts
with `hub_bench`, dropped and recreated, and dropped again at the end unless kept (a
bench never touches any other database).
"""

from __future__ import annotations

import json
import math
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql
from sqlalchemy import Table
from sqlalchemy.engine import make_url

from hub.runtime import Runtime
from hub.settings import Settings
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

    def runtime(self, **settings: Any) -> Runtime:
        """hub's runtime on this database, its var/ and artifacts/ in the scratch folder
        (no .env read); `settings` override the rest."""
        return Runtime(
            Settings(
                database_url=self.url,
                var_dir=self.folder / "var",
                artifact_dir=self.folder / "artifacts",
                _env_file=None,  # type: ignore[call-arg]
                **settings,
            )
        )

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
    made: Scratch | None = None
    try:
        if backend == "sqlite":
            scratch = Scratch(backend, url or f"sqlite:///{folder / 'hub.db'}", folder)
            if Path(scratch.sqlite_path).exists():
                raise SystemExit(f"refusing to reuse an existing SQLite file: {scratch.url}")
        elif backend == "postgresql":
            scratch = Scratch(backend, url or DEFAULT_POSTGRESQL_URL, folder)
            _drop_postgresql(scratch.libpq_url)
            made = scratch
            _create_postgresql(scratch.libpq_url)
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
            if made is not None:
                _drop_postgresql(made.libpq_url)


def _drop_postgresql(url: str) -> None:
    """Drop a scratch database (never one not named like one), its sessions ended."""
    name = make_url(url).database or ""
    if not name.startswith(SCRATCH_PREFIX):
        raise SystemExit(
            f"refusing to drop database {name!r}: bench databases are named {SCRATCH_PREFIX}*"
        )
    with psycopg.connect(_admin_url(url), autocommit=True) as connection:
        connection.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


def _create_postgresql(url: str) -> None:
    name = make_url(url).database or ""
    with psycopg.connect(_admin_url(url), autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def _admin_url(url: str) -> str:
    return make_url(url).set(database="postgres").render_as_string(hide_password=False)


def bulk_write(scratch: Scratch, table: Table, rows: list[dict[str, Any]]) -> None:
    """Rows straight through the driver (executemany / COPY): seconds, not minutes.

    Values are stored as the service's column types store them: on SQLite, UTC
    datetimes as naive `YYYY-MM-DD HH:MM:SS.ffffff` text and JSON as text.
    """
    columns = list(rows[0])
    if scratch.backend == "sqlite":

        def stored(value: Any) -> Any:
            if isinstance(value, datetime):
                return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
            if isinstance(value, list | dict):
                return json.dumps(value)
            return value

        marks = ", ".join("?" for _ in columns)
        with sqlite3.connect(scratch.sqlite_path, isolation_level=None) as connection:
            connection.execute("BEGIN")
            connection.executemany(
                f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({marks})",
                ([stored(row[column]) for column in columns] for row in rows),
            )
            connection.execute("COMMIT")
        return
    with psycopg.connect(scratch.libpq_url) as server, server.cursor() as cursor:
        statement = f"COPY {table.name} ({', '.join(columns)}) FROM STDIN"
        with cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row(
                    [json.dumps(v) if isinstance(v, list | dict) else v for v in row.values()]
                )


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)
