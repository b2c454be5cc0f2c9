"""The unit of work: the one place a transaction opens, commits and rolls back.

An entry point (GraphQL resolver, web handler, CLI command) runs one service
function inside one unit of work. Service functions receive the open unit of work
and never commit; cross-module calls pass the same unit of work along, so one
operation is one transaction whatever modules it touches.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from types import TracebackType
from typing import Any

from sqlalchemy import Connection, Executable, event
from sqlalchemy.orm import Session

from hub.clock import Clock
from hub.settings import Settings
from hub.storage.database import Database

log = logging.getLogger("hub.storage")

# Statements that take a lock another operation waits on (PostgreSQL row locks and
# advisory locks): after the first, the operation's instant may be sampled.
_LOCKING = re.compile(r"\bFOR (?:NO KEY )?UPDATE\b|\bFOR (?:KEY )?SHARE\b|pg_advisory", re.I)


# Values a PostgreSQL snapshot unit reads just before its snapshot is taken, by name
# (`read_before_snapshot`).
_BEFORE_SNAPSHOT: dict[str, Executable] = {}


def read_before_snapshot(name: str, statement: Executable) -> None:
    """Have every PostgreSQL snapshot unit run `statement` (one scalar) just before its
    snapshot is taken, and keep the value as `before_snapshot(name)`: for a value that
    must be older than the snapshot (the event log's horizon), which no statement inside
    a REPEATABLE READ transaction can read."""
    _BEFORE_SNAPSHOT[name] = statement


class ClockReadBeforeLock(RuntimeError):
    """A write operation read coordinator time before taking any lock (raised only under
    the `strict_clock` setting, which the tests turn on): its instant could be older than
    the rows it then locks, and a lease that expired while it waited would look valid.
    Take the lock first, or say why the operation needs none (`UnitOfWork.no_lock_needed`)."""


class UnitOfWork:
    """One transaction. Write units hold the database's write lock for their lifetime.

    One instant per operation: `now()` samples the coordinator clock on its first call
    and returns that same instant for the rest of the unit (every check, the receipt,
    the events, the payload's `serverTime`). It is first called once the operation holds
    the locks its decisions depend on, so lock-wait time can never make an expired lease
    look valid: for write units on SQLite the lock is held from the start (`BEGIN
    IMMEDIATE`); on PostgreSQL service functions lock their rows (`SELECT … FOR UPDATE`,
    an advisory lock) before they read the clock, and under the `strict_clock` setting
    (the tests') a read before any lock fails. A write operation that decides nothing
    about a row another one may change at the same time says so (`no_lock_needed`). Read
    units lock nothing and decide nothing: they report as of their instant.

    The credential presented is judged when the unit opens (`opened_at`), before any
    lock: the request arrived then, and authenticating locks nothing.
    """

    def __init__(
        self,
        database: Database,
        clock: Clock,
        settings: Settings,
        *,
        write: bool,
        announce: Callable[[Sequence[str]], None] | None = None,
        group: tuple[Connection, list[Callable[[], None]]] | None = None,
        snapshot: bool = False,
    ) -> None:
        """`group`: run inside a group commit's transaction (`hub.storage.group_commit`),
        in a savepoint of its connection; after-commit callbacks go to its list, to run
        once the group has really committed.

        `snapshot` (read units only): every statement of the unit sees the database as
        of its first one, however long it runs (an export's pages). SQLite's read
        transactions are that already (WAL keeps the snapshot a transaction started
        with); PostgreSQL's READ COMMITTED takes a new snapshot per statement, so such a
        unit runs REPEATABLE READ, read only."""
        if snapshot and write:
            raise ValueError("a snapshot is for reading")
        self._snapshot = snapshot
        self._before_snapshot: dict[str, Any] = {}
        self.database = database
        self._group = group
        self.settings = settings
        self._announce = announce
        self.clock = clock
        self.write = write
        self._session: Session | None = None
        self._lock: AbstractContextManager[Any] | None = None
        self._before_commit: list[Callable[[UnitOfWork], None]] = []
        self._after_commit: list[Callable[[], None]] = []
        self.committed = False
        self.duration_s = 0.0
        self._started = 0.0
        self._instant: datetime | None = None
        self._opened_at: datetime | None = None
        # On SQLite a write unit holds the database's write lock from its start.
        self._locked = database.is_sqlite
        self._lock_free_reason: str | None = None
        # The guard is for PostgreSQL write units, where locks are taken row by row.
        self._strict = settings.strict_clock and write and not database.is_sqlite
        self._watched: tuple[Connection, Callable[..., None]] | None = None
        # Scratch space modules use to collect per-transaction work (e.g. pending events).
        self.pending: dict[str, Any] = {}
        # What the caller will not read of the operation's answer (the API: the payload
        # fields a request did not select); see `reads`.
        self.unread: frozenset[str] = frozenset()

    @property
    def session(self) -> Session:
        if self._session is None:
            raise RuntimeError("the unit of work is not open")
        return self._session

    @property
    def snapshot(self) -> bool:
        """Whether every statement of this unit sees the database as of its first one."""
        return self._snapshot

    @property
    def dialect(self) -> str:
        return self.database.dialect

    def now(self) -> datetime:
        """The operation's instant: sampled on the first call, after the locks."""
        if self._instant is None:
            if self._strict and not self._locked:
                raise ClockReadBeforeLock(
                    "coordinator time was read before the operation took any lock: lock "
                    "the rows it decides on first, or declare uow.no_lock_needed(why)"
                )
            self._instant = self.clock.now()
        return self._instant

    @property
    def opened_at(self) -> datetime:
        """When the unit opened, before any lock: for judging the credential presented
        (a token's expiry, a sign-in's idleness), never for a decision about locked rows."""
        if self._opened_at is None:
            raise RuntimeError("the unit of work is not open")
        return self._opened_at

    def reads(self, answer_field: str) -> bool:
        """Whether the caller reads this field of the operation's answer. An operation
        may leave out (None) a field that costs a read of its own when the caller will
        not read it; everything else it answers whole."""
        return answer_field not in self.unread

    def no_lock_needed(self, reason: str) -> None:
        """Declare that this write decides nothing about a row another operation may
        change concurrently (it creates rows no one else can reach yet, or reads only
        immutable ones), so its instant may be sampled without a lock. The reason is for
        the reader: say which."""
        self._lock_free_reason = reason
        self._locked = True

    def __enter__(self) -> UnitOfWork:
        self._started = time.perf_counter()
        self._opened_at = self.clock.now()
        if self._group is not None:
            # The group holds the write lock; this unit is a savepoint inside it.
            self._session = Session(
                bind=self._group[0],
                join_transaction_mode="create_savepoint",
                expire_on_commit=False,
                autoflush=True,
            )
            self._session.begin()
            self._session.connection()
        elif self.write:
            session, lock = self.database.write_session()
            lock.__enter__()
            self._lock = lock
            self._session = session
            try:
                session.begin()
                # Take SQLite's write lock now (BEGIN IMMEDIATE fires on first use).
                session.connection()
            except BaseException:
                self._release()
                raise
        else:
            if self._snapshot and self.database.is_postgresql:
                self._read_before_snapshot()
            self._session = self.database.read_session()
            self._session.begin()
            if self._snapshot and self.database.is_postgresql:
                self._session.connection(
                    execution_options={
                        "isolation_level": "REPEATABLE READ",
                        "postgresql_readonly": True,
                    }
                )
        if self._strict:
            self._watch(self._session.connection())
        return self

    def _read_before_snapshot(self) -> None:
        with self.database.read_session() as session:
            self._before_snapshot = {
                name: session.execute(statement).scalar_one()
                for name, statement in _BEFORE_SNAPSHOT.items()
            }
            session.rollback()

    def before_snapshot(self, name: str) -> Any:
        """The value `read_before_snapshot(name, …)` read for this snapshot unit."""
        return self._before_snapshot[name]

    def _watch(self, connection: Connection) -> None:
        """Note the first locking statement this unit runs (for the `strict_clock` guard)."""

        def saw(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
            if not self._locked and _LOCKING.search(statement):
                self._locked = True

        event.listen(connection, "before_cursor_execute", saw)
        self._watched = (connection, saw)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if self._session is not None and not self.committed:
                self._session.rollback()
        finally:
            self._release()
        if self.committed:
            if self._group is not None:
                self._group[1].extend(self._after_commit)
                return
            run_after_commit(self._after_commit)

    def _release(self) -> None:
        if self._watched is not None:
            connection, listener = self._watched
            event.remove(connection, "before_cursor_execute", listener)
            self._watched = None
        if self._session is not None:
            self._session.close()
        if self._lock is not None:
            self._lock.__exit__(None, None, None)
            self._lock = None
        self.duration_s = time.perf_counter() - self._started

    def before_commit(self, callback: Callable[[UnitOfWork], None]) -> None:
        """Run `callback` just before commit, inside the transaction (once per unit)."""
        if callback not in self._before_commit:
            self._before_commit.append(callback)

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run `callback` after a successful commit, outside the transaction."""
        self._after_commit.append(callback)

    def announce_events(self, streams: Sequence[str]) -> None:
        """Wake this process's event followers after commit (see `hub.events.feed`)."""
        if self._announce is not None:
            self._announce(streams)

    def commit(self) -> None:
        for callback in self._before_commit:
            callback(self)
        self.session.commit()
        self.committed = True


def run_after_commit(callbacks: Sequence[Callable[[], None]]) -> None:
    """Run after-commit work (wakes, cache fills). The data is committed whatever happens
    here, so a failing callback is logged, never turned into the operation's failure."""
    for callback in callbacks:
        try:
            callback()
        except Exception:
            log.exception("after-commit work failed")
