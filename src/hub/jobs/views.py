"""What the jobs module returns: plain, immutable views, judged at read time.

Freshness and the stale-progress warning are computed from coordinator time when a
view is made, never by a background job: silence becomes `UNOBSERVED`, not stopped.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from hub.events.service import EventRecord
from hub.jobs.tables import Evidence, Job, WatchWindow
from hub.jobs.vocabulary import (
    TERMINAL_STATUSES,
    CheckOutcome,
    Freshness,
    ProducerStatus,
)
from hub.mapping import view_of


@dataclass(frozen=True)
class JobView:
    id: str
    project_id: str
    task_id: str
    attempt_id: str
    client_job_id: str
    producer: str
    runner_host: str
    checkout: str
    snapshot: str | None
    operation: str
    invocation: str
    expected_deadline: datetime | None
    freshness_seconds: int
    status: ProducerStatus
    exit_status: int | None
    status_note: str | None
    observed_at: datetime | None
    last_heard_at: datetime | None
    observation_count: int
    registered_at: datetime
    registered_by: str
    started_at: datetime | None
    finished_at: datetime | None
    reservation_ids: tuple[str, ...]
    # Judged now, from coordinator time:
    freshness: Freshness
    stale_progress: bool
    past_deadline: bool
    judged_at: datetime

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES


@dataclass(frozen=True)
class JobResult:
    job: JobView
    replay: bool = False


@dataclass(frozen=True)
class ObservationView:
    """One change of a job (registered, observed, exited, finished), as recorded."""

    sequence: int  # the project event sequence: a follower resumes after it
    job_id: str
    kind: str
    status: str | None
    exit_status: int | None
    observed_at: datetime | None
    occurred_at: datetime
    actor_id: str | None


def observation(record: EventRecord, job_id: str) -> ObservationView | None:
    """The change `record` of its project's event log made to job `job_id`, if any: a
    job's changes are the `job.*` events with the job as their subject (`hub.jobs._runs`
    writes them)."""
    if record.subject_id != job_id or not record.kind.startswith("job."):
        return None
    payload = record.payload
    observed = payload.get("observedAt")
    return ObservationView(
        sequence=record.seq,
        job_id=record.subject_id,
        kind=record.kind,
        status=payload.get("status") or None,
        exit_status=payload.get("exitStatus"),
        observed_at=datetime.fromisoformat(observed) if observed else None,
        occurred_at=record.occurred_at,
        actor_id=record.actor_id,
    )


def job_view(row: Job, now: datetime, stale_progress_seconds: int) -> JobView:
    terminal = row.status in TERMINAL_STATUSES
    heard = row.last_heard_at or row.registered_at
    silent_for = now - heard
    if terminal:
        freshness = Freshness.FINAL
    elif silent_for >= timedelta(seconds=row.freshness_seconds):
        # Not heard within the window: unknown, never "stopped": a previously running job
        # with an unreachable observer is unobserved, not proved stopped (docs/design.md,
        # "Jobs and evidence").
        freshness = Freshness.UNOBSERVED
    else:
        freshness = Freshness.FRESH
    return view_of(
        JobView,
        row,
        freshness=freshness,
        # A warning only: it never fails, restarts or releases anything.
        stale_progress=not terminal and silent_for >= timedelta(seconds=stale_progress_seconds),
        past_deadline=(
            not terminal and row.expected_deadline is not None and now >= row.expected_deadline
        ),
        judged_at=now,
    )


@dataclass(frozen=True)
class CheckResult:
    name: str
    outcome: str
    reason: str
    log_ref: str | None
    artifact_refs: tuple[str, ...]


@dataclass(frozen=True)
class EvidenceView:
    id: str
    project_id: str
    task_id: str
    attempt_id: str
    job_id: str | None
    revision: str | None
    tree_digest: str | None
    dirty_snapshot_digest: str | None
    changed_paths: tuple[str, ...]
    check_definition_revision: str
    config_fingerprint: str
    environment_identity: str
    started_at: datetime
    ended_at: datetime
    inputs_stable: bool
    required_checks: tuple[str, ...]
    checks: tuple[CheckResult, ...]
    producer_id: str
    reviewer_id: str | None
    artifact_access: str
    artifact_digests: tuple[str, ...]
    wrapper_reported_success: bool | None
    recorded_at: datetime
    job_exit_status: int | None
    passed: bool
    not_passed_because: tuple[str, ...]


@dataclass(frozen=True)
class Applicability:
    applies: bool
    reason: str


def evidence_view(row: Evidence, job: Job | None) -> EvidenceView:
    checks = tuple(_check(item) for item in row.checks or [])
    reasons = verdict(row, checks, job)
    return view_of(
        EvidenceView,
        row,
        checks=checks,
        job_exit_status=job.exit_status if job is not None else None,
        passed=not reasons,
        not_passed_because=tuple(reasons),
    )


def verdict(row: Evidence, checks: tuple[CheckResult, ...], job: Job | None) -> list[str]:
    """Why this evidence is not a pass (empty: it is one).

    Only the producer's own results count: a wrapper's success, a missing check, an
    unknown exit status or an interrupted run never become a pass (docs/design.md, "Jobs
    and evidence").
    """
    reasons: list[str] = []
    required = list(row.required_checks or ())
    if not required:
        reasons.append("no required checks were declared")
    outcomes = {check.name: check.outcome for check in checks}
    for name in required:
        outcome = outcomes.get(name)
        if outcome is None:
            reasons.append(f"required check {name!r} has no outcome")
        elif outcome != CheckOutcome.PASS:
            reasons.append(f"required check {name!r} is {outcome}")
    if not row.inputs_stable:
        reasons.append("inputs changed while the checks ran")
    if row.job_id is not None:
        if job is None or job.exit_status is None:
            reasons.append(f"job {row.job_id} has no producer exit status")
        elif job.exit_status != 0:
            reasons.append(f"job {row.job_id} exited with status {job.exit_status}")
    return reasons


def applicability(
    view: EvidenceView, *, revision: str | None, tree_digest: str | None
) -> Applicability:
    """Whether this evidence speaks for the snapshot `revision` (with `tree_digest`).

    Applicability is exact. Evidence of a dirty snapshot (a commit plus uncommitted
    changes) applies only where the tree digests are identical: the commit it started
    from says nothing about the changes. Evidence of a clean commit applies to that very
    commit (full ids, compared whole: a prefix could name another commit), and, if it
    recorded its tree digest, a differing digest for the same commit refuses it.
    """
    if view.dirty_snapshot_digest is not None:
        if tree_digest is None or view.tree_digest is None:
            return Applicability(
                False,
                "evidence of a dirty snapshot applies only through an identical tree digest",
            )
        if tree_digest != view.tree_digest:
            return Applicability(False, "the snapshot's tree digest differs from this one")
        return Applicability(True, "dirty snapshot with an identical tree digest")
    if revision is not None and view.revision is not None:
        if revision != view.revision:
            return Applicability(False, f"evidence is for commit {view.revision}, not {revision}")
        if tree_digest and view.tree_digest and tree_digest != view.tree_digest:
            return Applicability(False, "the commit matches but the tree digests differ")
        return Applicability(True, "same commit")
    if tree_digest is not None and view.tree_digest is not None and tree_digest == view.tree_digest:
        return Applicability(True, "identical tree digest")
    return Applicability(False, "no commit or tree digest to compare")


def _check(item: dict[str, Any]) -> CheckResult:
    return CheckResult(
        name=str(item["name"]),
        outcome=str(item["outcome"]),
        reason=str(item.get("reason") or ""),
        log_ref=item.get("logRef"),
        artifact_refs=tuple(item.get("artifactRefs") or ()),
    )


@dataclass(frozen=True)
class WindowView:
    id: str
    project_id: str
    task_id: str
    attempt_id: str
    session_id: str
    action: str
    opened_at: datetime
    ends_at: datetime
    closed_at: datetime | None
    close_reason: str | None
    is_open: bool


@dataclass(frozen=True)
class OpenedWindow:
    window: WindowView
    reporter_token: str


def window_view(row: WatchWindow, now: datetime) -> WindowView:
    return view_of(WindowView, row, is_open=row.closed_at is None and now < row.ends_at)
