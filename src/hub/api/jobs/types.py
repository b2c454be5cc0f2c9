"""GraphQL types of the jobs module: jobs, evidence, watch windows, observations."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import strawberry
from strawberry.types import Info

from hub.api.artifacts.types import Artifact, artifacts_of
from hub.api.context import HubContext
from hub.api.jobs.enums import (
    ArtifactAccess,
    CheckOutcome,
    Freshness,
    ProducerStatus,
)
from hub.api.loaders import each, load
from hub.api.mapping import from_view, shows
from hub.artifacts import service as artifacts
from hub.jobs import service as jobs
from hub.storage.unit_of_work import UnitOfWork


@strawberry.type
class Job:
    id: strawberry.ID
    project_id: strawberry.ID
    task_id: strawberry.ID
    attempt_id: strawberry.ID
    job_id: str = strawberry.field(
        description="The client's own id, unique per project.", metadata=shows("client_job_id")
    )
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


@strawberry.type
class CheckResult:
    name: str
    outcome: CheckOutcome
    reason: str
    log_ref: str | None
    artifact_refs: list[str]


@strawberry.type
class Applicability:
    applies: bool
    reason: str


def _applicability(uow: UnitOfWork, key: tuple[str, str | None, str | None]) -> jobs.Applicability:
    evidence_id, revision, tree_digest = key
    return jobs.evidence_applicability(uow, evidence_id, revision=revision, tree_digest=tree_digest)


_APPLICABILITY = each(_applicability)


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
        self,
        info: Info[HubContext, Any],
        revision: str | None = None,
        tree_digest: str | None = None,
    ) -> Applicability:
        found = await load(info, _APPLICABILITY, (str(self.id), revision, tree_digest))
        return from_view(Applicability, found)

    @strawberry.field(
        description="The artifacts it cites, in the order cited, then those uploaded for it "
        "(`evidenceId`), in whatever state: a gone one says when and why."
    )
    async def artifacts(self, info: Info[HubContext, Any]) -> list[Artifact]:
        return await artifacts_of(info, artifacts.evidence_artifacts, str(self.id))


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
