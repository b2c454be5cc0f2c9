"""Following a stream of the event log: replay, then live, with no gap and no duplicate.

A follower keeps exactly one cursor (the last sequence number it yielded) and always
reads from the database, so the switch from replay to live cannot lose or repeat an
event. Commits in this process wake followers at once (`EventSignal`); commits in
other processes wake them through PostgreSQL `LISTEN/NOTIFY` (`hub.events.listener`),
and a slow poll is the backstop for a missed notification.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

from hub.events.service import EventRecord, list_events
from hub.storage.unit_of_work import UnitOfWork

T = TypeVar("T")
ReadRunner = Callable[[Callable[[UnitOfWork], T]], "asyncio.Future[T] | object"]


class EventSignal:
    """Wakes the asyncio followers of a stream when a transaction touching it commits."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiters: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}

    def announce(self, streams: Sequence[str]) -> None:
        with self._lock:
            targets = [w for stream in streams for w in self._waiters.get(stream, ())]
        for loop, event in targets:
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # the follower's loop has closed
                continue

    @contextmanager
    def subscribe(self, stream: str) -> Iterator[asyncio.Event]:
        waiter = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiters.setdefault(stream, set()).add(waiter)
        try:
            yield waiter[1]
        finally:
            with self._lock:
                self._waiters.get(stream, set()).discard(waiter)

    def follower_count(self) -> int:
        with self._lock:
            return sum(len(waiters) for waiters in self._waiters.values())


async def follow(
    read: Callable[[Callable[[UnitOfWork], list[EventRecord]]], "asyncio.Future[list[EventRecord]]"],
    signal: EventSignal,
    *,
    stream: str,
    after: int = 0,
    batch: int = 500,
    poll_seconds: float = 2.0,
) -> AsyncIterator[EventRecord]:
    """Yield every event of `stream` with sequence > `after`, forever, in order."""
    cursor = after
    with signal.subscribe(stream) as wake:
        while True:
            # Clear before reading: a commit that lands during the read sets it again.
            wake.clear()
            page = await read(
                lambda uow, c=cursor: list_events(uow, stream=stream, after=c, limit=batch)  # type: ignore[misc]
            )
            for record in page:
                yield record
                cursor = record.seq
            if len(page) == batch:
                continue
            try:
                await asyncio.wait_for(wake.wait(), poll_seconds)
            except TimeoutError:
                pass
