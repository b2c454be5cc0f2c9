"""Evidence: immutable records of what a check run showed about one exact snapshot.

`passed` is never stored: it is derived from the required roster, the per-check
outcomes and the producing job's exit status (`hub.jobs.views.verdict`), so no
wrapper's claim of success can turn a missing or interrupted check into a pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, select

from hub.errors import (
    NotFound,
    ValidationFailed,
    raises,
)
from hub.events.service import (
    record_event,
)
from hub.identity import service as identity
from hub.identity.views import Actor
from hub.ids import new_id
from hub.inputs import (
    clean_choice,
    clean_full_revision,
    clean_label,
    clean_list,
    clean_moment,
    clean_optional,
    clean_text,
)
from hub.jobs.tables import Evidence, Job
from hub.jobs.views import Applicability, EvidenceView, applicability, evidence_view
from hub.jobs.vocabulary import ArtifactAccess, CheckOutcome, JobEvent
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work

MAX_CHECKS = 500
MAX_PATHS = 5000


@dataclass(frozen=True)
class CheckReport:
    name: str
    outcome: str
    reason: str = ""
    log_ref: str | None = None
    artifact_refs: Sequence[str] = ()


@dataclass(frozen=True)
class EvidenceRecord:
    attempt_id: str
    generation: int
    check_definition_revision: str
    config_fingerprint: str
    environment_identity: str
    started_at: datetime
    ended_at: datetime
    inputs_stable: bool
    required_checks: Sequence[str]
    checks: Sequence[CheckReport]
    artifact_access: str
    revision: str | None = None
    tree_digest: str | None = None
    dirty_snapshot_digest: str | None = None
    changed_paths: Sequence[str] = ()
    job_id: str | None = None
    reviewer_id: str | None = None
    artifact_digests: Sequence[str] = field(default_factory=tuple)
    wrapper_reported_success: bool | None = None


@raises(*work.HOLDING, ValidationFailed)
def record_evidence(uow: UnitOfWork, actor: Actor, cmd: EvidenceRecord) -> EvidenceView:
    """Store one evidence record for the caller's current attempt (never changed after).

    A reporter token may record evidence only for a job of its own attempt: that is
    reporting the job, which is all it may do.
    """
    if actor.is_reporter and cmd.job_id is None:
        raise ValidationFailed("jobId", "a reporter token records evidence only for a job")
    values = _clean(cmd)
    held = work.hold_attempt(
        uow, actor, attempt_id=cmd.attempt_id, generation=cmd.generation, reporter_ok=True
    )
    now = uow.now()
    job = None
    if cmd.job_id is not None:
        job = uow.session.get(Job, cmd.job_id)
        if job is None or job.task_id != held.attempt.task_id:
            raise NotFound("job of this task", cmd.job_id)
        if actor.is_reporter and job.attempt_id != held.attempt.id:
            # A reporter reports the jobs of its one attempt, not its predecessors'.
            raise NotFound("job of this attempt", cmd.job_id)
    if cmd.reviewer_id is not None:
        identity.get_principal(uow, cmd.reviewer_id)
    row = Evidence(
        id=new_id("evd"),
        project_id=held.attempt.project_id,
        task_id=held.attempt.task_id,
        attempt_id=held.attempt.id,
        job_id=cmd.job_id,
        producer_id=actor.principal_id,
        reviewer_id=cmd.reviewer_id,
        started_at=clean_moment("startedAt", cmd.started_at),
        ended_at=clean_moment("endedAt", cmd.ended_at),
        inputs_stable=cmd.inputs_stable,
        wrapper_reported_success=cmd.wrapper_reported_success,
        recorded_at=now,
        **values,
    )
    uow.session.add(row)
    uow.session.flush()
    view = evidence_view(row, job)
    record_event(
        uow,
        JobEvent.EVIDENCE_RECORDED,
        row,
        by=actor,
        payload={
            "evidence": row.id,
            "task": row.task_id,
            "job": row.job_id,
            "revision": row.revision,
            "passed": view.passed,
        },
    )
    return view


def _clean(cmd: EvidenceRecord) -> dict[str, Any]:
    revision = clean_full_revision("revision", cmd.revision) if cmd.revision else None
    dirty = clean_optional("dirtySnapshotDigest", cmd.dirty_snapshot_digest, 128)
    if revision is None and dirty is None:
        raise ValidationFailed(
            "revision", "name the exact commit, or a dirty-snapshot digest with changed paths"
        )
    if clean_moment("endedAt", cmd.ended_at) < clean_moment("startedAt", cmd.started_at):
        raise ValidationFailed("endedAt", "must not be before startedAt")
    artifact_access = clean_choice("artifactAccess", cmd.artifact_access, ArtifactAccess)
    required = clean_list(
        "requiredChecks", cmd.required_checks, max_items=MAX_CHECKS, max_length=200
    )
    if len(set(required)) != len(required):
        raise ValidationFailed("requiredChecks", "must not name a check twice")
    if len(cmd.checks) > MAX_CHECKS:
        raise ValidationFailed("checks", f"must have at most {MAX_CHECKS} items")
    checks: list[dict[str, Any]] = []
    for index, check in enumerate(cmd.checks):
        where = f"checks[{index}]"
        outcome = clean_choice(f"{where}.outcome", check.outcome, CheckOutcome)
        reason = clean_text(f"{where}.reason", check.reason, 2000, required=False)
        if outcome != CheckOutcome.PASS and not reason:
            # A failure, skip or interruption without a reason can't be acted on.
            raise ValidationFailed(f"{where}.reason", f"a {outcome} check needs a reason")
        checks.append(
            {
                "name": clean_label(f"{where}.name", check.name, 200),
                "outcome": outcome,
                "reason": reason,
                "logRef": clean_optional(f"{where}.logRef", check.log_ref, 1000),
                "artifactRefs": clean_list(
                    f"{where}.artifactRefs", check.artifact_refs, max_items=50, max_length=1000
                ),
            }
        )
    if len({check["name"] for check in checks}) != len(checks):
        raise ValidationFailed("checks", "must not report a check twice")
    return {
        "revision": revision,
        "tree_digest": clean_optional("treeDigest", cmd.tree_digest, 128),
        "dirty_snapshot_digest": dirty,
        "changed_paths": clean_list("changedPaths", cmd.changed_paths, max_items=MAX_PATHS,
                                    max_length=1000),
        "check_definition_revision": clean_label(
            "checkDefinitionRevision", cmd.check_definition_revision, 200
        ),
        "config_fingerprint": clean_label("configFingerprint", cmd.config_fingerprint, 200),
        "environment_identity": clean_label(
            "environmentIdentity", cmd.environment_identity, 200
        ),
        "required_checks": required,
        "checks": checks,
        "artifact_access": artifact_access,
        "artifact_digests": clean_list(
            "artifactDigests", cmd.artifact_digests, max_items=50, max_length=200
        ),
    }


def get_evidence(uow: UnitOfWork, evidence_id: str) -> EvidenceView:
    row = uow.session.get(Evidence, evidence_id)
    if row is None:
        raise NotFound("evidence", evidence_id)
    job = uow.session.get(Job, row.job_id) if row.job_id else None
    return evidence_view(row, job)


def evidence_for_task(uow: UnitOfWork, task_id: str) -> list[EvidenceView]:
    return _views(uow, Evidence.task_id == task_id)


def evidence_for_jobs(uow: UnitOfWork, job_ids: Sequence[str]) -> list[EvidenceView]:
    """The evidence these jobs produced, oldest first."""
    return _views(uow, Evidence.job_id.in_(job_ids)) if job_ids else []


def _views(uow: UnitOfWork, which: ColumnElement[bool]) -> list[EvidenceView]:
    rows = uow.session.scalars(select(Evidence).where(which).order_by(Evidence.id)).all()
    job_ids = {row.job_id for row in rows if row.job_id}
    jobs = {
        job.id: job
        for job in (uow.session.scalars(select(Job).where(Job.id.in_(job_ids))) if job_ids else ())
    }
    return [evidence_view(row, jobs.get(row.job_id or "")) for row in rows]


def evidence_applicability(
    uow: UnitOfWork, evidence_id: str, *, revision: str | None, tree_digest: str | None
) -> Applicability:
    view = get_evidence(uow, evidence_id)
    revision = clean_full_revision("revision", revision) if revision else None
    tree_digest = clean_optional("treeDigest", tree_digest, 128)
    return applicability(view, revision=revision, tree_digest=tree_digest)
