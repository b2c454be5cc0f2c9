"""The jobs module's vocabulary, declared once: the tables hold these types and derive
their CHECK constraints from them; the API exposes them as its GraphQL enums."""

from __future__ import annotations

from enum import StrEnum


class ProducerStatus(StrEnum):
    """What the producer last reported; not how fresh that is."""

    REGISTERED = "REGISTERED"
    RUNNING = "RUNNING"
    EXITED = "EXITED"
    FINISHED = "FINISHED"


class ObservedStatus(StrEnum):
    """What a runner may observe of a job (a subset of `ProducerStatus`)."""

    RUNNING = "RUNNING"
    EXITED = "EXITED"


class Freshness(StrEnum):
    """How recently anything was heard, judged now: UNOBSERVED is not stopped."""

    FRESH = "FRESH"
    UNOBSERVED = "UNOBSERVED"
    FINAL = "FINAL"


class CheckOutcome(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    SKIPPED = "SKIPPED"
    INTERRUPTED = "INTERRUPTED"


class ArtifactAccess(StrEnum):
    SHARED = "SHARED"
    LOCAL_ONLY = "LOCAL_ONLY"
    UNAVAILABLE = "UNAVAILABLE"


class JobEvent(StrEnum):
    """The events the jobs module appends."""

    JOB_REGISTERED = "job.registered"
    JOB_OBSERVED = "job.observed"
    JOB_EXITED = "job.exited"
    JOB_FINISHED = "job.finished"
    EVIDENCE_RECORDED = "evidence.recorded"
    WATCH_WINDOW_OPENED = "watch_window.opened"
    WATCH_WINDOW_CLOSED = "watch_window.closed"


# A terminal producer status ends the job's ability to interfere with anything.
TERMINAL_STATUSES = (ProducerStatus.EXITED, ProducerStatus.FINISHED)
OPEN_STATUSES = tuple(status for status in ProducerStatus if status not in TERMINAL_STATUSES)
