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
from hub.api.mapping import from_view, payload
from hub.api.operations import mutate
from hub.jobs import service as jobs
from hub.resources import service as resources


@strawberry.type
class JobsMutation:
    @strawberry.mutation(description="Register a job before launching it, for your attempt.")
    async def register_job(
        self, info: Info[HubContext, Any], input: RegisterJobInput
    ) -> RegisterJobResult:
        command = jobs.JobRegistration(
            attempt_id=str(input.attempt_id),
            generation=input.generation,
            client_job_id=input.job_id,
            producer=input.producer,
            runner_host=input.runner_host,
            checkout=input.checkout,
            operation=input.operation,
            invocation=input.invocation,
            snapshot=input.snapshot,
            expected_deadline=input.expected_deadline,
            freshness_seconds=input.freshness_seconds,
            reservation_ids=[str(r) for r in input.reservation_ids],
            idempotency_key=input.idempotency_key,
        )
        return await mutate(
            info,
            lambda uow, actor: resources.register_job(uow, actor, command),
            # A registration ends no reservation.
            lambda made, now: from_view(
                JobPayload, made, released_reservations=[], server_time=now
            ),
        )

    @strawberry.mutation(description="Report the producer's status (RUNNING, or EXITED).")
    async def observe_job(
        self, info: Info[HubContext, Any], input: ObserveJobInput
    ) -> ObserveJobResult:
        return await mutate(
            info,
            lambda uow, actor: resources.observe_job(
                uow,
                actor,
                job_id=str(input.job_id),
                status=input.status,
                observed_at=input.observed_at,
                note=input.note,
            ),
            payload(JobPayload),
        )

    @strawberry.mutation(description="Record the producer's terminal result (its exit status).")
    async def finish_job(
        self, info: Info[HubContext, Any], input: FinishJobInput
    ) -> FinishJobResult:
        return await mutate(
            info,
            lambda uow, actor: resources.finish_job(
                uow,
                actor,
                job_id=str(input.job_id),
                exit_status=input.exit_status,
                finished_at=input.finished_at,
                note=input.note,
            ),
            payload(JobPayload),
        )

    @strawberry.mutation(description="Store an immutable evidence record for your attempt.")
    async def record_evidence(
        self, info: Info[HubContext, Any], input: RecordEvidenceInput
    ) -> RecordEvidenceResult:
        command = jobs.EvidenceRecord(
            attempt_id=str(input.attempt_id),
            generation=input.generation,
            check_definition_revision=input.check_definition_revision,
            config_fingerprint=input.config_fingerprint,
            environment_identity=input.environment_identity,
            started_at=input.started_at,
            ended_at=input.ended_at,
            inputs_stable=input.inputs_stable,
            required_checks=list(input.required_checks),
            checks=[
                jobs.CheckReport(
                    name=c.name,
                    outcome=c.outcome,
                    reason=c.reason,
                    log_ref=c.log_ref,
                    artifact_refs=list(c.artifact_refs),
                )
                for c in input.checks
            ],
            artifact_access=input.artifact_access,
            revision=input.revision,
            tree_digest=input.tree_digest,
            dirty_snapshot_digest=input.dirty_snapshot_digest,
            changed_paths=list(input.changed_paths),
            job_id=str(input.job_id) if input.job_id else None,
            reviewer_id=str(input.reviewer_id) if input.reviewer_id else None,
            artifact_digests=list(input.artifact_digests),
            wrapper_reported_success=input.wrapper_reported_success,
        )
        return await mutate(
            info,
            lambda uow, actor: jobs.record_evidence(uow, actor, command),
            payload(EvidencePayload, "evidence"),
        )

    @strawberry.mutation(
        description="Declare a watched action and deadline; returns a reporter token."
    )
    async def open_watch_window(
        self, info: Info[HubContext, Any], input: OpenWatchWindowInput
    ) -> OpenWatchWindowResult:
        return await mutate(
            info,
            lambda uow, actor: jobs.open_watch_window(
                uow,
                actor,
                attempt_id=str(input.attempt_id),
                generation=input.generation,
                action=input.action,
                deadline=input.deadline,
            ),
            payload(OpenWatchWindowPayload),
        )

    @strawberry.mutation(description="End a watch window and revoke its reporter token.")
    async def close_watch_window(
        self, info: Info[HubContext, Any], input: CloseWatchWindowInput
    ) -> CloseWatchWindowResult:
        return await mutate(
            info,
            lambda uow, actor: jobs.close_watch_window(
                uow, actor, window_id=str(input.window_id), reason=input.reason
            ),
            payload(WatchWindowPayload, "window"),
        )
