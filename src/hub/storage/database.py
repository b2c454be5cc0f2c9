"""Engines for SQLite and PostgreSQL, configured for coordination work.

SQLite: WAL, foreign keys on, a busy timeout, `synchronous=FULL` by default, and
write transactions opened with `BEGIN IMMEDIATE` so the write lock is taken before
anything is read (SQLAlchemy's documented pysqlite recipe: disable the driver's own
transaction handling and emit BEGIN ourselves). Writers are also serialized inside
the process by a lock: under 32 threads SQLite's busy handler alone sleeps and
retries, which costs two thirds of the throughput and tens of ms at p99.

PostgreSQL: psycopg 3 with a connection pool, READ COMMITTED, and row locks
(`SELECT … FOR UPDATE`, `SKIP LOCKED` when choosing among candidates).
"""

from __future__ import annotations

import contextlib
import os
import threading
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.orm import Session, sessionmaker

from hub.storage.outage import recycle_broken_sqlite_connections


def normalise_database_url(url: str) -> URL:
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


class Database:
    """One database: its engine, a session factory for reads and one for writes."""

    def __init__(
        self,
        url: str,
        *,
        sqlite_synchronous: str = "FULL",
        sqlite_busy_timeout_ms: int = 5000,
        pool_size: int = 20,
        echo: bool = False,
    ) -> None:
        self.url = normalise_database_url(url)
        self.dialect = self.url.get_backend_name()
        if self.dialect not in ("sqlite", "postgresql"):
            raise ValueError(f"unsupported database backend {self.dialect!r}")
        if self.is_sqlite:
            self.engine = self._sqlite_engine(sqlite_synchronous, sqlite_busy_timeout_ms, echo)
        else:
            self.engine = create_engine(
                self.url,
                echo=echo,
                pool_size=pool_size,
                max_overflow=pool_size,
                pool_pre_ping=True,
                pool_timeout=30,
            )
        self._write_lock: AbstractContextManager[Any] = (
            threading.Lock() if self.is_sqlite else nullcontext()
        )
        self._write_engine = self.engine.execution_options(hub_write=True)
        self._writer = sessionmaker(self._write_engine, expire_on_commit=False, autoflush=True)
        self._reader = sessionmaker(self.engine, expire_on_commit=False, autoflush=False)

    @property
    def is_sqlite(self) -> bool:
        return self.dialect == "sqlite"

    @property
    def is_postgresql(self) -> bool:
        return self.dialect == "postgresql"

    def _sqlite_engine(self, synchronous: str, busy_timeout_ms: int, echo: bool) -> Engine:
        database = self.url.database
        if database and database != ":memory:":
            # Best effort: if the folder cannot be made, connecting fails and /readyz says
            # so, rather than the process failing before it can report anything.
            with contextlib.suppress(OSError):
                Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            self.url,
            echo=echo,
            connect_args={"check_same_thread": False, "timeout": busy_timeout_ms / 1000},
            pool_size=20,
            max_overflow=40,
        )

        recycle_broken_sqlite_connections(engine)

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_connection: Any, _record: Any) -> None:
            # Let us emit BEGIN ourselves (pysqlite would otherwise defer it).
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
            cursor.execute(f"PRAGMA synchronous={synchronous}")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _on_begin(connection: Any) -> None:
            write = connection.get_execution_options().get("hub_write", False)
            connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

        return engine

    def write_session(self) -> tuple[Session, AbstractContextManager[Any]]:
        """A session for one write transaction and the in-process lock to hold around it."""
        return self._writer(), self._write_lock

    def write_connection(self) -> tuple[Connection, AbstractContextManager[Any]]:
        """A connection for a group of write operations (see `group_commit`) and the
        in-process lock to hold around its transaction."""
        return self._write_engine.connect(), self._write_lock

    def write_lock(self) -> AbstractContextManager[Any]:
        """The in-process lock that write transactions hold (SQLite; none on PostgreSQL),
        for work that writes outside a session (`hub.storage.upkeep.vacuum_sqlite`)."""
        return self._write_lock

    def read_session(self) -> Session:
        return self._reader()

    def ping(self) -> None:
        with self.engine.connect() as connection:
            connection.execute(text("SELECT 1"))

    def writable(self) -> bool:
        """Whether this process may write the SQLite file (and its journal) now; a
        PostgreSQL server reports a read-only state through its errors instead. A file
        made read-only under a running server fails its writes, and readiness says so
        (docs/ops/faults.md)."""
        if not self.is_sqlite or not self.url.database:
            return True
        database = Path(self.url.database)
        files = [database, database.with_name(database.name + "-wal")]
        return all(os.access(path, os.W_OK) for path in files if path.exists())

    def dispose(self) -> None:
        self.engine.dispose()
