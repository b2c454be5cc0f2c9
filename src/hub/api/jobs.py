"""jobs: external runs, their observations and evidence, watch windows (reporter tokens)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from datetime import datetime
from typing import Annotated, Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.jobs_types import (
    ArtifactAccess,
    CheckOutcome,
    Evidence,
    Job,
    JobObservation,
    ObservedStatus,
    WatchWindow,
)
from hub.api.operations import mutate, read, read_optional
from hub.api.problems import AnyProblem
from hub.api.relay import Connection, connection, decode_cursor, page_size
from hub.api.resources_types import Reservation
from hub.errors import NotFound
from hub.events.feed import follow
from hub.identity.actor import Actor
from hub.identity.permissions import require_reporter_scope
from hub.jobs import service as jobs
from hub.projects import service as projects
from hub.resources import service as resources
from hub.storage.unit_of_work import UnitOfWork

# --- inputs ---------------------------------------------------------------------------


@strawberry.input
class RegisterJobInput:
    attempt_id: strawberry.ID
    generation: int
    job_id: str = strawberry.field(description="Client-chosen, unique per project; a retry "
                                   "with the same data is a replay.")
    producer: str = strawberry.field(description="What produces the result (tool, runner).")
    runner_host: str
    checkout: str = strawberry.field(description="The checkout/worktree identity it runs in.")
    operation: str = strawberry.field(description="The permitted operation, e.g. `test`.")
    invocation: str = strawberry.field(
        description="A description of the invocation. Never environment values or secrets."
    )
    snapshot: str | None = None
    expected_deadline: datetime | None = None
    freshness_seconds: int | None = strawberry.field(
        default=None, description="Silence longer than this reads UNOBSERVED (default: "
        "three heartbeats)."
    )
    reservation_ids: list[strawberry.ID] = strawberry.field(
        default_factory=list,
        description=(
            "Reservations the job depends on: each must be held, live, by this attempt "
            "now, or nothing is registered (Blocked names the ones that are not)."
        ),
    )
    idempotency_key: str | None = None


@strawberry.input
class ObserveJobInput:
    job_id: strawberry.ID
    status: ObservedStatus
    observed_at: datetime | None = None
    note: str | None = None


@strawberry.input
class FinishJobInput:
    job_id: strawberry.ID
    exit_status: int = strawberry.field(description="The producer's own exit status.")
    finished_at: datetime | None = None
    note: str | None = None


@strawberry.input
class CheckResultInput:
    name: str
    outcome: CheckOutcome
    reason: str = ""
    log_ref: str | None = None
    artifact_refs: list[str] = strawberry.field(default_factory=list)


@strawberry.input
class RecordEvidenceInput:
    attempt_id: strawberry.ID
    generation: int
    check_definition_revision: str
    config_fingerprint: str
    environment_identity: str
    started_at: datetime
    ended_at: datetime
    inputs_stable: bool
    required_checks: list[str]
    checks: list[CheckResultInput]
    artifact_access: ArtifactAccess
    revision: str | None = None
    tree_digest: str | None = None
    dirty_snapshot_digest: str | None = None
    changed_paths: list[str] = strawberry.field(default_factory=list)
    job_id: strawberry.ID | None = None
    reviewer_id: strawberry.ID | None = None
    artifact_digests: list[str] = strawberry.field(default_factory=list)
    wrapper_reported_success: bool | None = None


@strawberry.input
class OpenWatchWindowInput:
    attempt_id: strawberry.ID
    generation: int
    action: str = strawberry.field(description="What is being watched, e.g. `full test run`.")
    deadline: datetime = strawberry.field(
        description="At most the project's maxWatchWindowSeconds from now."
    )


@strawberry.input
class CloseWatchWindowInput:
    window_id: strawberry.ID
    reason: str = ""


# --- payloads -------------------------------------------------------------------------


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

_Ended = tuple[jobs.JobResult, list[resources.ReservationView]]


def _job_payload(result: jobs.JobResult, now: datetime) -> JobPayload:
    return JobPayload(job=Job.of(result.job), replay=result.replay, released_reservations=[],
                      server_time=now)


def _ended_payload(ended: _Ended, now: datetime) -> JobPayload:
    result, released = ended
    return JobPayload(
        job=Job.of(result.job),
        replay=result.replay,
        released_reservations=[Reservation.of(r) for r in released],
        server_time=now,
    )


# --- queries --------------------------------------------------------------------------


@strawberry.type
class JobsQuery:
    @strawberry.field
    async def job(self, info: Info[HubContext, Any], id: strawberry.ID) -> Job | None:
        def load(uow: UnitOfWork, actor: Actor) -> jobs.JobView:
            view = jobs.get_job(uow, str(id))
            require_reporter_scope(actor, view.attempt_id, f"job {id}")
            return view

        view = await read_optional(info, load)
        return Job.of(view) if view else None

    @strawberry.field(description="A project's (or one task's) jobs, freshness judged now.")
    async def jobs(
        self,
        info: Info[HubContext, Any],
        project_id: strawberry.ID,
        task_id: strawberry.ID | None = None,
        open_only: bool = False,
        first: int | None = None,
        after: str | None = None,
    ) -> Connection[Job]:
        def load(uow: UnitOfWork, _actor: Actor) -> tuple[int, list[jobs.JobView]]:
            size = page_size(first, uow.settings.max_page_size)
            projects.ensure_project_exists(uow, str(project_id))
            found = jobs.list_jobs(
                uow,
                project_id=str(project_id),
                task_id=str(task_id) if task_id else None,
                open_only=open_only,
                after=decode_cursor(after),
                limit=size + 1,
            )
            return size, found

        size, found = await read(info, load)
        return connection(found, size, key=lambda v: v.id, node=Job.of)

    @strawberry.field
    async def evidence(self, info: Info[HubContext, Any], id: strawberry.ID) -> Evidence | None:
        view = await read_optional(info, lambda uow, _: jobs.get_evidence(uow, str(id)))
        return Evidence.of(view) if view else None

    @strawberry.field
    async def watch_window(
        self, info: Info[HubContext, Any], id: strawberry.ID
    ) -> WatchWindow | None:
        view = await read_optional(info, lambda uow, _: jobs.get_watch_window(uow, str(id)))
        return WatchWindow.of(view) if view else None


# --- mutations ------------------------------------------------------------------------


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
            info, lambda uow, actor: resources.register_job(uow, actor, command), _job_payload
        )

    @strawberry.mutation(description="Report the producer's status (RUNNING, or EXITED).")
    async def observe_job(
        self, info: Info[HubContext, Any], input: ObserveJobInput
    ) -> ObserveJobResult:
        def run(uow: UnitOfWork, actor: Actor) -> _Ended:
            view = jobs.observe_job(
                uow,
                actor,
                job_id=str(input.job_id),
                status=input.status.value,
                observed_at=input.observed_at,
                note=input.note,
            )
            # One transaction: an exit observation and the holds it resolves go together.
            return jobs.JobResult(view), resources.release_after_job(uow, actor, view)

        return await mutate(info, run, _ended_payload)

    @strawberry.mutation(description="Record the producer's terminal result (its exit status).")
    async def finish_job(
        self, info: Info[HubContext, Any], input: FinishJobInput
    ) -> FinishJobResult:
        def run(uow: UnitOfWork, actor: Actor) -> _Ended:
            result = jobs.finish_job(
                uow,
                actor,
                job_id=str(input.job_id),
                exit_status=input.exit_status,
                finished_at=input.finished_at,
                note=input.note,
            )
            released = [] if result.replay else resources.release_after_job(uow, actor, result.job)
            return result, released

        return await mutate(info, run, _ended_payload)

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
                    outcome=c.outcome.value,
                    reason=c.reason,
                    log_ref=c.log_ref,
                    artifact_refs=list(c.artifact_refs),
                )
                for c in input.checks
            ],
            artifact_access=input.artifact_access.value,
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
            lambda view, now: EvidencePayload(evidence=Evidence.of(view), server_time=now),
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
            lambda opened, now: OpenWatchWindowPayload(
                window=WatchWindow.of(opened.window),
                reporter_token=opened.reporter_token,
                server_time=now,
            ),
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
            lambda view, now: WatchWindowPayload(window=WatchWindow.of(view), server_time=now),
        )


# --- subscriptions --------------------------------------------------------------------


async def _job_observations(
    info: Info[HubContext, Any], project_id: strawberry.ID, job_id: strawberry.ID, after: int = 0
) -> AsyncGenerator[JobObservation, None]:
    runtime = info.context.runtime
    stream, wanted = str(project_id), str(job_id)

    def check(uow: UnitOfWork, actor: Actor) -> None:
        job = jobs.get_job(uow, wanted)
        if job.project_id != stream:
            raise jobs_not_in_project(wanted, stream)
        require_reporter_scope(actor, job.attempt_id, f"job {wanted}")

    # Checked first: an unknown job is a NOT_FOUND error, not a silent subscription.
    await read(info, check)
    # The job's changes are events of its project's stream: replay after `after`, then
    # live; other processes' commits arrive through LISTEN/NOTIFY (docs/design.md, "Scale").
    records = follow(
        runtime.aread,
        runtime.event_signal,
        stream=stream,
        after=max(after, 0),
        poll_seconds=runtime.settings.event_poll_seconds,
    )
    live = info.context.while_authenticated(records)
    async with aclosing(live):
        async for record in live:
            if record.subject_id == wanted and record.kind.startswith("job."):
                yield JobObservation.of(record)


def jobs_not_in_project(job_id: str, project_id: str) -> NotFound:
    return NotFound(f"job of project {project_id}", job_id)


@strawberry.type
class JobsSubscription:
    job_observations: AsyncGenerator[JobObservation, None] = strawberry.subscription(
        resolver=_job_observations,
        description="Replays one job's registration, observations and result after `after` "
        "(a project event sequence), then streams new ones live. Ends with an UNAUTHENTICATED "
        "error once the connection's credential no longer holds.",
    )
