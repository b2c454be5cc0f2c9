"""The conservative local deadline (docs/agent-cli.md, "Expiry and recovery").

The lease's `expiresAt` is coordinator time, and this workstation's clock is not
synchronised with the coordinator, so the client never compares `expiresAt` with its
own clock. It takes the time the lease had left *as the server saw it*
(`expiresAt - serverTime`, both coordinator time) and counts it from the moment the
request was **sent**: time spent in transit, or queued behind the server's write lock,
is then counted against the agent, never in its favour. A safety margin (10 % of the
lease, at least 30 s) covers clock-rate drift and the time it takes to act on the answer.

Past its local deadline an agent stops ownership-dependent changes and reconciles with
the server; it may still be the owner, but it can no longer know that locally.

Persistence: a monotonic clock means nothing to another process, and Linux's
CLOCK_MONOTONIC stops while the workstation sleeps, so the state file keeps the
deadline as *wall-clock time at send + remaining*. Wall-clock time keeps running
through sleep, the common hazard; the residual risk is the workstation clock being set
backwards between commands, which delays the stored deadline by as much as it moved.
A long-lived process holding a deadline in memory should use `monotonic_deadline`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

SAFETY_FRACTION = 0.10
MIN_SAFETY_SECONDS = 30.0


class LocalClock(Protocol):
    """This workstation's clocks; never the coordinator's."""

    def wall(self) -> datetime:
        """Timezone-aware UTC wall-clock time."""
        ...

    def monotonic(self) -> float: ...


class SystemLocalClock:
    def wall(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()


@dataclass(frozen=True)
class Sent:
    """When a request left this workstation, on both local clocks."""

    wall: datetime
    monotonic: float

    @classmethod
    def now(cls, clock: LocalClock) -> Sent:
        return cls(wall=clock.wall(), monotonic=clock.monotonic())


def safety_margin(lease_seconds: float) -> float:
    return max(SAFETY_FRACTION * lease_seconds, MIN_SAFETY_SECONDS)


def usable_seconds(*, server_time: datetime, expires_at: datetime, lease_seconds: float) -> float:
    """Seconds of authority to count from the send; zero or less means none."""
    return (expires_at - server_time).total_seconds() - safety_margin(lease_seconds)


def monotonic_deadline(
    sent_at: float, *, server_time: datetime, expires_at: datetime, lease_seconds: float
) -> float:
    return sent_at + usable_seconds(
        server_time=server_time, expires_at=expires_at, lease_seconds=lease_seconds
    )


def wall_deadline(
    sent_at: datetime, *, server_time: datetime, expires_at: datetime, lease_seconds: float
) -> datetime:
    """The deadline as stored in the state file (see the module docstring)."""
    return sent_at + timedelta(
        seconds=usable_seconds(
            server_time=server_time, expires_at=expires_at, lease_seconds=lease_seconds
        )
    )


def seconds_left(deadline: datetime, now: datetime) -> float:
    return (deadline - now).total_seconds()


def has_passed(deadline: datetime, now: datetime) -> bool:
    # Like the server's lease rule: reaching the deadline is already too late.
    return now >= deadline
