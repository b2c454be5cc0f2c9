"""Human review on the dashboard: the review queue (`/reviews`) and the submission page
(`/submissions/{id}`) with the approve/reject form.

docs/design.md ("Submissions, review and independence") and scenario 11 of
docs/scenarios.md: a submission waiting on a missing reviewer shows why, and past
`review_wait_warning_seconds` the queue flags it; only a signed-in human
records the human decision, through `hub.review.service.record_human_review`, which
also refuses obsolete submissions. Pages are read in one transaction from service
functions; a decision is one write, then POST-redirect-GET back to the page.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from hub.artifacts import service as artifacts
from hub.errors import HubError, NotFound
from hub.identity import service as identity
from hub.integration import service as integration
from hub.jobs import service as jobs
from hub.projects import service as projects
from hub.review import service as review
from hub.review.vocabulary import REQUIRED_SEVERITIES, FindingSeverity
from hub.runtime import Runtime
from hub.storage.unit_of_work import UnitOfWork
from hub.web.links import id_href
from hub.web.review_form import DecisionForm, refusal_status
from hub.web.signin import require_viewer
from hub.web.templates import render
from hub.work import service as work
from hub.work.views import CheckpointView, SubmissionView, WorktreeView
from hub.work.vocabulary import CANDIDATE_OUTCOMES, TaskState


@dataclass(frozen=True)
class QueueRow:
    item: review.QueueItem
    project_name: str
    waited_seconds: float


@dataclass(frozen=True)
class ReviewQueue:
    rows: list[QueueRow]  # oldest first
    escalated: int
    warning_seconds: int
    names: dict[str, str]  # principal id -> name, for who asked for a human review
    now: datetime

    def name(self, principal_id: str) -> str:
        return self.names.get(principal_id, principal_id)


# The ids this page shows in a section of its own (anchor names), by prefix.
_SUBMISSION_PAGE_ANCHORS = {"rev": "review", "fnd": "finding"}


@dataclass(frozen=True)
class EvidenceLine:
    """A recorded check run for the task, and whether it speaks for this candidate."""

    evidence: jobs.EvidenceView
    applies: jobs.Applicability


@dataclass(frozen=True)
class SubmissionPage:
    project: projects.ProjectView
    task: work.TaskView
    submission: SubmissionView
    current: SubmissionView | None  # the task's current candidate
    policy: projects.PolicyView  # the revision pinned to this submission
    status: review.ReviewStatus
    reviews: list[review.ReviewView]  # of this submission, oldest first
    earlier_findings: list[review.FindingView]  # raised on the task's other submissions
    checkpoints: tuple[CheckpointView, ...]
    worktrees: tuple[WorktreeView, ...]
    submissions: tuple[SubmissionView, ...]  # every submission of the task
    evidence: list[EvidenceLine]
    # The task's artifacts (uploaded for it, its attempts, jobs or evidence), and those
    # uploaded for or cited by this submission's reviews or cited by the task's evidence.
    artifacts: list[artifacts.ListedArtifact]
    integrations: list[integration.IntegrationView]
    names: dict[str, str]  # principal id -> name
    closed_because: str | None  # why no decision can be recorded here, if it cannot
    now: datetime

    @property
    def obsolete(self) -> bool:
        return self.current is None or self.current.id != self.submission.id

    @property
    def integration(self) -> integration.IntegrationView | None:
        """This submission's latest integration: an approved submission's verdict says
        how far it has gone since (published, validated), not only that it was approved."""
        made = [i for i in self.integrations if i.submission_id == self.submission.id]
        return made[-1] if made else None

    def href(self, reference: object) -> str | None:
        """Where an id shown on this page leads (None for anything that is no id)."""
        return id_href(reference, project_id=self.project.id, task_id=self.task.id,
                       here=_SUBMISSION_PAGE_ANCHORS)

    def name(self, principal_id: str | None) -> str:
        if principal_id is None:
            return "—"
        return self.names.get(principal_id, principal_id)


def read_review_queue(uow: UnitOfWork) -> ReviewQueue:
    items = review.review_queue(uow)
    project_names = {
        project_id: projects.get_project(uow, project_id).name
        for project_id in {item.task.project_id for item in items}
    }
    now = uow.now()
    rows = [
        QueueRow(
            item,
            project_names[item.task.project_id],
            (now - item.waiting_since).total_seconds(),
        )
        for item in items
    ]
    requesters = {
        asked.requested_by for item in items for asked in item.status.human_review_requests
    }
    return ReviewQueue(
        rows=rows,
        escalated=sum(1 for item in items if item.escalated),
        warning_seconds=uow.settings.review_wait_warning_seconds,
        names=identity.principal_names(uow, requesters),
        now=now,
    )


def read_submission_page(uow: UnitOfWork, submission_id: str) -> SubmissionPage:
    submission = work.get_submission(uow, submission_id)
    packet = work.recovery_packet(uow, submission.task_id)
    task = packet.task
    current = work.current_submission(uow, task.id)
    reviews = review.list_reviews(uow, submission.id)
    earlier = [
        finding
        for finding in review.list_findings(uow, task.id)
        if finding.submission_id != submission.id
    ]
    evidence = [
        EvidenceLine(
            found,
            jobs.evidence_applicability(
                uow, found.id, revision=submission.candidate_revision, tree_digest=None
            ),
        )
        # The task's own evidence, and what the submission cites from elsewhere in the
        # project (an ALREADY_SATISFIED submission may cite another task's).
        for found in _unique(
            [
                *jobs.evidence_for_task(uow, task.id),
                *(jobs.get_evidence(uow, cited) for cited in submission.evidence_ids),
            ]
        )
    ]
    status = review.review_status(uow, submission.id)
    people = {submission.principal_id}
    people |= {asked.requested_by for asked in status.human_review_requests}
    people |= {r.principal_id for r in reviews}
    people |= {f.resolved_by for r in reviews for f in r.findings if f.resolved_by}
    people |= {f.resolved_by for f in earlier if f.resolved_by}
    people |= {line.evidence.producer_id for line in evidence}
    return SubmissionPage(
        project=projects.get_project(uow, submission.project_id),
        task=task,
        submission=submission,
        current=current,
        policy=projects.get_policy(uow, submission.project_id, submission.policy_revision),
        status=status,
        reviews=reviews,
        earlier_findings=earlier,
        checkpoints=packet.checkpoints,
        worktrees=packet.worktrees,
        submissions=packet.submissions,
        evidence=evidence,
        artifacts=artifacts.listed_artifacts(
            uow,
            submission.project_id,
            task_ids=[task.id],
            evidence_ids=[line.evidence.id for line in evidence],
            review_ids=[made.id for made in reviews],
        ),
        integrations=integration.integrations_of(uow, task.id),
        names=identity.principal_names(uow, people),
        closed_because=_closed_because(submission, current, task),
        now=uow.now(),
    )


def _unique(records: list[jobs.EvidenceView]) -> list[jobs.EvidenceView]:
    return list({record.id: record for record in records}.values())


def _closed_because(
    submission: SubmissionView, current: SubmissionView | None, task: work.TaskView
) -> str | None:
    """Why the page offers no decision form. The service enforces the same rule
    (`record_human_review` refuses obsolete submissions); this only spares a person
    filling in a form that cannot be accepted."""
    if submission.outcome not in CANDIDATE_OUTCOMES:
        return (
            f"This submission reported {submission.outcome} and delivered no candidate "
            "revision: there is nothing to approve."
        )
    if current is None or current.id != submission.id:
        return (
            "This submission is obsolete: a newer submission is the task's current "
            "candidate. Reviews apply only to the submission they name, so a decision "
            "recorded here could not approve the current one."
        )
    if task.state != TaskState.AWAITING_REVIEW:
        return f"Review of this submission is settled: the task is now {task.state}."
    return None


def review_routes(runtime: Runtime) -> list[BaseRoute]:
    async def review_queue(request: Request) -> Response:
        await require_viewer(runtime, request)
        queue = await runtime.aread(read_review_queue)
        return render(request, "reviews.html", {"queue": queue})

    async def submission_page(request: Request) -> Response:
        await require_viewer(runtime, request)
        submission_id = request.path_params["submission_id"]
        page = await runtime.aread(lambda uow: read_submission_page(uow, submission_id))
        recorded = _recorded(page, request.query_params.get("recorded"))
        return _show(request, page, DecisionForm(), recorded=recorded)

    async def record_decision(request: Request) -> Response:
        viewer = await require_viewer(runtime, request)
        submission_id = request.path_params["submission_id"]
        form = DecisionForm.read(await request.form())
        if form.adds_finding:
            form = form.with_another_finding()
            page = await runtime.aread(lambda uow: read_submission_page(uow, submission_id))
            return _show(request, page, form)
        decision = form.decision_for(submission_id)

        def record(uow: UnitOfWork) -> review.ReviewView:
            # The sign-in is judged again inside the write: a viewer signed out since
            # the request was checked (sign-in token revoked, principal disabled)
            # records nothing.
            assert viewer.web_session_id is not None
            actor = identity.require_web_session(uow, viewer.web_session_id)
            return review.record_human_review(uow, actor, decision)

        try:
            made = await runtime.awrite(record)
        except NotFound:
            raise
        except HubError as error:
            page = await runtime.aread(lambda uow: read_submission_page(uow, submission_id))
            return _show(request, page, form.refused(error), status_code=refusal_status(error))
        return RedirectResponse(
            f"/submissions/{submission_id}?recorded={made.id}#review-status", status_code=303
        )

    return [
        Route("/reviews", review_queue, methods=["GET"]),
        Route("/submissions/{submission_id}", submission_page, methods=["GET"]),
        Route("/submissions/{submission_id}/decision", record_decision, methods=["POST"]),
    ]


def _show(
    request: Request,
    page: SubmissionPage,
    form: DecisionForm,
    *,
    recorded: review.ReviewView | None = None,
    status_code: int = 200,
) -> Response:
    context = {
        "page": page,
        "form": form,
        "recorded": recorded,
        "severities": tuple(FindingSeverity),
        "required_severities": REQUIRED_SEVERITIES,
    }
    return render(request, "submission.html", context, status_code=status_code)


def _recorded(page: SubmissionPage, review_id: str | None) -> review.ReviewView | None:
    """The decision just recorded, named by the redirect after the form (PRG)."""
    return next((r for r in page.reviews if r.id == review_id), None)
