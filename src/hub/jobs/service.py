"""The jobs module's operations, as other modules and the entry points call them."""

from collections.abc import Iterator

from hub.jobs import tables
from hub.jobs._evidence import (
    CheckReport,
    EvidenceRecord,
    evidence_applicability,
    evidence_for_jobs,
    evidence_for_task,
    get_evidence,
    record_evidence,
)
from hub.jobs._runs import (
    JobRegistration,
    attempts_with_open_jobs,
    finish_job,
    get_job,
    jobs_for_task,
    jobs_past_deadline,
    list_jobs,
    observe_job,
    open_jobs_by_attempt,
    project_job,
    register_job,
)
from hub.jobs._windows import close_watch_window, get_watch_window, open_watch_window
from hub.jobs.views import (
    Applicability,
    CheckResult,
    EvidenceView,
    JobResult,
    JobView,
    ObservationView,
    OpenedWindow,
    WindowView,
    applicability,
    observation,
)
from hub.storage.export import ExportRecord, export_tables, project_tables
from hub.storage.unit_of_work import UnitOfWork


def export_rows(uow: UnitOfWork, project_id: str) -> Iterator[ExportRecord]:
    """The project's jobs, evidence and watch windows, for an export (docs/exports.md)."""
    return export_tables(uow, project_id, project_tables(tables))


__all__ = [
    "Applicability",
    "CheckReport",
    "CheckResult",
    "EvidenceRecord",
    "EvidenceView",
    "JobRegistration",
    "JobResult",
    "JobView",
    "ObservationView",
    "OpenedWindow",
    "WindowView",
    "applicability",
    "attempts_with_open_jobs",
    "close_watch_window",
    "evidence_applicability",
    "evidence_for_jobs",
    "evidence_for_task",
    "export_rows",
    "finish_job",
    "get_evidence",
    "get_job",
    "get_watch_window",
    "jobs_for_task",
    "jobs_past_deadline",
    "list_jobs",
    "observation",
    "observe_job",
    "open_jobs_by_attempt",
    "open_watch_window",
    "project_job",
    "record_evidence",
    "register_job",
]
