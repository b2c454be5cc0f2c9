"""Streams that last only as long as their credential.

A live stream (a GraphQL subscription, a dashboard live view) authenticates when it
opens, then may stay open for hours. `rechecked` interleaves the stream with a
periodic check of the credential, whatever is (or is not) flowing: the check runs when
the stream opens and then every `every_seconds`; when it raises, the stream is closed
and the check's exception ends the iteration, for the caller to turn into its
transport's "you were signed out". The interval is a setting
(`credential_recheck_seconds`); whether the credential still holds is the check's
judgement, made with coordinator time, so tests need no sleeping to expire one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")
log = logging.getLogger("hub.events")
_RECANCEL_SECONDS = 0.1


async def rechecked(
    stream: AsyncIterator[T],
    check: Callable[[], Awaitable[None]],
    *,
    every_seconds: float,
) -> AsyncGenerator[T, None]:
    """Yield `stream`'s items while `check()` keeps passing.

    Takes ownership of `stream`: it is closed when this generator ends for any reason
    (the check failed, the consumer stopped, cancellation). Callers should close this
    generator (`contextlib.aclosing`) when they stop reading it.
    """
    loop = asyncio.get_running_loop()
    pending: asyncio.Task[tuple[T] | None] | None = None
    try:
        await check()
        next_check = loop.time() + every_seconds
        while True:
            if pending is None:
                pending = asyncio.create_task(_next(stream))
            remaining = next_check - loop.time()
            if remaining > 0:
                # The item, or the time for the next check, whichever comes first; the
                # read goes on across checks (cancelling it would break the stream).
                done, _ = await asyncio.wait({pending}, timeout=remaining)
                if done:
                    item, pending = pending.result(), None
                    if item is None:
                        return  # the stream ended by itself
                    yield item[0]
                    continue
            await check()
            next_check = loop.time() + every_seconds
    finally:
        # Closing may wait (for the read in flight to stop), and a server cancelling a
        # stream whose client left may cancel every wait here; the closing runs on its
        # own so that it always completes and the stream leaves the event signal.
        closing = asyncio.create_task(close_stream(stream, pending))
        _closing.add(closing)
        closing.add_done_callback(_closed)
        await asyncio.shield(closing)


_closing: set[asyncio.Task[None]] = set()  # strong references until each one is done


async def close_stream(stream: AsyncIterator[T], pending: asyncio.Future[Any] | None) -> None:
    """End a stream a consumer leaves: its read in flight (`pending`) cancelled until it
    is done, then the stream closed (so it leaves the event signal). Also what the
    server's shutdown does to the streams it ends (`hub.draining`)."""
    if pending is not None:
        # Cancelled until it is done: a cancellation can be swallowed (on Python 3.11
        # `asyncio.wait_for` returns a result that arrives at the same moment instead).
        while not pending.done():
            pending.cancel()
            await asyncio.wait({pending}, timeout=_RECANCEL_SECONDS)
        if not pending.cancelled():
            pending.exception()  # retrieved: the stream's own failure is moot now
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()


def _closed(task: asyncio.Task[None]) -> None:
    _closing.discard(task)
    if not task.cancelled() and task.exception() is not None:
        log.error("closing a rechecked stream failed", exc_info=task.exception())


async def _next(stream: AsyncIterator[T]) -> tuple[T] | None:
    """The stream's next item, boxed; None when it has ended."""
    try:
        return (await anext(stream),)
    except StopAsyncIteration:
        return None
