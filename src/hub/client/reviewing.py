"""`hub agent review …`: an independent review of someone else's submission.

A reviewer claims a review task (`AgentClient.review_next`, a claim of kind REVIEW),
reads the submission in the brief of the task it delivers (`review_show`), and records
its decision under that attempt (`review`, keyed like every change an attempt makes).
Contributors propose resolutions of findings; reviewers clear them (`resolve_finding`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hub.client.briefs import brief_of
from hub.client.engine import ClientEngine, Recorded, require_attempt, require_session
from hub.client.errors import ProblemError, StateError, UsageError
from hub.client.mapping import to_graphql
from hub.client.operations import Mutation
from hub.client.results import FindingResolved, ReviewRecorded, ReviewStatusReported, TaskBrief


@dataclass(frozen=True)
class FindingDraft:
    """A finding as a reviewer writes it: severity, title and a concrete remedy."""

    severity: str
    title: str
    remedy: str
    detail: str = ""


class ReviewCommands(ClientEngine):
    def review_show(self, submission_id: str | None = None) -> TaskBrief:
        """A submission with its task, reviews, findings and review status, in the brief
        of the task it delivers; by default the one the current review or integration
        attempt is for."""
        state = self.state_file.read()
        server, session = require_session(state)
        if submission_id is None:
            attempt = require_attempt(state)
            if attempt.subject_submission_id is None:
                raise StateError(
                    f"attempt {attempt.id} is not on a review or integration task: name the "
                    "submission"
                )
            submission_id = attempt.subject_submission_id
        with self.api(server, session.token) as api:
            found = api.submission(submission_id)
            if found is None:
                raise ProblemError(
                    "NotFound",
                    "NOT_FOUND",
                    f"no submission {submission_id}",
                    {"what": "submission"},
                )
            brief = brief_of(api, found.task)
        return TaskBrief(
            task=found.task,
            repository=brief.repository,
            branch=brief.branch,
            open_findings=brief.open_findings,
            subject=found,
        )

    def review(
        self,
        *,
        decision: str,
        summary: str,
        findings: Sequence[FindingDraft] = (),
        evidence: Sequence[str] = (),
        artifact_ids: Sequence[str] = (),
    ) -> Recorded[ReviewRecorded]:
        """Record the review decision under the current review attempt (submitReview),
        citing `artifact_ids` (`hub agent attach` prints them)."""
        if decision == "REJECT" and not findings:
            raise UsageError("a rejection names at least one finding (--finding)")
        state = self.state_file.read()
        attempt = require_attempt(state)
        subject = attempt.subject_submission_id
        if attempt.task_kind != "REVIEW" or subject is None:
            raise StateError(
                f"attempt {attempt.id} is not on a review task: claim one with "
                "`hub agent review next`"
            )
        review = Mutation(
            "submitReview",
            {
                "attemptId": attempt.id,
                "generation": attempt.generation,
                "submissionId": subject,
                "decision": decision,
                "summary": summary,
                "findings": [to_graphql(f) for f in findings],
                "evidence": list(evidence),
                "artifactIds": list(artifact_ids),
            },
            ReviewRecorded,
        )
        self._check_authority(state, attempt, review)
        # A review is a submission: keyed like the others, and the key is reused after an
        # uncertain answer, so a retry replays the recorded review instead of a second one.
        return self._under_attempt(state, review)

    def request_human_review(self, submission_id: str, *, context: str) -> ReviewStatusReported:
        """Ask for a human decision. Safe to repeat: a repeat adds the request again."""
        state = self.state_file.read()
        server, session = require_session(state)
        with self.api(server, session.token) as api:
            return api.send(
                Mutation(
                    "requestHumanReview",
                    {"submissionId": submission_id, "context": context},
                    ReviewStatusReported,
                )
            )

    def resolve_finding(
        self, finding_id: str, *, resolution: str, evidence: Sequence[str]
    ) -> FindingResolved:
        """Record how a finding was addressed. Safe to repeat: a resolved finding stays as
        it was first resolved."""
        state = self.state_file.read()
        server, session = require_session(state)
        with self.api(server, session.token) as api:
            return api.send(
                Mutation(
                    "resolveFinding",
                    {"findingId": finding_id, "resolution": resolution, "evidence": list(evidence)},
                    FindingResolved,
                )
            )
