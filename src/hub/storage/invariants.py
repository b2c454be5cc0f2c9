"""What `hub maintenance check` reports: a breach of an invariant the schema alone does
not enforce (a counter kept beside the rows it counts, one current attempt per task
where a partial unique index may be missing, an event stream's numbering).

Each module finds the breaches of its own tables (`find_invariant_breaches` in its
service: the work module's, knowledge's, events', idempotency's); `hub.maintenance.check`
gathers them, so no module reads another's tables. Each check is one statement, so on
PostgreSQL, where every statement of a read sees its own snapshot, a counter and the
rows it counts are read as of one instant and a concurrent write cannot look like a
breach. docs/ops/maintenance.md, "What a finding means" says what to do about each.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


@dataclass(frozen=True)
class Breach:
    """One record (or stream) that breaks one invariant."""

    invariant: StrEnum  # a module's declared name for the invariant (`WorkInvariant`…)
    subject: str  # what is concerned: "task tsk_…", "stream prj_…"
    detail: str  # what was found against what was expected

    def line(self) -> str:
        return f"{self.invariant}: {self.subject}: {self.detail}"
