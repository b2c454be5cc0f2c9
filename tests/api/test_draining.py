"""The drain a server process goes through on SIGTERM (`hub.draining`), driven in
process: the test stops the runtime's drain itself instead of signalling a process
(tests/api/test_graceful_shutdown.py does that with real `hub serve` processes)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from hub.draining import Drain, until_stopped
from hub.runtime import Runtime
from tests.conftest import Principal
from tests.support import work
from tests.support.subscriptions import subscriber


def test_a_stream_ends_when_the_drain_stops_and_its_source_is_closed() -> None:
    drain = Drain()
    closed = threading.Event()

    async def source() -> AsyncGenerator[int, None]:
        try:
            yield 1
            await asyncio.Event().wait()  # nothing more, ever
            yield 2
        finally:
            closed.set()

    async def follow() -> list[int]:
        seen: list[int] = []
        async for item in until_stopped(drain, source()):
            seen.append(item)
            # Stopped from another thread, as a signal handler's loop callback would.
            threading.Thread(target=drain.stop).start()
        return seen

    assert asyncio.run(asyncio.wait_for(follow(), 10)) == [1]
    assert closed.is_set() and drain.draining and drain.stopped


def test_a_drain_begun_is_not_ready_but_not_stopped() -> None:
    drain = Drain()
    drain.begin()
    assert drain.draining and not drain.stopped


def test_readyz_answers_draining_once_the_drain_begins(server: str, runtime: Runtime) -> None:
    assert httpx.get(f"{server}/readyz").status_code == 200
    runtime.drain.begin()
    answer = httpx.get(f"{server}/readyz")
    assert (answer.status_code, answer.json()) == (503, {"status": "draining"})
    assert answer.headers["retry-after"] == "1"


def test_an_open_subscription_is_closed_with_1012_when_the_drain_stops(
    server: str, runtime: Runtime, operator: Principal
) -> None:
    project_id = work.create_project(operator.api)
    with subscriber(server, operator.token) as socket:
        socket.subscribe(project_id)
        assert socket.event()["kind"] == "project.created"
        runtime.drain.stop()
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                socket.receive()
    assert closed.value.rcvd is not None
    assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (1012, "server restarting")
