"""What an artifact belongs to: its project and, optionally, a task, an attempt, a job,
an evidence record and a review of that project.

Each id named must exist (`NotFound`) and belong to the artifact's project (else
`ValidationFailed` naming the field; the composite foreign keys refuse it as well).
Records that imply others fill them in and must agree with them where both are named:
an evidence record its job, attempt and task; a job its attempt and task; an attempt
its task. So an artifact uploaded for a job is listed under that job's task too.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hub.errors import ValidationFailed
from hub.identity import service as identity
from hub.identity.views import Actor
from hub.jobs import service as jobs
from hub.projects import service as projects
from hub.review import service as review
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work


@dataclass(frozen=True)
class Associations:
    task_id: str | None = None
    attempt_id: str | None = None
    job_id: str | None = None
    evidence_id: str | None = None
    review_id: str | None = None


def resolve(
    uow: UnitOfWork, actor: Actor, project_id: str, named: Associations
) -> Associations:
    """The associations, checked and completed (module docstring). A reporter token
    attaches only to a job of its own attempt."""
    projects.ensure_project_exists(uow, project_id)
    found = named
    if named.evidence_id is not None:
        evidence = jobs.get_evidence(uow, named.evidence_id)
        _same_project("evidenceId", "evidence", evidence.id, evidence.project_id, project_id)
        found = _implied(found, "evidenceId", evidence.id, job_id=evidence.job_id,
                         attempt_id=evidence.attempt_id, task_id=evidence.task_id)
    if found.job_id is not None:
        job = jobs.get_job(uow, found.job_id)
        _same_project("jobId", "job", job.id, job.project_id, project_id)
        found = _implied(found, "jobId", job.id, attempt_id=job.attempt_id, task_id=job.task_id)
    if found.attempt_id is not None:
        attempt = work.get_attempt(uow, found.attempt_id)
        _same_project("attemptId", "attempt", attempt.id, attempt.project_id, project_id)
        found = _implied(found, "attemptId", attempt.id, task_id=attempt.task_id)
    if found.task_id is not None:
        task = work.get_task(uow, found.task_id)
        _same_project("taskId", "task", task.id, task.project_id, project_id)
    if found.review_id is not None:
        reviewed = review.get_review(uow, found.review_id)
        _same_project("reviewId", "review", reviewed.id, reviewed.project_id, project_id)
    if actor.is_reporter:
        if found.job_id is None or found.attempt_id is None:
            raise ValidationFailed("jobId", "a reporter token attaches artifacts to a job only")
        identity.require_reporter_scope(actor, found.attempt_id, f"job {found.job_id}")
    return found


def _same_project(field: str, what: str, ident: str, owner: str, project_id: str) -> None:
    if owner != project_id:
        raise ValidationFailed(field, f"{what} {ident} belongs to another project")


def _implied(found: Associations, field: str, ident: str, **implied: str | None) -> Associations:
    """`found` with what `ident` implies filled in; a named id that differs is refused."""
    values: dict[str, str | None] = {}
    for name, value in implied.items():
        named = getattr(found, name)
        if value is None:
            continue
        if named is not None and named != value:
            label = name.removesuffix("_id")
            raise ValidationFailed(field, f"{ident} belongs to {label} {value}, not to {named}")
        values[name] = value
    return replace(found, **values)
