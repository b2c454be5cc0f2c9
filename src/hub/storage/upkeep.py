"""The database's own upkeep, below the modules: SQLite's WAL checkpoints and `VACUUM`,
PostgreSQL's vacuum state, the engine's integrity checks, sizes and row counts
(`hub maintenance vacuum | check | stats`, docs/ops/maintenance.md).

SQLite's checkpoint and `VACUUM` cannot run inside a transaction, and every connection
of the engine opens one on first use (`database._on_begin`), so they run on the driver
connection itself, which the engine leaves in autocommit (`isolation_level = None`).
PostgreSQL's `VACUUM` likewise runs on an AUTOCOMMIT connection.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import MetaData, func, inspect, select, text
from sqlalchemy import table as named_table

from hub.storage.database import Database
from hub.storage.invariants import Breach


class StorageInvariant(StrEnum):
    # SQLite's `PRAGMA integrity_check`: pages, b-trees and indexes agree.
    INTEGRITY = "storage.integrity"
    # SQLite's `PRAGMA foreign_key_check`: every reference names a row.
    FOREIGN_KEYS = "storage.foreign_keys"
    # Every index the schema declares exists (and on PostgreSQL is valid): the partial
    # unique indexes are what hold "one current attempt per task" and its like.
    INDEXES = "storage.indexes"


@dataclass(frozen=True)
class SqliteFiles:
    """The sizes of a SQLite database's file and its write-ahead log, in bytes."""

    database_bytes: int
    wal_bytes: int


@dataclass(frozen=True)
class Checkpoint:
    """What `PRAGMA wal_checkpoint` answered: whether it was kept from finishing by
    readers or writers (`busy`), the WAL's frames, and how many are in the database."""

    busy: bool
    wal_frames: int
    checkpointed_frames: int


@dataclass(frozen=True)
class Vacuumed:
    before: SqliteFiles
    after: SqliteFiles


@dataclass(frozen=True)
class TableVacuumState:
    """A PostgreSQL table's dead rows and when it was last vacuumed (pg_stat_user_tables)."""

    table: str
    live_rows: int
    dead_rows: int
    last_vacuum: datetime | None
    last_autovacuum: datetime | None

    @property
    def dead_share(self) -> float:
        total = self.live_rows + self.dead_rows
        return self.dead_rows / total if total else 0.0


@dataclass(frozen=True)
class VacuumAdvice:
    """PostgreSQL: whether autovacuum runs, and each table's dead rows, most first."""

    autovacuum: str
    tables: list[TableVacuumState]


def sqlite_path(database: Database) -> Path | None:
    """The SQLite database's file (None: PostgreSQL, or an in-memory database)."""
    name = database.url.database if database.is_sqlite else None
    return Path(name) if name and name != ":memory:" else None


def sqlite_files(database: Database) -> SqliteFiles:
    path = sqlite_path(database)
    if path is None:
        return SqliteFiles(0, 0)
    wal = path.with_name(path.name + "-wal")
    return SqliteFiles(_size(path), _size(wal))


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


@contextmanager
def _driver_connection(database: Database) -> Iterator[Any]:
    """A driver connection in autocommit (SQLite: as the engine configures it)."""
    raw = database.engine.raw_connection()
    try:
        yield raw.driver_connection
    finally:
        raw.close()


def checkpoint(database: Database, mode: Literal["PASSIVE", "TRUNCATE"]) -> Checkpoint:
    """SQLite: copy the WAL into the database. PASSIVE copies what it can without waiting
    for anyone; TRUNCATE waits (up to the busy timeout) for readers and writers, copies
    everything and empties the WAL file."""
    with _driver_connection(database) as connection:
        busy, frames, done = connection.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
    return Checkpoint(bool(busy), int(frames), int(done))


def vacuum_sqlite(database: Database) -> Vacuumed:
    """SQLite: checkpoint, rewrite the file without its free pages (`VACUUM`), and
    checkpoint again: in WAL mode the rewritten pages go through the log, and the file
    shrinks only when they are copied back. Needs free disk space of about the
    database's size, and holds the write lock while it runs."""
    before = sqlite_files(database)
    with database.write_lock(), _driver_connection(database) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.execute("VACUUM")
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return Vacuumed(before, sqlite_files(database))


def _hub_tables(database: Database) -> list[str]:
    return sorted(inspect(database.engine).get_table_names())


def vacuum_advice(database: Database) -> VacuumAdvice:
    """PostgreSQL: autovacuum's setting and the dead rows of the hub's tables."""
    with database.engine.connect() as connection:
        autovacuum = str(connection.execute(text("SHOW autovacuum")).scalar_one())
        rows = connection.execute(
            text(
                "SELECT relname, n_live_tup, n_dead_tup, last_vacuum, last_autovacuum "
                "FROM pg_stat_user_tables WHERE schemaname = current_schema() "
                "ORDER BY n_dead_tup DESC, relname"
            )
        ).all()
    return VacuumAdvice(
        autovacuum,
        [TableVacuumState(str(r[0]), int(r[1]), int(r[2]), r[3], r[4]) for r in rows],
    )


def vacuum_analyze(database: Database) -> list[str]:
    """PostgreSQL: `VACUUM (ANALYZE)` of the hub's tables (never `VACUUM FULL`, which
    locks each table out while it rewrites it); the tables vacuumed."""
    tables = _hub_tables(database)
    with database.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        preparer = database.engine.dialect.identifier_preparer
        connection.execute(
            text("VACUUM (ANALYZE) " + ", ".join(preparer.quote(name) for name in tables))
        )
    return tables


def integrity_breaches(database: Database) -> list[Breach]:
    """SQLite: `PRAGMA integrity_check` and `PRAGMA foreign_key_check` (they read every
    page: minutes on a large file). PostgreSQL has no such cheap check of its pages
    (amcheck is an extension the hub does not assume); its indexes are checked by
    `index_breaches`."""
    if not database.is_sqlite:
        return []
    with _driver_connection(database) as connection:
        problems = [row[0] for row in connection.execute("PRAGMA integrity_check").fetchall()]
        dangling = connection.execute("PRAGMA foreign_key_check").fetchall()
    breaches = [
        Breach(StorageInvariant.INTEGRITY, "database", problem)
        for problem in problems
        if problem != "ok"
    ]
    breaches += [
        Breach(
            StorageInvariant.FOREIGN_KEYS,
            f"{table} row {rowid}",
            f"references a missing row of {parent} (foreign key {index})",
        )
        for table, rowid, parent, index in dangling
    ]
    return breaches


def index_breaches(database: Database, metadata: MetaData) -> list[Breach]:
    """Every index `metadata` declares that the database lacks (or, PostgreSQL, holds
    invalid: a failed `CREATE INDEX CONCURRENTLY` leaves one)."""
    inspector = inspect(database.engine)
    present = set(inspector.get_table_names())
    breaches = []
    for table in metadata.sorted_tables:
        if table.name not in present:
            breaches.append(Breach(StorageInvariant.INDEXES, f"table {table.name}", "missing"))
            continue
        found = {index["name"] for index in inspector.get_indexes(table.name)}
        for index in sorted(table.indexes, key=lambda index: str(index.name)):
            if index.name not in found:
                breaches.append(
                    Breach(StorageInvariant.INDEXES, f"index {index.name}", "missing")
                )
    if database.is_postgresql:
        with database.engine.connect() as connection:
            invalid = connection.execute(
                text(
                    "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                    "JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE n.nspname = current_schema() AND NOT i.indisvalid ORDER BY 1"
                )
            ).scalars()
            breaches += [
                Breach(StorageInvariant.INDEXES, f"index {name}", "invalid (rebuild it)")
                for name in invalid
            ]
    return breaches


def table_rows(database: Database) -> dict[str, int]:
    """Each of the database's tables and its row count (exact: `count(*)`)."""
    with database.engine.connect() as connection:
        return {
            name: int(
                connection.execute(select(func.count()).select_from(named_table(name))).scalar_one()
            )
            for name in _hub_tables(database)
        }


def database_bytes(database: Database) -> int:
    """The database's size: SQLite's file (its WAL apart), PostgreSQL's
    `pg_database_size` of the whole database (other schemas' tables included)."""
    if database.is_sqlite:
        return sqlite_files(database).database_bytes
    with database.engine.connect() as connection:
        return int(
            connection.execute(text("SELECT pg_database_size(current_database())")).scalar_one()
        )
