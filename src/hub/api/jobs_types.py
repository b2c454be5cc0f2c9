"""GraphQL types of the jobs module: jobs, evidence, watch windows, observations."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.context import HubContext
from hub.api.operations import read
from hub.events.service import EventRecord
from hub.jobs import service as jobs


@strawberry.enum(description="What the producer last reported; not how fresh that is.")
class ProducerStatus(Enum):
    REGISTERED = "REGISTERED"
    RUNNING = "RUNNING"
    EXITED = "EXITED"
    FINISHED = "FINISHED"


@strawberry.enum
class ObservedStatus(Enum):
    RUNNING = "RUNNING"
    EXITED = "EXITED"


@strawberry.enum(
    description="How recently anything was heard, judged now: UNOBSERVED is not stopped."
)
class Freshness(Enum):
    FRESH = "FRESH"
    UNOBSERVED = "UNOBSERVED"
    FINAL = "FINAL"


@strawberry.enum
class CheckOutcome(Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    SKIPPED = "SKIPPED"
    INTERRUPTED = "INTERRUPTED"


@strawberry.enum
class ArtifactAccess(Enum):
    SHARED = "SHARED"
    LOCAL_ONLY = "LOCAL_ONLY"
    UNAVAILABLE = "UNAVAILABLE"


@strawberry.type
class Job:
    id: strawberry.ID
    project_id: strawberry.ID
    task_id: strawberry.ID
    attempt_id: strawberry.ID
    job_id: str = strawberry.field(description="The client's own id, unique per project.")
    producer: str
    runner_host: str
    checkout: str
    snapshot: str | None
    operation: str
    invocation: str
    expected_deadline: datetime | None
    freshness_seconds: int
    status: ProducerStatus
    exit_status: int | None = strawberry.field(description="The producer's own exit status.")
    status_note: str | None
    observed_at: datetime | None = strawberry.field(description="As the observer reported it.")
    last_heard_at: datetime | None = strawberry.field(description="Coordinator time.")
    observation_count: int
    registered_at: datetime
    registered_by: strawberry.ID
    started_at: datetime | None
    finished_at: datetime | None
    reservation_ids: list[strawberry.ID] = strawberry.field(
        description="The reservations the job declared it depends on."
    )
    freshness: Freshness
    stale_progress: bool = strawberry.field(
        description="Silent past the stale-progress threshold: a warning, nothing more."
    )
    past_deadline: bool
    judged_at: datetime

    @classmethod
    def of(cls, view: jobs.JobView) -> Job:
        return cls(
            id=strawberry.ID(view.id),
            project_id=strawberry.ID(view.project_id),
            task_id=strawberry.ID(view.task_id),
            attempt_id=strawberry.ID(view.attempt_id),
            job_id=view.client_job_id,
            producer=view.producer,
            runner_host=view.runner_host,
            checkout=view.checkout,
            snapshot=view.snapshot,
            operation=view.operation,
            invocation=view.invocation,
            expected_deadline=view.expected_deadline,
            freshness_seconds=view.freshness_seconds,
            status=ProducerStatus(view.status),
            exit_status=view.exit_status,
            status_note=view.status_note,
            observed_at=view.observed_at,
            last_heard_at=view.last_heard_at,
            observation_count=view.observation_count,
            registered_at=view.registered_at,
            registered_by=strawberry.ID(view.registered_by),
            started_at=view.started_at,
            finished_at=view.finished_at,
            reservation_ids=[strawberry.ID(r) for r in view.reservation_ids],
            freshness=Freshness(view.freshness),
            stale_progress=view.stale_progress,
            past_deadline=view.past_deadline,
            judged_at=view.judged_at,
        )


@strawberry.type
class CheckResult:
    name: str
    outcome: CheckOutcome
    reason: str
    log_ref: str | None
    artifact_refs: list[str]

    @classmethod
    def of(cls, view: jobs.CheckResult) -> CheckResult:
        return cls(
            name=view.name,
            outcome=CheckOutcome(view.outcome),
            reason=view.reason,
            log_ref=view.log_ref,
            artifact_refs=list(view.artifact_refs),
        )


@strawberry.type
class Applicability:
    applies: bool
    reason: str


@strawberry.type
class Evidence:
    id: strawberry.ID
    project_id: strawberry.ID
    task_id: strawberry.ID
    attempt_id: strawberry.ID
    job_id: strawberry.ID | None
    revision: str | None
    tree_digest: str | None
    dirty_snapshot_digest: str | None
    changed_paths: list[str]
    check_definition_revision: str
    config_fingerprint: str
    environment_identity: str
    started_at: datetime
    ended_at: datetime
    inputs_stable: bool
    required_checks: list[str]
    checks: list[CheckResult]
    producer_id: strawberry.ID
    reviewer_id: strawberry.ID | None
    artifact_access: ArtifactAccess
    artifact_digests: list[str]
    wrapper_reported_success: bool | None = strawberry.field(
        description="Recorded for the record; it never makes a pass."
    )
    recorded_at: datetime
    job_exit_status: int | None
    passed: bool = strawberry.field(
        description="Every required check PASS and the producing job exited 0; derived."
    )
    not_passed_because: list[str]

    @strawberry.field(
        description="Whether this evidence speaks for a snapshot: the same commit, or a "
        "dirty snapshot with an identical tree digest."
    )
    async def applies_to(
        self, info: Info[HubContext, Any], revision: str | None = None,
        tree_digest: str | None = None,
    ) -> Applicability:
        evidence_id = str(self.id)
        found = await read(
            info,
            lambda uow, _: jobs.evidence_applicability(
                uow, evidence_id, revision=revision, tree_digest=tree_digest
            ),
        )
        return Applicability(applies=found.applies, reason=found.reason)

    @classmethod
    def of(cls, view: jobs.EvidenceView) -> Evidence:
        return cls(
            id=strawberry.ID(view.id),
            project_id=strawberry.ID(view.project_id),
            task_id=strawberry.ID(view.task_id),
            attempt_id=strawberry.ID(view.attempt_id),
            job_id=strawberry.ID(view.job_id) if view.job_id else None,
            revision=view.revision,
            tree_digest=view.tree_digest,
            dirty_snapshot_digest=view.dirty_snapshot_digest,
            changed_paths=list(view.changed_paths),
            check_definition_revision=view.check_definition_revision,
            config_fingerprint=view.config_fingerprint,
            environment_identity=view.environment_identity,
            started_at=view.started_at,
            ended_at=view.ended_at,
            inputs_stable=view.inputs_stable,
            required_checks=list(view.required_checks),
            checks=[CheckResult.of(c) for c in view.checks],
            producer_id=strawberry.ID(view.producer_id),
            reviewer_id=strawberry.ID(view.reviewer_id) if view.reviewer_id else None,
            artifact_access=ArtifactAccess(view.artifact_access),
            artifact_digests=list(view.artifact_digests),
            wrapper_reported_success=view.wrapper_reported_success,
            recorded_at=view.recorded_at,
            job_exit_status=view.job_exit_status,
            passed=view.passed,
            not_passed_because=list(view.not_passed_because),
        )


@strawberry.type
class WatchWindow:
    id: strawberry.ID
    project_id: strawberry.ID
    task_id: strawberry.ID
    attempt_id: strawberry.ID
    session_id: strawberry.ID
    action: str
    opened_at: datetime
    ends_at: datetime
    closed_at: datetime | None
    close_reason: str | None
    is_open: bool

    @classmethod
    def of(cls, view: jobs.WindowView) -> WatchWindow:
        return cls(
            id=strawberry.ID(view.id),
            project_id=strawberry.ID(view.project_id),
            task_id=strawberry.ID(view.task_id),
            attempt_id=strawberry.ID(view.attempt_id),
            session_id=strawberry.ID(view.session_id),
            action=view.action,
            opened_at=view.opened_at,
            ends_at=view.ends_at,
            closed_at=view.closed_at,
            close_reason=view.close_reason,
            is_open=view.is_open,
        )


@strawberry.type(description="One change of a job, from the project's event log.")
class JobObservation:
    sequence: int = strawberry.field(description="The project event sequence: resume after it.")
    job_id: strawberry.ID
    kind: str = strawberry.field(
        description="job.registered, job.observed, job.exited or job.finished."
    )
    status: ProducerStatus | None
    exit_status: int | None
    observed_at: datetime | None
    occurred_at: datetime
    actor_id: strawberry.ID | None

    @classmethod
    def of(cls, record: EventRecord) -> JobObservation:
        payload = record.payload
        status = payload.get("status")
        observed = payload.get("observedAt")
        return cls(
            sequence=record.seq,
            job_id=strawberry.ID(record.subject_id),
            kind=record.kind,
            status=ProducerStatus(status) if status else None,
            exit_status=payload.get("exitStatus"),
            observed_at=datetime.fromisoformat(observed) if observed else None,
            occurred_at=record.occurred_at,
            actor_id=strawberry.ID(record.actor_id) if record.actor_id else None,
        )
