"""One instant per operation: the coordinator clock is sampled once, after the first lock,
and every check, the receipt, the events and the payload's `serverTime` use it
(`UnitOfWork.now`). Under `strict_clock` (on in every test) a write that reads the clock
before any lock fails loudly (docs/design.md, "Tasks, attempts, leases and
generations")."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa

from hub.runtime import Runtime
from hub.settings import Settings
from hub.storage.database import Database
from hub.storage.unit_of_work import ClockReadBeforeLock, UnitOfWork
from tests.support import work


class TickingClock:
    """A clock that moves a second every time it is read: a second read of the clock in
    one operation would show."""

    def __init__(self) -> None:
        self._moment = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            self._moment += timedelta(seconds=1)
            return self._moment


@pytest.fixture
def runtime(settings: Settings, database: Database) -> Iterator[Runtime]:
    """This module's runtime (and server) keep time by a ticking clock."""
    ticking = Runtime(settings, database=database, clock=TickingClock())
    yield ticking
    ticking.release_threads()


def _lock_something(uow: UnitOfWork) -> None:
    if uow.dialect == "postgresql":
        uow.session.execute(sa.text("SELECT pg_advisory_xact_lock(42)"))


def test_an_operation_reads_one_instant_however_often_it_asks(runtime: Runtime) -> None:
    def operation(uow: UnitOfWork) -> list[datetime]:
        _lock_something(uow)
        return [uow.now() for _ in range(3)]

    first, second, third = runtime.write(operation)
    assert first == second == third
    assert runtime.write(operation)[0] > first  # the next operation, a later instant


def test_reading_the_clock_before_any_lock_fails_on_postgresql(
    runtime: Runtime, backend: str
) -> None:
    def unlocked(uow: UnitOfWork) -> datetime:
        return uow.now()

    if backend == "sqlite":
        # BEGIN IMMEDIATE: the write lock is held from the start.
        assert isinstance(runtime.write(unlocked), datetime)
        return
    with pytest.raises(ClockReadBeforeLock):
        runtime.write(unlocked)

    def row_locked(uow: UnitOfWork) -> datetime:
        uow.session.execute(sa.text("SELECT 1 FROM event_streams FOR UPDATE"))
        return uow.now()

    def declared(uow: UnitOfWork) -> datetime:
        uow.no_lock_needed("the test decides nothing")
        return uow.now()

    assert isinstance(runtime.write(row_locked), datetime)
    assert isinstance(runtime.write(declared), datetime)


def test_a_mutations_server_time_is_its_instant(
    runtime: Runtime, operator: Any, agent: Any
) -> None:
    """The claim's lease starts at the operation's instant, and the payload says so, though
    the clock moves every time it is read."""
    project = work.create_project(operator.api)
    task = work.new_task(operator.api, project)
    claim = agent().api.mutate(
        "claimTask",
        {"projectId": project, "taskId": task, "idempotencyKey": work.key()},
        "... on ClaimPayload { serverTime attempt { startedAt expiresAt } }",
    )
    assert claim["serverTime"] == claim["attempt"]["startedAt"], claim
