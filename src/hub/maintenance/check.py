"""`hub maintenance check`, and the server's scheduled check: the database's integrity
and every module's invariants, each found by the module that owns the tables
(`find_invariant_breaches` in its service) and gathered here, so that no module reads
another's tables (docs/ops/maintenance.md, "hub maintenance check").

The scheduled check runs the cheap part (`thorough=False`): the modules' invariants
(one indexed statement each) and the declared indexes (catalog reads).
SQLite's `integrity_check` and `foreign_key_check` read every page of the file, so only
the command runs them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from hub import tables
from hub.events import service as events
from hub.idempotency import service as idempotency
from hub.knowledge import service as knowledge
from hub.knowledge.vocabulary import KnowledgeInvariant
from hub.runtime import Runtime
from hub.storage import upkeep
from hub.storage.invariants import Breach
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work
from hub.work.vocabulary import WorkInvariant

# The modules' invariants, and with the storage's every one a check can report (the
# metric counts each one's breaches).
MODULE_INVARIANTS: tuple[StrEnum, ...] = (
    *WorkInvariant,
    *KnowledgeInvariant,
    *events.EventInvariant,
    *idempotency.ReceiptInvariant,
)
INVARIANTS: tuple[StrEnum, ...] = (*upkeep.StorageInvariant, *MODULE_INVARIANTS)


@dataclass(frozen=True)
class CheckReport:
    """What was checked, and every breach found (none: the database is consistent)."""

    checked: list[str]
    breaches: list[Breach] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.breaches


def module_breaches(uow: UnitOfWork) -> list[Breach]:
    """Every module's invariants, in one read unit (each check is one statement)."""
    return [
        *work.find_invariant_breaches(uow),
        *knowledge.find_invariant_breaches(uow),
        *events.find_invariant_breaches(uow),
        *idempotency.find_invariant_breaches(uow),
    ]


def check(runtime: Runtime, *, thorough: bool = True) -> CheckReport:
    database = runtime.database
    checked = []
    breaches = []
    if thorough and database.is_sqlite:
        checked.append("SQLite integrity_check and foreign_key_check (every page)")
        breaches += upkeep.integrity_breaches(database)
    checked.append(
        "declared indexes exist" + (" and are valid" if database.is_postgresql else "")
    )
    breaches += upkeep.index_breaches(database, tables.metadata)
    checked.append("invariants: " + ", ".join(str(name) for name in MODULE_INVARIANTS))
    breaches += runtime.read(module_breaches)
    return CheckReport(checked, breaches)


def breaches_by_invariant(breaches: list[Breach]) -> dict[str, int]:
    """Each invariant and how many breaches of it were found (0 for the others)."""
    counts = {str(name): 0 for name in INVARIANTS}
    for breach in breaches:
        counts[str(breach.invariant)] = counts.get(str(breach.invariant), 0) + 1
    return counts
