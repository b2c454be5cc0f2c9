"""`rechecked`: a stream interleaved with a periodic credential check. The check runs
when the stream opens and then on its interval whether or not items flow; a failing
check ends the stream (closed first) with the check's exception."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator

import pytest

from hub.errors import Unauthenticated
from hub.events.recheck import rechecked

INTERVAL = 0.01
BOUND = 5.0  # seconds: a failure to end is a failure, not a hang


class Credential:
    """Holds until `revoke()`; counts the checks."""

    def __init__(self) -> None:
        self.checks = 0
        self.revoked = False

    async def check(self) -> None:
        self.checks += 1
        if self.revoked:
            raise Unauthenticated("the bearer token is unknown or revoked")

    def revoke(self) -> None:
        self.revoked = True


class Stream:
    """An async generator that records whether it was closed."""

    def __init__(self) -> None:
        self.closed = False
        self.more = asyncio.Event()

    async def quiet(self) -> AsyncGenerator[int, None]:
        try:
            await self.more.wait()  # nothing ever arrives
            yield 0
        finally:
            self.closed = True

    async def busy(self) -> AsyncGenerator[int, None]:
        try:
            n = 0
            while True:
                await asyncio.sleep(0)
                n += 1
                yield n
        finally:
            self.closed = True


async def drain(items: AsyncIterator[int]) -> list[int]:
    return [item async for item in items]


def test_a_quiet_stream_ends_with_the_checks_failure_and_is_closed() -> None:
    async def scenario() -> None:
        credential, stream = Credential(), Stream()
        guarded = rechecked(stream.quiet(), credential.check, every_seconds=INTERVAL)
        reader = asyncio.create_task(drain(guarded))
        while credential.checks < 3:  # checked on its interval while nothing flows
            await asyncio.sleep(INTERVAL)
        assert not reader.done()
        credential.revoke()
        with pytest.raises(Unauthenticated, match="revoked"):
            await asyncio.wait_for(reader, BOUND)
        assert stream.closed

    asyncio.run(scenario())


def test_a_busy_stream_is_still_checked_and_ended() -> None:
    async def scenario() -> None:
        credential, stream = Credential(), Stream()
        guarded = rechecked(stream.busy(), credential.check, every_seconds=INTERVAL)
        received = 0

        async def read() -> None:
            nonlocal received
            async for _ in guarded:
                received += 1
                if received == 100:
                    credential.revoke()

        with pytest.raises(Unauthenticated):
            await asyncio.wait_for(read(), BOUND)
        assert received >= 100 and stream.closed

    asyncio.run(scenario())


def test_items_pass_through_in_order_and_a_finished_stream_ends_it() -> None:
    async def numbers() -> AsyncGenerator[int, None]:
        for n in range(5):
            yield n

    async def scenario() -> None:
        credential = Credential()
        items = await drain(rechecked(numbers(), credential.check, every_seconds=INTERVAL))
        assert items == [0, 1, 2, 3, 4]
        assert credential.checks >= 1  # checked as it opened

    asyncio.run(scenario())


def test_a_revoked_credential_is_refused_before_the_first_item() -> None:
    async def scenario() -> None:
        credential, stream = Credential(), Stream()
        credential.revoke()
        with pytest.raises(Unauthenticated):
            await drain(rechecked(stream.busy(), credential.check, every_seconds=INTERVAL))

    asyncio.run(scenario())


def test_a_reader_that_goes_away_mid_read_closes_the_stream() -> None:
    async def scenario() -> None:
        credential, stream = Credential(), Stream()
        reader = asyncio.create_task(
            drain(rechecked(stream.quiet(), credential.check, every_seconds=INTERVAL))
        )
        while credential.checks < 2:
            await asyncio.sleep(INTERVAL)
        reader.cancel()
        with pytest.raises(asyncio.CancelledError):
            await reader
        for _ in range(int(BOUND / INTERVAL)):
            if stream.closed:
                break
            await asyncio.sleep(INTERVAL)
        assert stream.closed

    asyncio.run(scenario())
