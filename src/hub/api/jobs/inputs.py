"""Inputs of the jobs mutations."""

from __future__ import annotations

from datetime import datetime

import strawberry

from hub.api.jobs.enums import ArtifactAccess, CheckOutcome, ObservedStatus


@strawberry.input
class RegisterJobInput:
    attempt_id: strawberry.ID
    generation: int
    job_id: str = strawberry.field(
        description="Client-chosen, unique per project; a retry with the same data is a replay."
    )
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
        default=None,
        description="Silence longer than this reads UNOBSERVED (default: three heartbeats).",
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
    artifact_ids: list[strawberry.ID] = strawberry.field(
        default_factory=list,
        description="Artifacts of this project the evidence cites (its logs, its reports): "
        "each must exist and still have its bytes. Cited EVIDENCE artifacts are kept while "
        "the evidence is.",
    )


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
