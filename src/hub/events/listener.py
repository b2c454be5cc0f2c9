"""Cross-process wake-ups on PostgreSQL: `LISTEN hub_events` (docs/design.md, "Scale").

Every commit that appends events is followed by `pg_notify('hub_events', stream)`, sent
by its process after the commit (`hub.events.notifier`), so PostgreSQL delivers the
notification to every listening server process once the events are committed. This
module holds one dedicated connection per process that listens and turns each
notification into an `EventSignal.announce`, so followers here wake for commits made by
other processes.

A notification only wakes followers; they still read after their own cursor, so a lost
or duplicated notification can delay an event but never drop or repeat one. Losses are
bounded by the followers' slow poll, and by `announce_all` after every reconnect.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

import psycopg
from psycopg.rows import TupleRow
from sqlalchemy.engine import URL

from hub.events.feed import EventSignal
from hub.events.service import NOTIFY_CHANNEL

log = logging.getLogger("hub.events.listener")


@asynccontextmanager
async def listen_for_events(
    url: URL,
    signal: EventSignal,
    *,
    application_name: str = "hub-events-listener",
    health_check_seconds: float = 30.0,
    initial_backoff_seconds: float = 0.5,
    max_backoff_seconds: float = 30.0,
    startup_wait_seconds: float = 10.0,
) -> AsyncIterator[None]:
    """Listen for the lifetime of the block; the server's lifespan enters it.

    Entering waits (at most `startup_wait_seconds`) for the first `LISTEN`, so a
    server that reports ready already hears other processes. If PostgreSQL is not
    reachable yet the server starts anyway and the listener keeps retrying.
    """
    listening = asyncio.Event()
    task = asyncio.create_task(
        _listen_forever(
            _conninfo(url),
            signal,
            listening,
            application_name=application_name,
            health_check_seconds=health_check_seconds,
            initial_backoff_seconds=initial_backoff_seconds,
            max_backoff_seconds=max_backoff_seconds,
        ),
        name="hub-events-listener",
    )
    try:
        with suppress(TimeoutError):
            await asyncio.wait_for(listening.wait(), startup_wait_seconds)
        if not listening.is_set():
            log.warning("event listener not connected after %.0fs; retrying in the background",
                        startup_wait_seconds)
        yield
    finally:
        task.cancel()
        with suppress(asyncio.CancelledError):
            await task


async def _listen_forever(
    conninfo: str,
    signal: EventSignal,
    listening: asyncio.Event,
    *,
    application_name: str,
    health_check_seconds: float,
    initial_backoff_seconds: float,
    max_backoff_seconds: float,
) -> None:
    backoff = initial_backoff_seconds
    while True:
        try:
            async with await psycopg.AsyncConnection.connect(
                conninfo,
                autocommit=True,
                application_name=application_name,
                connect_timeout=max(1, int(health_check_seconds)),
            ) as connection:
                await connection.execute(f"LISTEN {NOTIFY_CHANNEL}")
                log.info("listening for events on channel %s", NOTIFY_CHANNEL)
                listening.set()
                backoff = initial_backoff_seconds
                # Commits made while no connection listened sent notifications nobody
                # heard: wake every follower to re-read instead of waiting for the poll.
                signal.announce_all()
                await _relay(connection, signal, health_check_seconds)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # any failure means: drop the connection, reconnect
            log.warning("event listener lost its connection (%s: %s); retrying in %.1fs",
                        type(exc).__name__, exc, backoff)
        # Jitter so that many processes cut off together do not reconnect in lockstep.
        await asyncio.sleep(backoff * random.uniform(0.5, 1.0))
        backoff = min(backoff * 2, max_backoff_seconds)


async def _relay(
    connection: psycopg.AsyncConnection[TupleRow],
    signal: EventSignal,
    health_check_seconds: float,
) -> None:
    """Announce each notification's stream; return only by raising on connection loss."""
    while True:
        async for notification in connection.notifies(timeout=health_check_seconds):
            signal.announce([notification.payload])
        # A peer that vanished without closing the socket (network partition) raises
        # nothing while we only wait; a round trip with a deadline notices it.
        # Notifications arriving meanwhile are kept for the next `notifies()`.
        await asyncio.wait_for(connection.execute("SELECT 1"), health_check_seconds)


def _conninfo(url: URL) -> str:
    """A libpq URI for psycopg from the SQLAlchemy URL (`postgresql+psycopg://…`)."""
    return url.set(drivername="postgresql").render_as_string(hide_password=False)
