"""Following a stream of the event log: replay, then live, with no gap and no duplicate.

A follower keeps exactly one cursor (the last sequence number it yielded) and always
reads from the database, so the switch from replay to live cannot lose or repeat an
event: there is no switch, only "read after the cursor, then wait for a wake". Commits
in this process wake followers at once (`EventSignal`); commits in other processes wake
them through PostgreSQL `LISTEN/NOTIFY` (`hub.events.listener`), and a slow poll is the
backstop for a missed notification.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from functools import partial

from hub.events.service import EventRecord, list_events
from hub.storage.unit_of_work import UnitOfWork

# Runs one read transaction off the event loop (`Runtime.aread` fits).
ReadEvents = Callable[[Callable[[UnitOfWork], list[EventRecord]]], Awaitable[list[EventRecord]]]

_Waiter = tuple[asyncio.AbstractEventLoop, asyncio.Event]


class EventSignal:
    """Wakes the asyncio followers of a stream when a transaction touching it commits.

    Thread-safe: commits announce from worker threads, followers wait on event loops.
    A wake carries no data; it only tells a follower to read after its cursor again.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: dict[str, set[_Waiter]] = {}

    def announce(self, streams: Sequence[str]) -> None:
        with self._lock:
            targets = [w for stream in streams for w in self._waiters.get(stream, ())]
        _wake(targets)

    def announce_all(self) -> None:
        """Wake every follower: after the listener reconnects, notifications sent while
        it was away are lost, so everyone re-reads rather than waiting for the poll."""
        with self._lock:
            targets = [w for waiters in self._waiters.values() for w in waiters]
        _wake(targets)

    @contextmanager
    def subscribe(self, stream: str) -> Iterator[asyncio.Event]:
        waiter: _Waiter = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiters.setdefault(stream, set()).add(waiter)
        try:
            yield waiter[1]
        finally:
            with self._lock:
                waiters = self._waiters.get(stream)
                if waiters is not None:
                    waiters.discard(waiter)
                    # Streams come and go with subscribers; keep no empty entries behind.
                    if not waiters:
                        del self._waiters[stream]

    def follower_count(self) -> int:
        with self._lock:
            return sum(len(waiters) for waiters in self._waiters.values())


def _wake(targets: list[_Waiter]) -> None:
    for loop, event in targets:
        # A follower that unsubscribed between the snapshot and here gets one harmless
        # extra wake; a closed loop means the follower is gone.
        with suppress(RuntimeError):
            loop.call_soon_threadsafe(event.set)


async def follow(
    read: ReadEvents,
    signal: EventSignal,
    *,
    stream: str,
    after: int = 0,
    batch: int = 500,
    poll_seconds: float = 2.0,
) -> AsyncGenerator[EventRecord, None]:
    """Yield every event of `stream` with sequence > `after`, forever, in order.

    Callers should close the generator (`contextlib.aclosing`) when they stop, so the
    follower leaves the signal at once rather than when it is garbage-collected.
    """
    cursor = after
    with signal.subscribe(stream) as wake:
        while True:
            # Clear before reading: a commit that lands during the read sets it again,
            # so the wait below returns at once and the next read picks it up.
            wake.clear()
            page = await read(partial(list_events, stream=stream, after=cursor, limit=batch))
            for record in page:
                cursor = record.seq
                yield record
            if len(page) == batch:
                continue
            with suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), poll_seconds)
