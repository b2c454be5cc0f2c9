"""Upkeep the server does by itself, every `HUB_PRUNE_INTERVAL_SECONDS`, and `hub
maintenance prune` on demand: pruning idempotency receipts into tombstones,
expiring artifacts whose retention has run out (their bytes removed), and forgetting
lapsed sign-in attempt counts. Every
`HUB_CHECK_INTERVAL_SECONDS` the server also checkpoints SQLite's WAL (PASSIVE: it never
waits for a reader or a writer) and runs the cheap part of `hub maintenance check`,
logging each breach at ERROR and counting them in the `hub_invariant_breaches` gauge. It
never runs `VACUUM`, which holds the write lock for as long as it rewrites the file.

Correctness never depends on the receipts' pruning (expiry is judged at read and write
time); it only bounds how much the receipts table holds. An artifact past its retention
stays downloadable until the next sweep marks it EXPIRED.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from hub.artifacts import service as artifacts
from hub.idempotency import service as idempotency
from hub.identity import service as identity
from hub.maintenance.check import INVARIANTS, breaches_by_invariant, check
from hub.metrics import INVARIANT_BREACHES
from hub.runtime import Runtime
from hub.storage import upkeep

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


async def check_in_server(runtime: Runtime) -> None:
    """One scheduled check, in the server: each part is logged, and a failing part does
    not stop the others."""
    if runtime.database.is_sqlite:
        try:
            done = await asyncio.to_thread(upkeep.checkpoint, runtime.database, "PASSIVE")
            log.debug("checkpointed %s of %s WAL frames", done.checkpointed_frames,
                      done.wal_frames)
        except Exception:
            log.exception("checkpointing the WAL failed")
    try:
        # Blocking reads (the catalog, then one read unit): in a worker thread.
        report = await asyncio.to_thread(check, runtime, thorough=False)
    except Exception:
        log.exception("checking the invariants failed")
        return
    for invariant, count in breaches_by_invariant(report.breaches).items():
        INVARIANT_BREACHES.labels(invariant).set(count)
    for breach in report.breaches:
        log.error("invariant breached: %s", breach.line())


@contextlib.asynccontextmanager
async def periodic_maintenance(runtime: Runtime) -> AsyncIterator[None]:
    async def every(seconds: int, step: Callable[[Runtime], Awaitable[None]]) -> None:
        while True:
            await asyncio.sleep(seconds)
            await step(runtime)

    # Every invariant has its series from the start (0 until a check finds a breach), so
    # an alert on it is never on a series that does not exist yet.
    for invariant in INVARIANTS:
        INVARIANT_BREACHES.labels(str(invariant))
    settings = runtime.settings
    tasks = [
        asyncio.create_task(every(settings.prune_interval_seconds, maintain), name="hub-upkeep"),
        asyncio.create_task(
            every(settings.check_interval_seconds, check_in_server), name="hub-check"
        ),
    ]
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
