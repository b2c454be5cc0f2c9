"""The coordinator clock.

Authority decisions (is this lease still valid?) read time through one injectable
`Clock`, sampled inside the write transaction after the lock is held. Tests use
`ManualClock` so expiry is reached by moving time, never by sleeping.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current coordinator time, timezone-aware UTC."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class ManualClock:
    """A clock that moves only when told to; safe to share between threads."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def set(self, moment: datetime) -> None:
        if moment.tzinfo is None:
            raise ValueError("ManualClock needs a timezone-aware datetime")
        with self._lock:
            self._now = moment

    def advance(self, seconds: float = 0, **delta: float) -> datetime:
        with self._lock:
            self._now += timedelta(seconds=seconds, **delta)
            return self._now
