"""PostgreSQL's event numbering: writers never wait on each other for numbers, and
followers still see every committed event once, in one order, with no gap.

Real threads and a real database; transactions are ordered by events and barriers,
never by sleeping (docs/architecture.md, "The event log").
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from functools import partial

import pytest
from sqlalchemy import text

from hub.events import service as events
from hub.events.feed import follow
from hub.runtime import Runtime
from hub.storage.unit_of_work import UnitOfWork
from tests.conftest import require_postgres

STREAM = events.GLOBAL_STREAM  # no project row needed: the hub's own stream
WAIT = 30.0  # seconds: only ever reached when something is broken


class Aborted(Exception):
    """Raised inside a writer's transaction to roll it back."""


@dataclass(eq=False)
class Writer:
    """One transaction: appends its events, takes its place in the log at the flush,
    then waits for its turn to commit (or abort), holding that place meanwhile."""

    name: str
    events: int
    abort: bool = False
    placed: threading.Event = field(default_factory=threading.Event)
    go: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    place: int = 0
    error: BaseException | None = None

    def subjects(self) -> list[str]:
        return [f"{self.name}.{i}" for i in range(self.events)]

    def run(self, runtime: Runtime) -> None:
        try:
            runtime.write(self._operation)
        except Aborted:
            pass
        except BaseException as exc:  # reported by the test, not lost in the thread
            self.error = exc
        finally:
            self.placed.set()
            self.done.set()

    def _operation(self, uow: UnitOfWork) -> None:
        uow.no_lock_needed("the test's own events, about no shared row")
        for subject in self.subjects():
            events.append_event(
                uow, project_id=None, kind="test.numbered", subject_id=subject, actor_id=None
            )
        # Runs after the event flush (registered after it): the place is taken and held.
        uow.before_commit(self._hold)

    def _hold(self, uow: UnitOfWork) -> None:
        self.place = int(uow.pending[events.PLACE])
        self.placed.set()
        if not self.go.wait(WAIT):
            raise TimeoutError(f"{self.name} never got its turn")
        if self.abort:
            raise Aborted


def _postgresql_only(backend: str) -> None:
    if backend != "postgresql":
        pytest.skip("numbering after commit is PostgreSQL's; SQLite numbers in the writer")
    require_postgres()


def _read_all(runtime: Runtime, expected: int, stop: threading.Event) -> list[tuple[int, str]]:
    """A follower: `list_events` after its cursor, again and again, until it has read
    `expected` events (or the test gives up)."""
    seen: list[tuple[int, str]] = []
    cursor = 0
    while len(seen) < expected and not stop.is_set():
        page = runtime.read(partial(events.list_events, stream=STREAM, after=cursor))
        for record in page:
            seen.append((record.seq, record.subject_id))
            cursor = record.seq
    return seen


@pytest.mark.parametrize("backend", ["postgresql"])
def test_followers_see_every_committed_event_once_in_one_order_while_commits_interleave(
    backend: str, runtime: Runtime
) -> None:
    _postgresql_only(backend)
    rng = random.Random(17)
    # The long transaction takes its place first and commits last; the others take
    # theirs in waves of six, all six held at once, and commit in shuffled order; some
    # abort after taking a place.
    long = Writer("long", events=3)
    waves = [
        [
            Writer(f"w{wave}.{i}", events=rng.randint(1, 3), abort=rng.random() < 0.2)
            for i in range(6)
        ]
        for wave in range(5)
    ]
    everyone = [long, *(writer for wave in waves for writer in wave)]
    committed = [writer for writer in everyone if not writer.abort]
    expected = sum(writer.events for writer in committed)

    stop = threading.Event()
    results: dict[str, list[tuple[int, str]]] = {}

    def reader(name: str) -> None:
        results[name] = _read_all(runtime, expected, stop)

    async def live_follower() -> list[tuple[int, str]]:
        seen: list[tuple[int, str]] = []
        feed = follow(runtime.aread, runtime.event_signal, stream=STREAM, poll_seconds=0.2)
        async with aclosing(feed) as records:
            async for record in records:
                seen.append((record.seq, record.subject_id))
                if len(seen) == expected:
                    break
        return seen

    def feed_follower() -> None:
        results["feed"] = asyncio.run(asyncio.wait_for(live_follower(), WAIT))

    threads = [threading.Thread(target=reader, args=(f"list{i}",)) for i in range(3)]
    threads.append(threading.Thread(target=feed_follower))
    writers = [threading.Thread(target=writer.run, args=(runtime,)) for writer in everyone]
    by_writer = dict(zip(everyone, writers, strict=True))
    for thread in threads:
        thread.start()
    try:
        by_writer[long].start()
        assert long.placed.wait(WAIT)
        for wave in waves:
            for writer in wave:
                by_writer[writer].start()
            for writer in wave:
                assert writer.placed.wait(WAIT)
            order = wave[:]
            rng.shuffle(order)
            for writer in order:
                writer.go.set()
                assert writer.done.wait(WAIT)
        # Everything placed after the long transaction waits for it: nothing of the
        # waves is readable yet, and nothing is lost meanwhile.
        assert runtime.read(lambda uow: events.last_sequence(uow, stream=STREAM)) == 0
        long.go.set()
        assert long.done.wait(WAIT)
        for thread in threads:
            thread.join(WAIT)
    finally:
        stop.set()
        for writer in everyone:
            writer.go.set()
        for thread in [*writers, *threads]:
            thread.join(WAIT)
    assert [writer.error for writer in everyone] == [None] * len(everyone)

    # One order, by place then append order, numbered 1, 2, 3… with no gap.
    in_order = sorted(committed, key=lambda writer: writer.place)
    wanted = [subject for writer in in_order for subject in writer.subjects()]
    assert set(results) == {"list0", "list1", "list2", "feed"}
    for name, seen in results.items():
        assert [seq for seq, _ in seen] == list(range(1, expected + 1)), name
        assert [subject for _, subject in seen] == wanted, name
    aborted = {subject for writer in everyone if writer.abort for subject in writer.subjects()}
    assert aborted.isdisjoint(subject for _, subject in results["feed"])

    # The stored numbers are the ones the readers computed.
    runtime.write(_number_all)
    stored = runtime.read(
        lambda uow: uow.session.execute(
            text("SELECT seq, subject_id FROM events WHERE stream = :s ORDER BY seq"),
            {"s": STREAM},
        ).all()
    )
    assert [(seq, subject) for seq, subject in stored] == results["feed"]


@pytest.mark.parametrize("backend", ["postgresql"])
def test_an_effect_is_never_numbered_before_its_cause(backend: str, runtime: Runtime) -> None:
    """A transaction that began first but went on only after another's commit (it waited
    for a lock the other held, as a claim waits for a task row) is numbered after it:
    places are taken just before commit, not when a transaction starts writing."""
    _postgresql_only(backend)
    row_lock = 0x5EED  # stands for the row both transactions change
    held, began = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def cause(uow: UnitOfWork) -> None:
        uow.no_lock_needed("the test's own lock")
        uow.session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": row_lock})
        held.set()
        if not began.wait(WAIT):
            raise TimeoutError("the effect never began")
        events.append_event(
            uow, project_id=None, kind="test.cause", subject_id="cause", actor_id=None
        )

    def effect(uow: UnitOfWork) -> None:
        uow.no_lock_needed("the test's own lock")
        # Writes first (it has a transaction id from here), then waits for the row.
        uow.session.execute(text("SELECT pg_current_xact_id()"))
        began.set()
        # Granted only once the cause's transaction has ended (committed, as it does).
        uow.session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": row_lock})
        events.append_event(
            uow, project_id=None, kind="test.effect", subject_id="effect", actor_id=None
        )

    def run(operation: Callable[[UnitOfWork], None]) -> None:
        try:
            runtime.write(operation)
        except BaseException as exc:
            errors.append(exc)

    first = threading.Thread(target=run, args=(cause,))
    first.start()
    assert held.wait(WAIT)
    second = threading.Thread(target=run, args=(effect,))
    second.start()
    first.join(WAIT)
    second.join(WAIT)
    assert errors == []
    records = runtime.read(lambda uow: events.list_events(uow, stream=STREAM))
    assert [(r.seq, r.subject_id) for r in records] == [(1, "cause"), (2, "effect")]


def _number_all(uow: UnitOfWork) -> None:
    uow.no_lock_needed("the numbering step takes its own lock")
    uow.session.execute(text("SELECT hub_number_events(:s)"), {"s": STREAM})


@pytest.mark.parametrize("backend", ["postgresql"])
def test_two_transactions_of_one_stream_append_without_waiting_for_each_other(
    backend: str, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    _postgresql_only(backend)
    # A reader does not wait for the open transaction here: it reads what is readable.
    monkeypatch.setattr(events, "SETTLE_SECONDS", 0.0)
    appended, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def hold_open(uow: UnitOfWork) -> None:
        appended.set()  # its events are written: this runs after the event flush
        if not release.wait(WAIT):
            raise TimeoutError("never released")

    def first(uow: UnitOfWork) -> None:
        uow.no_lock_needed("the test's own events")
        for i in range(2):
            events.append_event(
                uow, project_id=None, kind="test.first", subject_id=f"first.{i}", actor_id=None
            )
        uow.before_commit(hold_open)

    def second(uow: UnitOfWork) -> None:
        uow.no_lock_needed("the test's own events")
        uow.session.execute(text("SET LOCAL lock_timeout = '5s'"))
        events.append_event(
            uow, project_id=None, kind="test.second", subject_id="second", actor_id=None
        )

    def guarded(operation: Callable[[UnitOfWork], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                runtime.write(operation)
            except BaseException as exc:
                errors.append(exc)

        return run

    opener = threading.Thread(target=guarded(first))
    opener.start()
    try:
        assert appended.wait(WAIT)
        # The first transaction has appended and is still open: the second appends to
        # the same stream and commits without waiting for it.
        follower = threading.Thread(target=guarded(second))
        follower.start()
        follower.join(WAIT)
        assert not follower.is_alive(), "the second writer waited for the first"
        assert errors == []
        # Committed, but numbered only after the older transaction ends.
        assert runtime.read(lambda uow: events.last_sequence(uow, stream=STREAM)) == 0
    finally:
        release.set()
        opener.join(WAIT)
    assert errors == []
    monkeypatch.setattr(events, "SETTLE_SECONDS", 2.0)
    records = runtime.read(lambda uow: events.list_events(uow, stream=STREAM))
    assert [(r.seq, r.subject_id) for r in records] == [
        (1, "first.0"),
        (2, "first.1"),
        (3, "second"),
    ]
