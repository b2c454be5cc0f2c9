"""Payloads of the jobs mutations, and their result unions."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry

from hub.api.jobs.types import Evidence, Job, WatchWindow
from hub.api.problems import AnyProblem
from hub.api.resources.types import Reservation


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


RegisterJobResult = Annotated[JobPayload | AnyProblem, strawberry.union("RegisterJobResult")]
ObserveJobResult = Annotated[JobPayload | AnyProblem, strawberry.union("ObserveJobResult")]
FinishJobResult = Annotated[JobPayload | AnyProblem, strawberry.union("FinishJobResult")]
RecordEvidenceResult = Annotated[
    EvidencePayload | AnyProblem, strawberry.union("RecordEvidenceResult")
]
OpenWatchWindowResult = Annotated[
    OpenWatchWindowPayload | AnyProblem, strawberry.union("OpenWatchWindowResult")
]
CloseWatchWindowResult = Annotated[
    WatchWindowPayload | AnyProblem, strawberry.union("CloseWatchWindowResult")
]
