"""Retention: `LOG` and `REPORT` artifacts expire when their time is up (`expires_at`,
set when they became available); `EVIDENCE` ones never by time.

An evidence-linked artifact is kept while its evidence exists, and evidence is never
deleted today (the jobs module has no such operation), so nothing expires it yet.

The sweep marks each expired artifact EXPIRED, with the reason and the time, and appends
`artifact.expired`, in one transaction per batch; then, once that has committed, it
removes the batch's bytes (`_removals`). The server runs it periodically
(`hub.maintenance`), `hub maintenance prune` on demand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from sqlalchemy import select

from hub.artifacts._records import retention_seconds
from hub.artifacts._removals import mark_gone, remove_objects
from hub.artifacts._store import Store
from hub.artifacts.tables import Artifact
from hub.artifacts.vocabulary import ArtifactKind, ArtifactState
from hub.settings import Settings
from hub.storage.unit_of_work import UnitOfWork

T = TypeVar("T")
# Artifacts expired in one transaction.
BATCH = 500


class Transactions(Protocol):
    """What maintenance runs on: the runtime's settings, store and transactions
    (`hub.runtime.Runtime`), called from a thread that may block."""

    settings: Settings
    store: Store

    def read(self, operation: Callable[[UnitOfWork], T], /) -> T: ...

    def write(self, operation: Callable[[UnitOfWork], T], /) -> T: ...


@dataclass(frozen=True)
class Expired:
    """One batch: the artifacts marked EXPIRED, and the storage keys of their bytes."""

    artifact_ids: list[str]
    storage_keys: list[str]


@dataclass(frozen=True)
class RetentionSweep:
    """What a sweep did: the artifacts it expired, and the bytes it could not remove
    (orphans, left to the reconciliation)."""

    expired: list[str] = field(default_factory=list)
    removed: int = 0
    failed: list[str] = field(default_factory=list)


def expire_artifacts(uow: UnitOfWork, *, limit: int = BATCH) -> Expired:
    """Mark at most `limit` artifacts whose retention has run out EXPIRED."""
    uow.no_lock_needed(
        "expiry by age: an instant read before the rows are locked only leaves the newest "
        "expiries to the next sweep, and each row is locked and re-checked by its state"
    )
    now = uow.now()
    rows = uow.session.scalars(
        select(Artifact)
        .where(Artifact.state == ArtifactState.AVAILABLE, Artifact.expires_at <= now)
        .order_by(Artifact.expires_at, Artifact.id)
        .limit(limit)
        .with_for_update()
    ).all()
    for row in rows:
        mark_gone(uow, row, ArtifactState.EXPIRED, _retention_reason(uow.settings, row), by=None)
    return Expired(
        artifact_ids=[row.id for row in rows],
        storage_keys=[
            row.storage_key
            for row in rows
            if row.kind == ArtifactKind.FILE and row.storage_key is not None
        ],
    )


def sweep_retention(runtime: Transactions, *, batch: int = BATCH) -> RetentionSweep:
    """Expire every artifact whose retention has run out, a batch per transaction, and
    remove each batch's bytes after it has committed (blocking)."""
    expired: list[str] = []
    failed: list[str] = []
    removed = 0
    while True:
        done = runtime.write(lambda uow: expire_artifacts(uow, limit=batch))
        expired += done.artifact_ids
        missed = remove_objects(runtime.store, done.storage_keys)
        failed += missed
        removed += len(done.storage_keys) - len(missed)
        if len(done.artifact_ids) < batch:
            return RetentionSweep(expired=expired, removed=removed, failed=failed)


def _retention_reason(settings: Settings, row: Artifact) -> str:
    seconds = retention_seconds(settings, row.retention)
    kept = "" if seconds is None else f" {duration(seconds)}"
    return f"its retention ran out: {row.retention} artifacts are kept{kept}"


def duration(seconds: int) -> str:
    for unit, size in (("day", 86400), ("hour", 3600)):
        if seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'' if count == 1 else 's'}"
    return f"{seconds} seconds"
