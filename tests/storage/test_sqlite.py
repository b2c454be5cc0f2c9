"""SQLite as the embedded default: WAL, foreign keys, a durable `synchronous`, a busy
timeout, and write transactions that take the write lock up front (`BEGIN IMMEDIATE`),
so coordinator time is sampled only once the lock is held (docs/design.md, "Tasks,
attempts, leases and generations")."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from hub.clock import ManualClock
from hub.runtime import Runtime
from hub.settings import Settings, load_settings
from hub.storage.database import Database
from hub.storage.unit_of_work import UnitOfWork

PRAGMAS = ("journal_mode", "foreign_keys", "synchronous", "busy_timeout")


def pragmas(database: Database) -> dict[str, object]:
    with database.engine.connect() as connection:
        return {name: connection.exec_driver_sql(f"PRAGMA {name}").scalar() for name in PRAGMAS}


@pytest.fixture
def sqlite_path(tmp_path: Path) -> Path:
    return tmp_path / "hub.db"


@pytest.fixture
def sqlite_database(sqlite_path: Path) -> Iterator[Database]:
    database = Database(f"sqlite:///{sqlite_path}")
    yield database
    database.dispose()


def unit_of_work(database: Database, *, write: bool) -> UnitOfWork:
    settings = Settings(database_url=str(database.url), _env_file=None)  # type: ignore[call-arg]
    return UnitOfWork(database, ManualClock(), settings, write=write)


def outside_connection(path: Path) -> sqlite3.Connection:
    """Another process's view of the file: no busy wait, so a held lock shows at once."""
    connection = sqlite3.connect(path, timeout=0, isolation_level=None)
    connection.execute("PRAGMA busy_timeout=0")
    return connection


def test_every_connection_has_wal_foreign_keys_full_sync_and_a_busy_timeout(
    sqlite_database: Database,
) -> None:
    expected = {"journal_mode": "wal", "foreign_keys": 1, "synchronous": 2, "busy_timeout": 5000}
    assert pragmas(sqlite_database) == expected
    # Not only the first pooled connection: two held at once both have them.
    with sqlite_database.engine.connect() as first, sqlite_database.engine.connect() as second:
        for connection in (first, second):
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 2


def test_settings_choose_normal_sync_and_the_busy_timeout(
    clean_environment: None, monkeypatch: pytest.MonkeyPatch, sqlite_path: Path
) -> None:
    monkeypatch.setenv("HUB_DATABASE_URL", f"sqlite:///{sqlite_path}")
    monkeypatch.setenv("HUB_SQLITE_SYNCHRONOUS", "NORMAL")
    monkeypatch.setenv("HUB_SQLITE_BUSY_TIMEOUT_MS", "1234")
    runtime = Runtime(load_settings())
    try:
        found = pragmas(runtime.database)
    finally:
        runtime.close()
    assert found == {
        "journal_mode": "wal",
        "foreign_keys": 1,
        "synchronous": 1,
        "busy_timeout": 1234,
    }


def test_write_unit_of_work_holds_the_write_lock_from_its_first_moment(
    sqlite_database: Database, sqlite_path: Path
) -> None:
    other = outside_connection(sqlite_path)
    try:
        with unit_of_work(sqlite_database, write=True):
            # Nothing has been read or written yet, and still no one else can write...
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("BEGIN IMMEDIATE")
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("CREATE TABLE intruder (id INTEGER)")
            # ...while readers still read (WAL).
            assert other.execute("SELECT count(*) FROM sqlite_master").fetchone() is not None
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
    finally:
        other.close()


def test_read_unit_of_work_does_not_take_the_write_lock(
    sqlite_database: Database, sqlite_path: Path
) -> None:
    other = outside_connection(sqlite_path)
    try:
        with unit_of_work(sqlite_database, write=False) as uow:
            uow.session.connection().exec_driver_sql("SELECT count(*) FROM sqlite_master")
            other.execute("BEGIN IMMEDIATE")
            other.execute("ROLLBACK")
    finally:
        other.close()


def test_second_writer_in_the_process_waits_for_the_first(sqlite_database: Database) -> None:
    entered = threading.Event()
    done = threading.Event()

    def second_writer() -> None:
        with unit_of_work(sqlite_database, write=True):
            entered.set()
        done.set()

    with unit_of_work(sqlite_database, write=True):
        thread = threading.Thread(target=second_writer)
        thread.start()
        assert not entered.wait(0.3), "a second write unit of work began while one was open"
    assert done.wait(10)
    thread.join(10)
    assert entered.is_set()


def test_rolled_back_write_releases_the_lock(sqlite_database: Database, sqlite_path: Path) -> None:
    with pytest.raises(RuntimeError), unit_of_work(sqlite_database, write=True):
        raise RuntimeError("the operation failed")
    other = outside_connection(sqlite_path)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
    finally:
        other.close()
    with unit_of_work(sqlite_database, write=True) as uow:  # the in-process lock is free too
        uow.commit()
