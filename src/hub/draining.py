"""A server process's drain: what SIGTERM sets in motion (docs/ops/deploying.md,
"Graceful shutdown").

uvicorn, on SIGTERM, closes its listener, waits up to `shutdown_grace_seconds` for the
requests in flight and only then runs the application's shutdown. Long-lived streams
would keep it waiting the whole grace, and a client cut off at the end could not tell a
restart from a failure. So the application hears the signal first (`drain_on_signals`,
wrapping uvicorn's handler) and, in order:

1. `Drain.begin`: `/readyz` answers 503 `draining`, so a balancer stops sending; for
   `shutdown_delay_seconds` the process still serves everything;
2. `Drain.stop`: uvicorn's own handler runs (the listener closes, requests in flight
   finish) and every open stream ends with a reason a client knows to reconnect on:
   a GraphQL WebSocket is closed with 1012 "server restarting" (`CloseSocketsOnStop`),
   a dashboard stream sends a last `server-restarting` event with a `retry:` hint
   (`until_stopped`);
3. the application's shutdown (`hub.app`'s lifespan) stops the periodic work, then
   closes the runtime: the SQLite group writer finishes what is queued, the write pool
   finishes its transactions, the engines are disposed. Requests uvicorn cancelled at
   the end of the grace do not cut a transaction short: theirs runs in a worker thread
   and commits or rolls back whole; the client, without an answer, retries its key.

A `Drain` is shared by threads and event loops (the tests run several servers in one
process), so it keeps no `asyncio.Event`: each waiter's future is woken on its own loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from types import FrameType
from typing import Any, TypeVar

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hub.events.recheck import close_stream

T = TypeVar("T")
log = logging.getLogger("hub")

# The WebSocket close code a restarting server sends (RFC 6455, IANA registry: "Service
# Restart"); clients reconnect, here or elsewhere, and resume from their cursor.
SERVICE_RESTART = 1012
RESTART_REASON = "server restarting"
_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


class Drain:
    """Whether this process is draining (not ready) and whether it has stopped serving."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._draining = False
        self._stopped = False
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = set()

    @property
    def draining(self) -> bool:
        return self._draining

    @property
    def stopped(self) -> bool:
        return self._stopped

    def begin(self) -> None:
        self._draining = True

    def stop(self) -> None:
        with self._lock:
            self._draining = self._stopped = True
            waiters, self._waiters = self._waiters, set()
        for loop, future in waiters:
            with contextlib.suppress(RuntimeError):  # that loop has closed: nobody waits
                loop.call_soon_threadsafe(_wake, future)

    async def wait_stopped(self) -> None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        waiter = (loop, future)
        with self._lock:
            if self._stopped:
                return
            self._waiters.add(waiter)
        try:
            await future
        finally:
            with self._lock:
                self._waiters.discard(waiter)


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def until_stopped(drain: Drain, items: AsyncIterator[T]) -> AsyncGenerator[T, None]:
    """`items` until it ends or the drain stops serving, whichever comes first.

    Takes ownership of `items`: the read in flight when the server stops is cancelled,
    and `items` is closed however this generator ends, as for a client that went away.
    Callers close this generator (`contextlib.aclosing`) when they stop reading it."""
    stopped = asyncio.ensure_future(drain.wait_stopped())
    pending: asyncio.Future[T] | None = None
    try:
        while True:
            pending = asyncio.ensure_future(anext(items))
            await asyncio.wait({pending, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if not pending.done():
                return
            read, pending = pending, None
            try:
                value = read.result()
            except StopAsyncIteration:
                return
            yield value
    finally:
        stopped.cancel()
        # `items` cannot be closed while a read of it runs: cancel that first. The
        # closing runs on its own, so that a cancellation of this generator (the client
        # left) cannot cut it short and leave a follower on the event signal.
        closing = asyncio.ensure_future(close_stream(items, pending))
        _closing.add(closing)
        closing.add_done_callback(_closing.discard)
        await asyncio.shield(closing)


_closing: set[asyncio.Future[None]] = set()  # strong references until each one is done


@contextlib.contextmanager
def drain_on_signals(drain: Drain, *, delay_seconds: float) -> Iterator[None]:
    """Hear SIGTERM and SIGINT before the server does (see the module docstring).

    Installed by the server process's lifespan, after uvicorn installed its handlers
    and before it serves; uvicorn puts back the ones it replaced when it returns. A
    second signal during the delay stops at once. Off the main thread (a server run in
    a test's thread) there are no signals to hear."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    loop = asyncio.get_running_loop()
    previous: dict[int, _Handler] = {sig: signal.getsignal(sig) for sig in _SIGNALS}

    delayed: list[asyncio.TimerHandle] = []

    def stop(sig: int) -> None:
        for timer in delayed:
            timer.cancel()
        if not drain.stopped:
            log.info("stopping: no new connections; streams told the server is restarting")
            drain.stop()
        # Every signal reaches uvicorn: a second Ctrl-C still forces its exit.
        forward = previous[sig]
        if callable(forward):
            forward(sig, None)

    def begin(sig: int) -> None:
        log.info("draining: /readyz answers 503 for %s s, then the server stops", delay_seconds)
        delayed.append(loop.call_later(delay_seconds, stop, sig))

    def heard(sig: int, _frame: FrameType | None) -> None:
        # A signal handler interrupts whatever runs: it only flips the flag and hands
        # the rest to the event loop.
        if drain.draining or delay_seconds <= 0:
            loop.call_soon_threadsafe(stop, sig)
            return
        drain.begin()
        loop.call_soon_threadsafe(begin, sig)

    for sig in _SIGNALS:
        signal.signal(sig, heard)
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


class CloseSocketsOnStop:
    """ASGI middleware: when the drain stops, every open WebSocket is closed with 1012
    "server restarting" and its application hears a disconnect, so GraphQL
    subscriptions end at once instead of holding the shutdown for its whole grace."""

    def __init__(self, app: ASGIApp, drain: Drain) -> None:
        self.app = app
        self.drain = drain

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        socket = {"accepted": False, "closed": False}

        async def sending(message: Message) -> None:
            if socket["closed"]:
                return  # closed for the restart: the application's last words go nowhere
            if message["type"] == "websocket.accept":
                socket["accepted"] = True
            elif message["type"] == "websocket.close":
                socket["closed"] = True
            await send(message)

        async def receiving() -> Message:
            if not self.drain.stopped:
                message = asyncio.ensure_future(receive())
                stopped = asyncio.ensure_future(self.drain.wait_stopped())
                try:
                    await asyncio.wait({message, stopped}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    stopped.cancel()
                    received = message.done()
                    if not received:  # stopped, or this wait was cancelled
                        message.cancel()
                if received:
                    answer: Message = message.result()
                    return answer
            if socket["accepted"] and not socket["closed"]:
                socket["closed"] = True
                with contextlib.suppress(Exception):  # the client may be gone already
                    await send(
                        {"type": "websocket.close", "code": SERVICE_RESTART,
                         "reason": RESTART_REASON}
                    )
            return {"type": "websocket.disconnect", "code": SERVICE_RESTART}

        await self.app(scope, receiving, sending)


def exit_zero_on_sigterm() -> None:
    """For `hub serve`, before uvicorn starts: a SIGTERM that arrives before uvicorn
    takes the signals, or the one uvicorn raises again once it has drained (it puts
    this handler back first), ends the process with status 0: a stop that was asked
    for, not a crash."""

    def exit_quietly(_sig: int, _frame: FrameType | None) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, exit_quietly)
