"""`hub maintenance vacuum` (docs/ops/maintenance.md, "hub maintenance vacuum").

SQLite: the WAL checkpointed and emptied, the file rewritten without its free pages
(`VACUUM`), reported as the files' sizes before and after. PostgreSQL: never `VACUUM
FULL` (it locks each table out while it rewrites it); autovacuum's state and each
table's dead rows are reported, with `VACUUM (ANALYZE)` run only when asked.
"""

from __future__ import annotations

from dataclasses import dataclass

from hub.runtime import Runtime
from hub.storage import upkeep

# A table whose dead rows are more than this share of its rows, and at least
# `_MANY_DEAD` of them, is worth a `VACUUM (ANALYZE)` now rather than autovacuum's next
# visit.
_DEAD_SHARE = 0.2
_MANY_DEAD = 10_000


@dataclass(frozen=True)
class PostgresVacuum:
    advice: upkeep.VacuumAdvice
    analyzed: list[str]  # the tables `VACUUM (ANALYZE)` ran on (none unless asked)

    @property
    def worth_vacuuming(self) -> list[upkeep.TableVacuumState]:
        return [
            table
            for table in self.advice.tables
            if table.dead_rows >= _MANY_DEAD and table.dead_share > _DEAD_SHARE
        ]


def vacuum(runtime: Runtime, *, analyze: bool = False) -> upkeep.Vacuumed | PostgresVacuum:
    database = runtime.database
    if database.is_sqlite:
        return upkeep.vacuum_sqlite(database)
    analyzed = upkeep.vacuum_analyze(database) if analyze else []
    return PostgresVacuum(upkeep.vacuum_advice(database), analyzed)
