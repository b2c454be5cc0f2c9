"""The running service's wiring: settings, database, clock, artifact store and the
event signal.

`Runtime.write` and `Runtime.read` are where every operation gets its one
transaction; the API, the web layer and the CLI all go through them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import logging
import threading
from collections.abc import AsyncGenerator, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import Any, TypeVar, cast

from opentelemetry.trace import Span
from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from hub.artifacts.service import Store, store_for
from hub.clock import Clock, SystemClock
from hub.draining import Drain
from hub.errors import Conflict, HubError, Unavailable
from hub.events.feed import EventSignal
from hub.events.listener import listen_for_events
from hub.events.notifier import Notifier
from hub.metrics import DB_TRANSACTIONS
from hub.observability import tracing
from hub.settings import Settings
from hub.storage.database import Database
from hub.storage.group_commit import GroupCommitWriter
from hub.storage.outage import unavailable
from hub.storage.unit_of_work import UnitOfWork

T = TypeVar("T")
log = logging.getLogger("hub.runtime")

# PostgreSQL deadlock_detected and serialization_failure: safe to run the operation again,
# because nothing of the failed attempt was committed.
_RETRYABLE_SQLSTATES = {"40P01", "40001"}
_ATTEMPTS = 4
# Streamed reads (`Runtime.astream`): how many run at once, how many items each may
# produce ahead of its reader, and how often a blocked producer looks whether its
# reader is gone.
_STREAM_THREADS = 4
_STREAM_AHEAD = 4
_STREAM_POLL_SECONDS = 0.5


def _observe(kind: str, outcome: str, uow: UnitOfWork, span: Span) -> None:
    # The metric's outcomes predate `refused`: a domain error counts as an error there.
    DB_TRANSACTIONS.labels(kind, "error" if outcome == "refused" else outcome).observe(
        uow.duration_s
    )
    span.set_attribute("hub.transaction.outcome", outcome)


class Runtime:
    def __init__(
        self,
        settings: Settings,
        *,
        database: Database | None = None,
        clock: Clock | None = None,
        store: Store | None = None,
    ) -> None:
        self.settings = settings
        self.database = database or Database(
            settings.database_url,
            sqlite_synchronous=settings.sqlite_synchronous,
            sqlite_busy_timeout_ms=settings.sqlite_busy_timeout_ms,
            pool_size=settings.database_pool_size,
        )
        self.clock: Clock = clock or SystemClock()
        # Where artifact bytes live (`artifacts.store_for`: the filesystem by default).
        self.store: Store = store if store is not None else store_for(settings)
        # SQLite has one writer at a time: requests' writes go to one thread that commits
        # them in groups (one fsync per group). PostgreSQL writes run side by side.
        self._group_writer = (
            GroupCommitWriter(self.database, self._write_in_group)
            if self.database.is_sqlite
            else None
        )
        self._writers = (
            None
            if self._group_writer is not None
            else ThreadPoolExecutor(
                max_workers=settings.database_pool_size, thread_name_prefix="hub-write"
            )
        )
        self._readers = ThreadPoolExecutor(
            max_workers=settings.database_pool_size, thread_name_prefix="hub-read"
        )
        # Long reads that stream (exports) run beside the request reads, not in their pool.
        self._streams = ThreadPoolExecutor(
            max_workers=_STREAM_THREADS, thread_name_prefix="hub-stream"
        )
        self.event_signal = EventSignal()
        # The server process's stop (`hub.draining`): streams end when it stops.
        self.drain = Drain()
        # PostgreSQL: other server processes hear this one's commits through NOTIFY, sent
        # after commit (`hub.events.notifier`).
        self._notifier = Notifier(self.database.engine) if self.database.is_postgresql else None
        self._background: list[Callable[[Runtime], AbstractAsyncContextManager[None]]] = []
        if self.database.is_postgresql:
            # Other server processes commit too: hear them through LISTEN (docs/design.md,
            # "Scale").
            self.add_background(lambda rt: listen_for_events(rt.database.url, rt.event_signal))

    def add_background(
        self, factory: Callable[[Runtime], AbstractAsyncContextManager[None]]
    ) -> None:
        """Register a task the server runs for its lifetime (listener, pruner)."""
        self._background.append(factory)

    def background_tasks(self) -> list[AbstractAsyncContextManager[None]]:
        return [factory(self) for factory in self._background]

    def unit_of_work(
        self,
        *,
        write: bool,
        group: tuple[Connection, list[Callable[[], None]]] | None = None,
        snapshot: bool = False,
    ) -> UnitOfWork:
        return UnitOfWork(
            self.database,
            self.clock,
            self.settings,
            write=write,
            announce=self._announce,
            group=group,
            snapshot=snapshot,
        )

    def _announce(self, streams: Sequence[str]) -> None:
        """After a commit that appended events to `streams`: wake the followers here, and
        in the other processes."""
        self.event_signal.announce(streams)
        if self._notifier is not None:
            self._notifier.notify(streams)

    def write(self, operation: Callable[[UnitOfWork], T]) -> T:
        """Run `operation` in one write transaction and commit it, or roll it all back."""
        with unavailable_when_down():
            return self._write(operation, None)

    def _write_in_group(
        self,
        operation: Callable[[UnitOfWork], T],
        connection: Connection,
        deferred: list[Callable[[], None]],
    ) -> T:
        return self._write(operation, (connection, deferred))

    def _write(
        self,
        operation: Callable[[UnitOfWork], T],
        group: tuple[Connection, list[Callable[[], None]]] | None,
    ) -> T:
        for attempt in range(_ATTEMPTS):
            uow = self.unit_of_work(write=True, group=group)
            outcome = "error"
            with self._transaction_span("write", group is not None) as span:
                try:
                    with uow:
                        result = operation(uow)
                        uow.commit()
                    outcome = "commit"
                    return result
                except IntegrityError as exc:
                    # A concurrent writer got there first (same idempotency key, a unique
                    # or one-active-attempt index). Running again re-reads the state and
                    # answers as a replay or a typed conflict; if it still fails, say so,
                    # typed.
                    if attempt == 0:
                        outcome = "retry"
                        continue
                    # The constraint's message (not the statement or its parameters).
                    log.warning(
                        "integrity conflict after retry: %s", str(exc.orig).splitlines()[0]
                    )
                    raise Conflict("the change conflicts with concurrently stored data") from None
                except DBAPIError as exc:
                    code = getattr(exc.orig, "sqlstate", None)
                    if code in _RETRYABLE_SQLSTATES and attempt + 1 < _ATTEMPTS:
                        outcome = "retry"
                        continue
                    raise
                except HubError:
                    outcome = "refused"
                    raise
                finally:
                    _observe("write", outcome, uow, span)
        raise AssertionError("unreachable")

    def read(self, operation: Callable[[UnitOfWork], T]) -> T:
        uow = self.unit_of_work(write=False)
        outcome = "error"
        with self._transaction_span("read", False) as span:
            try:
                with unavailable_when_down(), uow:
                    result = operation(uow)
                outcome = "ok"
                return result
            except HubError:
                outcome = "refused"
                raise
            finally:
                _observe("read", outcome, uow, span)

    def _transaction_span(self, kind: str, grouped: bool) -> AbstractContextManager[Span]:
        """A unit of work's span: a child of the operation's, on whatever thread it runs
        (its caller's context is handed over: `awrite`, `aread`). A domain error is an
        answer (outcome `refused`), not a failure of the span."""
        return tracing.span(
            f"transaction {kind}",
            attributes={
                "db.system.name": self.database.dialect,
                "hub.transaction.kind": kind,
                "hub.transaction.group_commit": grouped,
            },
            expected=(HubError,),
        )

    async def awrite(self, operation: Callable[[UnitOfWork], T]) -> T:
        """`write` off the event loop. A caller cancelled before its operation starts
        cancels it; once started, the operation runs to its commit or rollback and only
        its answer is dropped."""
        if self._group_writer is not None:
            # The writer thread runs it in this context (`GroupCommitWriter.submit`).
            with unavailable_when_down():
                return cast(T, await asyncio.wrap_future(self._group_writer.submit(operation)))
        assert self._writers is not None
        # Threads do not inherit context variables: the request's log context and its
        # current span go along by hand (docs/ops/logs-and-traces.md).
        context = contextvars.copy_context()
        return await asyncio.get_running_loop().run_in_executor(
            self._writers, context.run, self.write, operation
        )

    async def aread(self, operation: Callable[[UnitOfWork], T]) -> T:
        context = contextvars.copy_context()
        return await asyncio.get_running_loop().run_in_executor(
            self._readers, context.run, self.read, operation
        )

    async def astream(
        self, operation: Callable[[UnitOfWork], Iterator[T]], *, ahead: int = _STREAM_AHEAD
    ) -> AsyncGenerator[T, None]:
        """The items `operation` yields, produced in one snapshot read transaction on a
        thread of their own and handed to the event loop as they come (an export's pages).

        At most `ahead` items wait to be taken, so a slow reader holds back the producer
        and memory stays bounded. The transaction lasts as long as the stream: it ends
        when the operation is exhausted or fails (the failure is raised here, in order),
        or when the consumer stops early (the producer is told, and closes the operation
        at its next item)."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue(maxsize=ahead)
        stopped = threading.Event()

        def hand(kind: str, value: Any) -> bool:
            """Put one entry on the queue from the producer's thread; False once the
            consumer has gone."""
            if stopped.is_set():
                return False
            put = queue.put((kind, value))
            try:
                future = asyncio.run_coroutine_threadsafe(put, loop)
            except RuntimeError:  # the loop has closed: nobody reads any more
                put.close()
                return False
            while not stopped.is_set() and not loop.is_closed():
                try:
                    future.result(timeout=_STREAM_POLL_SECONDS)
                    return True
                except concurrent.futures.TimeoutError:
                    continue
            with contextlib.suppress(RuntimeError):  # a closed loop takes no cancellation
                future.cancel()
            return False

        def produce() -> None:
            try:
                uow = self.unit_of_work(write=False, snapshot=True)
                outcome = "error"
                try:
                    with unavailable_when_down(), uow:
                        items = operation(uow)
                        try:
                            for item in items:
                                if not hand("item", item):
                                    break
                        finally:
                            close = getattr(items, "close", None)
                            if close is not None:
                                close()
                    outcome = "ok"
                finally:
                    DB_TRANSACTIONS.labels("read", outcome).observe(uow.duration_s)
            except BaseException as failure:  # handed to the consumer, raised there
                hand("error", failure)
                return
            hand("end", None)

        self._streams.submit(contextvars.copy_context().run, produce)
        try:
            while True:
                kind, value = await queue.get()
                if kind == "item":
                    yield cast(T, value)
                elif kind == "error":
                    raise value
                else:
                    return
        finally:
            stopped.set()
            # Free a put the producer may be waiting on, so it sees that we are gone.
            while not queue.empty():
                queue.get_nowait()

    def release_threads(self) -> None:
        """Stop the worker threads (after the server using them has stopped)."""
        if self._group_writer is not None:
            self._group_writer.stop()
        if self._writers is not None:
            self._writers.shutdown(wait=True)
        self._readers.shutdown(wait=True)
        self._streams.shutdown(wait=True)
        if self._notifier is not None:
            # Every write has committed: send their last wakes before the pool goes.
            self._notifier.close()

    def close(self) -> None:
        self.release_threads()
        self.database.dispose()


@contextlib.contextmanager
def unavailable_when_down() -> Iterator[None]:
    """A database that cannot serve now becomes `Unavailable` (retryable, typed); any
    other failure passes through as it is (`hub.storage.outage`)."""
    try:
        yield
    except (DBAPIError, PoolTimeout) as exc:
        reason = unavailable(exc)
        if reason is None:
            raise
        log.warning("database unavailable: %s", reason)
        raise Unavailable(reason) from None
