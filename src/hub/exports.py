"""A project's export: every module's rows of one project, in one read transaction
(docs/exports.md).

`GET /api/projects/{projectId}/export` (`hub.api.exports`) streams what
`project_records` yields as JSON Lines, `{"table": …, "row": {…}}`; `hub export` builds
a SQLite file or wire import items from it. The export crosses every domain module, so,
like `hub.backup` and `hub.maintenance`, it sits beside the runtime and reaches each
module through its service: each module exports its own tables
(`work.service.export_rows`…, built on `hub.storage.export`), and nothing here reads a
table.

One snapshot: the caller runs `project_records` inside one snapshot read unit
(`Runtime.astream`), so the stream is the project as of one instant, however long it
takes to send, whatever is written meanwhile.

The stream, in order:

1. `_export`: the project's id, the hub's version, the format, the instant;
2. each module's tables, from the bottom of the domain's order up (projects, work,
   jobs, knowledge, review, resources, integration, artifacts, then the event log):
   for each table a `_table` record describing it, then its rows in primary-key order;
3. the agent sessions and principals those rows name (`identity.export_principals`);
4. `_end`: how many rows of each table were sent. A reader that has not seen `_end`
   did not get the whole export.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Final

from hub import __version__
from hub.artifacts import service as artifacts
from hub.events import service as events
from hub.identity import service as identity
from hub.imports import service as imports
from hub.integration import service as integration
from hub.jobs import service as jobs
from hub.knowledge import service as knowledge
from hub.projects import service as projects
from hub.resources import service as resources
from hub.review import service as review
from hub.storage.export import TABLE_RECORD, ExportRecord
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work

# The version of the stream's shape; a reader refuses one it does not know.
FORMAT: Final = 1
EXPORT_RECORD: Final = "_export"
END_RECORD: Final = "_end"
ERROR_RECORD: Final = "_error"

# Each module's own rows, from the bottom of the domain's order up, so that a table
# comes after the tables it refers to.
SOURCES: Final[tuple[Callable[[UnitOfWork, str], Iterator[ExportRecord]], ...]] = (
    projects.export_rows,
    work.export_rows,
    jobs.export_rows,
    knowledge.export_rows,
    imports.export_rows,
    review.export_rows,
    resources.export_rows,
    integration.export_rows,
    artifacts.export_rows,
    events.export_rows,
)


def project_records(uow: UnitOfWork, project_id: str) -> Iterator[ExportRecord]:
    """Every record of the export of `project_id` (module docstring), read in `uow`.
    An unknown project raises `NotFound` before the first record."""
    projects.ensure_project_exists(uow, project_id)
    yield ExportRecord(
        EXPORT_RECORD,
        {
            "project_id": project_id,
            "format": FORMAT,
            "hub_version": __version__,
            "exported_at": uow.now().isoformat(timespec="microseconds"),
        },
    )
    counts: Counter[str] = Counter()
    named: dict[str, set[str]] = {"principals": set(), "agent_sessions": set()}
    for source in SOURCES:
        for record in source(uow, project_id):
            if record.table != TABLE_RECORD:
                counts[record.table] += 1
            for table, record_id in record.refers_to:
                if table in named:
                    named[table].add(record_id)
            yield record
    for record in identity.export_principals(
        uow, principal_ids=named["principals"], session_ids=named["agent_sessions"]
    ):
        if record.table != TABLE_RECORD:
            counts[record.table] += 1
        yield record
    yield ExportRecord(END_RECORD, {"rows": sum(counts.values()), "tables": dict(counts)})
