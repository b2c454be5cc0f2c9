"""Following a stream of the event log: replay, then live, with no gap and no duplicate.

A follower keeps exactly one cursor (the last sequence number it yielded) and always
reads what comes after it, so the switch from replay to live cannot lose or repeat an
event: there is no switch, only "read after the cursor, then wait for a wake". Commits
in this process wake followers at once (`EventSignal`); commits in other processes wake
them through PostgreSQL `LISTEN/NOTIFY` (`hub.events.listener`), and a slow poll is the
backstop for a missed notification.

Followers of one stream in one process share a tail (`_Tail`): the latest events read
from the database, contiguous by sequence number. A wake costs one database read per
stream, not one per follower; a follower further behind than the tail reaches replays
from the database on its own until it catches up.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import partial
from itertools import islice

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
        self._tails: dict[tuple[asyncio.AbstractEventLoop, str], _Tail] = {}
        self._followers: set[_Progress] = set()

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
                self._discard(waiter, stream)

    @contextmanager
    def shared_tail(self, stream: str) -> Iterator[_Tail]:
        """The tail this event loop's followers of `stream` share, while any remain."""
        loop = asyncio.get_running_loop()
        with self._lock:
            tail = self._tails.get((loop, stream))
            if tail is None:
                tail = self._tails[(loop, stream)] = _Tail(stream)
                # The tail is woken like a follower: commits mean it may be behind.
                self._waiters.setdefault(stream, set()).add((loop, tail.wake))
            tail.followers += 1
        try:
            yield tail
        finally:
            with self._lock:
                tail.followers -= 1
                if tail.followers == 0:
                    del self._tails[(loop, stream)]
                    self._discard((loop, tail.wake), stream)

    def _discard(self, waiter: _Waiter, stream: str) -> None:
        waiters = self._waiters.get(stream)
        if waiters is not None:
            waiters.discard(waiter)
            # Streams come and go with subscribers; keep no empty entries behind.
            if not waiters:
                del self._waiters[stream]

    @contextmanager
    def tracked(self) -> Iterator[_Progress]:
        """A follower's progress, counted in `lag` while it follows."""
        progress = _Progress()
        with self._lock:
            self._followers.add(progress)
        try:
            yield progress
        finally:
            with self._lock:
                self._followers.discard(progress)

    def lag(self) -> FollowerLag:
        """How far behind this process's followers are now (`hub.scrape` reports it)."""
        now = time.monotonic()
        with self._lock:
            behind = [p.behind_since for p in self._followers if p.behind_since is not None]
        return FollowerLag(
            followers=len(self._followers),
            behind=len(behind),
            longest_seconds=max((now - since for since in behind), default=0.0),
        )

    def follower_count(self) -> int:
        """Followers waiting on this signal (their shared tails not counted)."""
        with self._lock:
            return sum(len(waiters) for waiters in self._waiters.values()) - len(self._tails)


@dataclass(frozen=True)
class FollowerLag:
    followers: int
    behind: int  # followers with events known to wait for them
    longest_seconds: float  # the longest any of them has been behind


class _Progress:
    """Since when a follower has had events to deliver that it has not yet yielded (None:
    caught up, waiting for a wake). A follower is behind from its start, and from each
    wake, until it has read and yielded everything after its cursor; a consumer that stops
    reading (a slow subscriber) keeps it behind, which is what an operator needs to see."""

    __slots__ = ("behind_since",)

    def __init__(self) -> None:
        self.behind_since: float | None = time.monotonic()

    def caught_up(self) -> None:
        self.behind_since = None

    def woken(self) -> None:
        if self.behind_since is None:
            self.behind_since = time.monotonic()


def _wake(targets: list[_Waiter]) -> None:
    for loop, event in targets:
        # A follower that unsubscribed between the snapshot and here gets one harmless
        # extra wake; a closed loop means the follower is gone.
        with suppress(RuntimeError):
            loop.call_soon_threadsafe(event.set)


class _Tail:
    """The latest events of one stream this process has read: every event in
    (`base`, `through`], in order. Only its event loop touches it."""

    window = 2048

    def __init__(self, stream: str) -> None:
        self.stream = stream
        self.records: deque[EventRecord] = deque()
        self.base = -1  # -1: nothing read yet
        self.through = -1
        self.followers = 0
        # Set by commits touching the stream (the tail is a waiter like any follower):
        # the database may hold events after `through`.
        self.wake = asyncio.Event()
        self.refreshed_at = 0.0
        self._lock = asyncio.Lock()

    async def read_after(
        self, read: ReadEvents, cursor: int, batch: int, *, poll: float | None
    ) -> tuple[list[EventRecord], bool]:
        """Up to `batch` events after `cursor`, and whether more are known to follow.

        `poll` (seconds) asks for a database read even without a wake, unless the tail
        was refreshed more recently than that: the backstop for a lost notification.
        """
        async with self._lock:
            if not self._covers(cursor):
                return await self._replay(read, cursor, batch)
            if poll is not None and time.monotonic() - self.refreshed_at >= poll:
                self.wake.set()
            more = False
            if self.wake.is_set():
                # Cleared before reading: a commit landing during the read sets it again.
                self.wake.clear()
                try:
                    fresh = await read(
                        partial(list_events, stream=self.stream, after=self.through, limit=batch)
                    )
                except BaseException:
                    self.wake.set()  # not refreshed (a cancelled follower, a failed read)
                    raise
                self.refreshed_at = time.monotonic()
                self._extend(fresh)
                if len(fresh) == batch:
                    more = True
                    self.wake.set()
            start = cursor - self.base
            page = list(islice(self.records, start, start + batch))
            return page, more or cursor + len(page) < self.through

    async def _replay(
        self, read: ReadEvents, cursor: int, batch: int
    ) -> tuple[list[EventRecord], bool]:
        anchoring = self.through < 0
        if anchoring:
            self.wake.clear()
        page = await read(partial(list_events, stream=self.stream, after=cursor, limit=batch))
        if anchoring and self.through < 0 and len(page) < batch:
            # This follower reached the end of the stream: the tail starts here.
            self.base = self.through = cursor
            self.refreshed_at = time.monotonic()
            self._extend(page)
        return page, len(page) == batch

    def _covers(self, cursor: int) -> bool:
        return self.through >= 0 and self.base <= cursor <= self.through

    def _extend(self, fresh: list[EventRecord]) -> None:
        for record in fresh:
            if record.seq != self.through + 1:
                # Not contiguous (cannot happen with dense sequences): start over.
                self.records.clear()
                self.base = record.seq - 1
            self.records.append(record)
            self.through = record.seq
        while len(self.records) > self.window:
            self.base = self.records.popleft().seq


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
    follower leaves the event signal at once rather than when it is garbage-collected.
    """
    cursor = after
    poll: float | None = None
    with (
        signal.subscribe(stream) as wake,
        signal.shared_tail(stream) as tail,
        signal.tracked() as progress,
    ):
        while True:
            # Clear before reading: a commit that lands during the read sets it again,
            # so the wait below returns at once and the next read picks it up.
            wake.clear()
            page, more = await tail.read_after(read, cursor, batch, poll=poll)
            poll = None
            if page:
                # Found by the backstop poll rather than a wake: behind all the same.
                progress.woken()
            for record in page:
                cursor = record.seq
                yield record
            if more:
                continue
            progress.caught_up()
            try:
                await asyncio.wait_for(wake.wait(), poll_seconds)
                progress.woken()
            except TimeoutError:
                poll = poll_seconds / 2
