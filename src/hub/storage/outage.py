"""Telling a database that cannot serve now from a bug (docs/ops/faults.md).

The database going away (PostgreSQL stopped or restarting, the network to it cut), the
SQLite file turning read-only, the disk filling up, the pool or the write lock busy for
too long: none of these is the request's fault, and all of them pass. `unavailable`
names the reason when an exception is one of them; `Runtime` then raises
`hub.errors.Unavailable`, which every entry point answers as a retryable error instead
of an unexpected one. Anything else stays a bug (logged, masked).

`recycle_broken_sqlite_connections` covers what SQLite does not heal by itself: a
connection opened while the file could not be written stays read-only for its whole
life, so the pool would keep failing after the file is writable again. Such errors mark
the connection as lost, and the pool opens a fresh one.
"""

from __future__ import annotations

import errno
import sqlite3
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

# SQLite primary result codes (the low byte of the extended code).
_SQLITE_UNAVAILABLE = {
    5: "the database is busy",  # SQLITE_BUSY: the write lock was held past busy_timeout
    6: "the database is locked",  # SQLITE_LOCKED
    8: "the database is read-only",  # SQLITE_READONLY
    10: "the disk failed a read or write",  # SQLITE_IOERR (a read-only file, a full disk)
    13: "the disk is full",  # SQLITE_FULL
    14: "the database file cannot be opened",  # SQLITE_CANTOPEN
}
# The codes after which the connection itself must not be used again.
_SQLITE_RECYCLE = {8, 10, 14}

# PostgreSQL SQLSTATE classes and codes that say the server cannot serve now.
_POSTGRESQL_CLASSES = {
    "08": "the connection to PostgreSQL failed",  # connection exception
    "53": "PostgreSQL is out of resources",  # disk full, out of memory, too many connections
    "58": "PostgreSQL had a system error",  # I/O error
}
_POSTGRESQL_CODES = {
    "57P01": "PostgreSQL is shutting down",  # admin_shutdown
    "57P02": "PostgreSQL crashed",  # crash_shutdown
    "57P03": "PostgreSQL is starting",  # cannot_connect_now
    "25006": "PostgreSQL is read-only",  # read_only_sql_transaction (a standby)
}


def unavailable(exc: BaseException) -> str | None:
    """Why the database cannot serve, if `exc` says it cannot; None for anything else."""
    if isinstance(exc, PoolTimeout):
        return "every database connection is in use"
    if not isinstance(exc, DBAPIError):
        return None
    original = exc.orig
    if isinstance(original, sqlite3.Error):
        code = getattr(original, "sqlite_errorcode", None)
        if code is not None:
            return _SQLITE_UNAVAILABLE.get(code & 0xFF)
        return None
    sqlstate = getattr(original, "sqlstate", None)
    if isinstance(sqlstate, str):
        return _POSTGRESQL_CODES.get(sqlstate) or _POSTGRESQL_CLASSES.get(sqlstate[:2])
    if exc.connection_invalidated:
        return "the connection to the database was lost"
    # psycopg raises OperationalError without a SQLSTATE when it cannot connect at all
    # (refused, reset, the server gone mid-statement).
    if type(original).__name__ in ("OperationalError", "InterfaceError"):
        return "the database cannot be reached"
    return None


# A local file that cannot grow: the disk or the quota is full, or the process may not
# write files this large.
_DISK_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def disk_full(exc: BaseException) -> bool:
    """Whether writing a local file (an upload being staged) failed for want of room."""
    return isinstance(exc, OSError) and exc.errno in _DISK_FULL


def recycle_broken_sqlite_connections(engine: Engine) -> None:
    @event.listens_for(engine, "handle_error")
    def _recycle(context: Any) -> None:
        original = context.original_exception
        code = getattr(original, "sqlite_errorcode", None)
        if isinstance(original, sqlite3.Error) and code is not None and (
            code & 0xFF in _SQLITE_RECYCLE
        ):
            context.is_disconnect = True
