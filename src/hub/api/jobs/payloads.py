"""Payloads of the jobs mutations, and their result unions."""

from __future__ import annotations

from datetime import datetime

import strawberry

from hub.api.jobs.types import Evidence, Job, WatchWindow
from hub.api.problems import result_union
from hub.api.resources.types import Reservation
from hub.artifacts import service as artifacts
from hub.jobs import service as jobs
from hub.resources import service as resources


@strawberry.type
class JobPayload:
    job: Job
    replay: bool
    released_reservations: list[Reservation] = strawberry.field(
        description="Reservations this terminal result ended, and holds it cleared."
    )
    server_time: datetime


@strawberry.type
class EvidencePayload:
    evidence: Evidence
    server_time: datetime


@strawberry.type
class OpenWatchWindowPayload:
    window: WatchWindow
    reporter_token: str = strawberry.field(description="Shown once; stored only as a hash.")
    server_time: datetime


@strawberry.type
class WatchWindowPayload:
    window: WatchWindow
    server_time: datetime


RegisterJobResult = result_union("RegisterJobResult", JobPayload, resources.register_job)
ObserveJobResult = result_union("ObserveJobResult", JobPayload, resources.observe_job)
FinishJobResult = result_union("FinishJobResult", JobPayload, resources.finish_job)
RecordEvidenceResult = result_union(
    "RecordEvidenceResult", EvidencePayload, artifacts.record_evidence
)
OpenWatchWindowResult = result_union(
    "OpenWatchWindowResult", OpenWatchWindowPayload, jobs.open_watch_window
)
CloseWatchWindowResult = result_union(
    "CloseWatchWindowResult", WatchWindowPayload, jobs.close_watch_window
)
