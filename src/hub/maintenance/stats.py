"""`hub maintenance stats`: how big the database is and what it holds
(docs/ops/maintenance.md, "hub maintenance stats"), each module's figures read through
its service."""

from __future__ import annotations

from dataclasses import dataclass

from hub.artifacts import service as artifacts
from hub.idempotency import service as idempotency
from hub.runtime import Runtime
from hub.storage import upkeep
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work


@dataclass(frozen=True)
class Held:
    """What the modules report of their rows."""

    oldest_active_attempt: work.OpenAttempt | None
    receipts: idempotency.ReceiptCounts
    artifact_bytes: int  # stored files and live upload reservations, every project's


@dataclass(frozen=True)
class Stats:
    backend: str
    database_bytes: int
    wal_bytes: int | None  # SQLite only
    table_rows: dict[str, int]
    held: Held

    @property
    def events(self) -> int:
        return self.table_rows.get("events", 0)


def _held(uow: UnitOfWork) -> Held:
    return Held(
        oldest_active_attempt=work.oldest_active_attempt(uow),
        receipts=idempotency.count_receipts(uow),
        # `usage` counts what holds quota: the total is every project's.
        artifact_bytes=artifacts.usage(uow, "", uow.now()).total_bytes,
    )


def stats(runtime: Runtime) -> Stats:
    database = runtime.database
    return Stats(
        backend=database.dialect,
        database_bytes=upkeep.database_bytes(database),
        wal_bytes=upkeep.sqlite_files(database).wal_bytes if database.is_sqlite else None,
        table_rows=upkeep.table_rows(database),
        held=runtime.read(_held),
    )
