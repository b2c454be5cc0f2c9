"""Group commit for SQLite: many operations' commits share one fsync.

SQLite has one writer at a time, and with `synchronous=FULL` every commit waits for
the disk. Under concurrent requests the writer thread takes every operation that is
waiting, runs them back to back in one transaction, each in its own savepoint, and
commits once. Each operation still sees the ones before it and still fails alone (its
savepoint rolls back); its caller hears the result only after the shared commit, so
nothing is reported that a crash could lose. With one request at a time a group is
one operation, exactly the plain transaction.

Each operation runs in the context (`contextvars`) of the caller that submitted it, so
its log lines and spans belong to that caller's request, not to the writer thread.
"""

from __future__ import annotations

import contextvars
import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection

from hub.metrics import GROUP_COMMIT_OPERATIONS
from hub.storage.database import Database
from hub.storage.unit_of_work import run_after_commit

log = logging.getLogger("hub.storage")

# Runs one operation inside the group's transaction (in its own savepoint) and returns
# its result; callbacks it leaves in the list run after the group's commit.
RunInGroup = Callable[[Callable[..., Any], Connection, list[Callable[[], None]]], Any]


@dataclass
class _Queued:
    operation: Callable[..., Any]
    future: Future[Any] = field(default_factory=Future)
    context: contextvars.Context = field(default_factory=contextvars.copy_context)


class GroupCommitWriter:
    def __init__(self, database: Database, run: RunInGroup, *, max_group: int = 64) -> None:
        self._database = database
        self._run = run
        self._max_group = max_group
        self._queue: queue.SimpleQueue[_Queued | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._stopped = False

    def submit(self, operation: Callable[..., Any]) -> Future[Any]:
        queued = _Queued(operation)
        with self._start_lock:
            if self._stopped:
                raise RuntimeError("the writer has stopped")
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="hub-write", daemon=True)
                self._thread.start()
            self._queue.put(queued)
        return queued.future

    def stop(self) -> None:
        """Finish what is queued, then end the thread."""
        with self._start_lock:
            self._stopped = True
            thread = self._thread
        if thread is not None:
            self._queue.put(None)
            thread.join()

    def _loop(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            group = [first]
            stop = False
            while len(group) < self._max_group:
                try:
                    queued = self._queue.get_nowait()
                except queue.Empty:
                    break
                if queued is None:
                    stop = True
                    break
                group.append(queued)
            GROUP_COMMIT_OPERATIONS.observe(len(group))
            try:
                self._commit_group(group)
            except BaseException as exc:  # the writer thread must outlive any one group
                log.exception("a write group failed outside its transaction")
                for queued in group:
                    if not queued.future.done():
                        queued.future.set_exception(exc)
            if stop:
                return

    def _commit_group(self, group: list[_Queued]) -> None:
        done: list[tuple[_Queued, Any]] = []
        deferred: list[Callable[[], None]] = []
        connection, lock = self._database.write_connection()
        with lock:
            try:
                transaction = connection.begin()  # BEGIN IMMEDIATE: the write lock, once
                for queued in group:
                    if not queued.future.set_running_or_notify_cancel():
                        continue
                    try:
                        done.append((queued, queued.context.run(
                            self._run, queued.operation, connection, deferred
                        )))
                    except BaseException as exc:  # this operation's own failure, typed or not
                        queued.future.set_exception(exc)
                        if connection.invalidated:
                            # The file could not be written (hub.storage.outage): the
                            # group's transaction is gone with the connection.
                            raise
                transaction.commit()
            except BaseException as exc:
                # Nothing of the group was committed: every operation that had succeeded
                # inside it, or had not run yet, fails with the reason (its caller may
                # retry with its key). A failed COMMIT can leave SQLite's transaction
                # open: drop the connection.
                connection.invalidate()
                log.warning(
                    "group commit of %d operation(s) failed: %s", len(group), type(exc).__name__
                )
                for queued in group:
                    if not queued.future.done():
                        queued.future.set_exception(exc)
                return
            finally:
                connection.close()
        run_after_commit(deferred)
        for queued, result in done:
            queued.future.set_result(result)
