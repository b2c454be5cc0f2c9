"""The unit of work: the one place a transaction opens, commits and rolls back.

An entry point (GraphQL resolver, web handler, CLI command) runs one service
function inside one unit of work. Service functions receive the open unit of work
and never commit; cross-module calls pass the same unit of work along, so one
operation is one transaction whatever modules it touches.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from types import TracebackType
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.orm import Session

from hub.clock import Clock
from hub.settings import Settings
from hub.storage.database import Database

log = logging.getLogger("hub.storage")


class UnitOfWork:
    """One transaction. Write units hold the database's write lock for their lifetime.

    `now()` samples the coordinator clock. For write units on SQLite the lock is held
    from the start (`BEGIN IMMEDIATE`); on PostgreSQL service functions call `now()`
    after taking their row locks, so lock-wait time can never make an expired lease
    look valid.
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
    ) -> None:
        """`group`: run inside a group commit's transaction (`hub.storage.group_commit`),
        in a savepoint of its connection; after-commit callbacks go to its list, to run
        once the group has really committed."""
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
        # Scratch space modules use to collect per-transaction work (e.g. pending events).
        self.pending: dict[str, Any] = {}

    @property
    def session(self) -> Session:
        if self._session is None:
            raise RuntimeError("the unit of work is not open")
        return self._session

    @property
    def dialect(self) -> str:
        return self.database.dialect

    def now(self) -> datetime:
        return self.clock.now()

    def __enter__(self) -> UnitOfWork:
        self._started = time.perf_counter()
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
            self._session = self.database.read_session()
            self._session.begin()
        return self

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
