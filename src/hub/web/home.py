"""The home page's "what needs me" (`/`): what waits on a person, across projects, before
the list of projects.

Five short lists, each the first `SHOWN` of its kind and how many there are in all,
each read through its owning module's service (docs/architecture.md, "The dashboard"):
reviews waiting for a human with what the agent asked them to look at, tasks whose lease
ran out (recovery candidates), reservations held for an operator, integrations whose
publish is uncertain, and jobs past the deadline they declared. Every item links to the
page where it is acted on; ages are coordinator time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from hub.identity import service as identity
from hub.integration import service as integration
from hub.jobs import service as jobs
from hub.mapping import Shortlist
from hub.projects import service as projects
from hub.resources import service as resources
from hub.review import service as review
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work

SHOWN = 10


@dataclass(frozen=True)
class RecoveryCandidate:
    task: work.TaskView
    attempt: work.AttemptView  # the attempt whose lease ran out


@dataclass(frozen=True)
class Attention:
    reviews: Shortlist[review.QueueItem]
    recoveries: Shortlist[RecoveryCandidate]
    holds: Shortlist[resources.ReservationView]
    integrations: Shortlist[integration.IntegrationView]
    jobs: Shortlist[jobs.JobView]
    project_names: dict[str, str]
    names: dict[str, str]  # principal id -> name
    warning_seconds: int  # the review queue's escalation threshold
    now: datetime

    @property
    def total(self) -> int:
        return sum(
            shortlist.total
            for shortlist in (
                self.reviews, self.recoveries, self.holds, self.integrations, self.jobs
            )
        )

    def project(self, project_id: str) -> str:
        return self.project_names.get(project_id, project_id)

    def name(self, principal_id: str) -> str:
        return self.names.get(principal_id, principal_id)

    def waited(self, since: datetime) -> float:
        return (self.now - since).total_seconds()


def read_attention(uow: UnitOfWork) -> Attention:
    reviews = review.waiting_for_human(uow, limit=SHOWN)
    expired = work.recovery_candidates(uow, limit=SHOWN)
    attempts = work.get_attempts(
        uow, [task.current_attempt_id for task in expired.items if task.current_attempt_id]
    )
    by_id = {attempt.id: attempt for attempt in attempts}
    recoveries = Shortlist(
        [
            RecoveryCandidate(task, by_id[task.current_attempt_id])
            for task in expired.items
            if task.current_attempt_id in by_id
        ],
        expired.total,
    )
    holds = resources.holds(uow, limit=SHOWN)
    uncertain = integration.uncertain_integrations(uow, limit=SHOWN)
    overdue = jobs.jobs_past_deadline(uow, limit=SHOWN)
    project_ids = {item.task.project_id for item in reviews.items}
    project_ids |= {candidate.task.project_id for candidate in recoveries.items}
    project_ids |= {hold.project_id for hold in holds.items}
    project_ids |= {made.project_id for made in uncertain.items}
    project_ids |= {job.project_id for job in overdue.items}
    people = {
        asked.requested_by for item in reviews.items for asked in item.status.human_review_requests
    }
    people |= {candidate.attempt.principal_id for candidate in recoveries.items}
    return Attention(
        reviews=reviews,
        recoveries=recoveries,
        holds=holds,
        integrations=uncertain,
        jobs=overdue,
        project_names={
            project_id: projects.get_project(uow, project_id).name
            for project_id in sorted(project_ids)
        },
        names=identity.principal_names(uow, people),
        warning_seconds=uow.settings.review_wait_warning_seconds,
        now=uow.now(),
    )
