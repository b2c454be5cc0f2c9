"""Upkeep the server does by itself, every `HUB_PRUNE_INTERVAL_SECONDS`, and `hub
maintenance prune` on demand: pruning idempotency receipts into tombstones,
expiring artifacts whose retention has run out (their bytes removed), and forgetting
lapsed sign-in attempt counts.

Correctness never depends on the receipts' pruning (expiry is judged at read and write
time); it only bounds how much the receipts table holds. An artifact past its retention
stays downloadable until the next sweep marks it EXPIRED.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

from hub.artifacts import service as artifacts
from hub.idempotency import service as idempotency
from hub.identity import service as identity
from hub.runtime import Runtime

log = logging.getLogger("hub.maintenance")


@dataclass(frozen=True)
class Upkeep:
    """What one round of upkeep did."""

    receipts: idempotency.PruneReport
    artifacts: artifacts.RetentionSweep
    login_throttles: int = 0  # lapsed sign-in attempt counts deleted


def prune(runtime: Runtime) -> Upkeep:
    """One round, blocking (`hub maintenance prune`)."""
    return Upkeep(
        receipts=runtime.write(idempotency.prune_receipts),
        artifacts=artifacts.sweep_retention(runtime),
        login_throttles=runtime.write(identity.prune_login_throttles),
    )


async def maintain(runtime: Runtime) -> None:
    """One round, in the server: each part is logged, and a failing part does not stop
    the others (the next round tries again)."""
    try:
        pruned = await runtime.awrite(idempotency.prune_receipts)
        log.info("pruned receipts: %s tombstoned, %s deleted", pruned.tombstoned, pruned.deleted)
    except Exception:
        log.exception("pruning receipts failed")
    try:
        # The sweep calls the store, which blocks: in a worker thread, never on the event
        # loop or the group-commit writer.
        swept = await asyncio.to_thread(artifacts.sweep_retention, runtime)
        if swept.expired:
            log.info("expired %s artifacts past their retention; %s removals failed",
                     len(swept.expired), len(swept.failed))
    except Exception:
        log.exception("expiring artifacts failed")
    try:
        await runtime.awrite(identity.prune_login_throttles)
    except Exception:
        log.exception("forgetting lapsed sign-in attempt counts failed")


@contextlib.asynccontextmanager
async def periodic_maintenance(runtime: Runtime) -> AsyncIterator[None]:
    async def loop() -> None:
        while True:
            await asyncio.sleep(runtime.settings.prune_interval_seconds)
            await maintain(runtime)

    task = asyncio.create_task(loop(), name="hub-maintenance")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
