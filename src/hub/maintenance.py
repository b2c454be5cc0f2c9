"""Upkeep the server does by itself: pruning idempotency receipts into tombstones.

Correctness never depends on this running (expiry is judged at read and write time);
it only bounds how much the receipts table holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from hub.idempotency import service as idempotency
from hub.runtime import Runtime

log = logging.getLogger("hub.maintenance")


def prune(runtime: Runtime) -> idempotency.PruneReport:
    return runtime.write(idempotency.prune_receipts)


@contextlib.asynccontextmanager
async def periodic_pruning(runtime: Runtime) -> AsyncIterator[None]:
    async def loop() -> None:
        while True:
            await asyncio.sleep(runtime.settings.prune_interval_seconds)
            try:
                report = await runtime.awrite(idempotency.prune_receipts)
                log.info("pruned receipts: %s tombstoned, %s deleted", report.tombstoned,
                         report.deleted)
            except Exception:  # keep the server up; the next round tries again
                log.exception("pruning receipts failed")

    task = asyncio.create_task(loop(), name="hub-prune-receipts")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
