"""The jobs mutations: `registerJob`, `observeJob`, `finishJob`, `recordEvidence`,
`openWatchWindow`, `closeWatchWindow`."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.jobs.inputs import (
    CloseWatchWindowInput,
    FinishJobInput,
    ObserveJobInput,
    OpenWatchWindowInput,
    RecordEvidenceInput,
    RegisterJobInput,
)
from hub.api.jobs.payloads import (
    CloseWatchWindowResult,
    EvidencePayload,
    FinishJobResult,
    JobPayload,
    ObserveJobResult,
    OpenWatchWindowPayload,
    OpenWatchWindowResult,
    RecordEvidenceResult,
    RegisterJobResult,
    WatchWindowPayload,
)
from hub.api.mapping import call, from_view, payload
from hub.api.operations import mutate
from hub.api.problems import Problem
from hub.artifacts import service as artifacts
from hub.jobs import service as jobs
from hub.resources import service as resources


@strawberry.type
class JobsMutation:
    @strawberry.mutation(
        graphql_type=RegisterJobResult,
        description="Register a job before launching it, for your attempt.",
    )
    async def register_job(
        self, info: Info[HubContext, Any], input: RegisterJobInput
    ) -> JobPayload | Problem:
        return await mutate(
            info,
            call(resources.register_job, input, renamed={"job_id": "client_job_id"}),
            lambda made, now: from_view(
                JobPayload, made, released_reservations=[], server_time=now
            ),
        )

    @strawberry.mutation(
        graphql_type=ObserveJobResult,
        description="Report the producer's status (RUNNING, or EXITED).",
    )
    async def observe_job(
        self, info: Info[HubContext, Any], input: ObserveJobInput
    ) -> JobPayload | Problem:
        return await mutate(info, call(resources.observe_job, input), payload(JobPayload))

    @strawberry.mutation(
        graphql_type=FinishJobResult,
        description="Record the producer's terminal result (its exit status).",
    )
    async def finish_job(
        self, info: Info[HubContext, Any], input: FinishJobInput
    ) -> JobPayload | Problem:
        return await mutate(info, call(resources.finish_job, input), payload(JobPayload))

    @strawberry.mutation(
        graphql_type=RecordEvidenceResult,
        description="Store an immutable evidence record for your attempt.",
    )
    async def record_evidence(
        self, info: Info[HubContext, Any], input: RecordEvidenceInput
    ) -> EvidencePayload | Problem:
        # Through artifacts: the artifacts it cites are recorded with it.
        return await mutate(
            info,
            call(artifacts.record_evidence, input),
            payload(EvidencePayload, "evidence"),
        )

    @strawberry.mutation(
        graphql_type=OpenWatchWindowResult,
        description="Declare a watched action and deadline; returns a reporter token.",
    )
    async def open_watch_window(
        self, info: Info[HubContext, Any], input: OpenWatchWindowInput
    ) -> OpenWatchWindowPayload | Problem:
        return await mutate(
            info, call(jobs.open_watch_window, input), payload(OpenWatchWindowPayload)
        )

    @strawberry.mutation(
        graphql_type=CloseWatchWindowResult,
        description="End a watch window and revoke its reporter token.",
    )
    async def close_watch_window(
        self, info: Info[HubContext, Any], input: CloseWatchWindowInput
    ) -> WatchWindowPayload | Problem:
        return await mutate(
            info, call(jobs.close_watch_window, input), payload(WatchWindowPayload, "window")
        )
