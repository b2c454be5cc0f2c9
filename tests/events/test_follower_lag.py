"""How far behind an event follower is, as /metrics reports it: behind from a wake until
it has yielded everything after its cursor; a consumer that stops reading keeps it there."""

from __future__ import annotations

import asyncio
import contextlib
from contextlib import aclosing

from hub.events import service as events
from hub.events.feed import follow
from hub.runtime import Runtime
from hub.storage.unit_of_work import UnitOfWork

STREAM = events.GLOBAL_STREAM


def append(uow: UnitOfWork) -> None:
    uow.no_lock_needed("the test's own event, about no shared row")
    events.append_event(uow, project_id=None, kind="test.lag", subject_id="s", actor_id=None)


def test_a_follower_is_behind_from_a_commit_until_its_consumer_takes_the_event(
    runtime: Runtime,
) -> None:
    signal = runtime.event_signal

    async def scenario() -> None:
        after = max((r.seq for r in await runtime.aread(
            lambda uow: events.list_events(uow, stream=STREAM, after=0, limit=10_000))),
            default=0)
        async with aclosing(follow(runtime.aread, signal, stream=STREAM, after=after)) as feed:
            first = asyncio.ensure_future(anext(feed))
            for _ in range(100):  # until it has read to the end and waits
                await asyncio.sleep(0.01)
                if signal.lag().behind == 0:
                    break
            assert signal.lag().followers == 1 and signal.lag().behind == 0
            assert signal.lag().longest_seconds == 0

            await runtime.awrite(append)
            await asyncio.wait_for(first, 10)
            await asyncio.sleep(0.05)  # the consumer holds the event it took, reads no more
            lag = signal.lag()
            assert lag.behind == 1 and lag.longest_seconds >= 0.05

            following = asyncio.ensure_future(anext(feed))
            for _ in range(100):
                await asyncio.sleep(0.01)
                if signal.lag().behind == 0:
                    break
            assert signal.lag().behind == 0
            following.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await following
        assert signal.lag().followers == 0

    asyncio.run(scenario())
