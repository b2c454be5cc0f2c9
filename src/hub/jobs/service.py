"""The jobs module's operations, as other modules and the entry points call them."""

from hub.jobs.evidence import (
    CheckReport,
    EvidenceRecord,
    evidence_applicability,
    evidence_for_task,
    get_evidence,
    record_evidence,
)
from hub.jobs.runs import (
    JobRegistration,
    finish_job,
    get_job,
    jobs_for_task,
    list_jobs,
    observe_job,
    open_jobs_by_attempt,
    register_job,
)
from hub.jobs.views import (
    Applicability,
    CheckResult,
    EvidenceView,
    JobResult,
    JobView,
    OpenedWindow,
    WindowView,
    applicability,
)
from hub.jobs.windows import close_watch_window, get_watch_window, open_watch_window

__all__ = [
    "Applicability",
    "CheckReport",
    "CheckResult",
    "EvidenceRecord",
    "EvidenceView",
    "JobRegistration",
    "JobResult",
    "JobView",
    "OpenedWindow",
    "WindowView",
    "applicability",
    "close_watch_window",
    "evidence_applicability",
    "evidence_for_task",
    "finish_job",
    "get_evidence",
    "get_job",
    "get_watch_window",
    "jobs_for_task",
    "list_jobs",
    "observe_job",
    "open_jobs_by_attempt",
    "open_watch_window",
    "record_evidence",
    "register_job",
]
