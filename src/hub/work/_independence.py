"""Reviewer independence, defined once (docs/design.md, "Submissions, review and
independence").

A session may not review a submission when it held an attempt on the submission's task
(it contributed to the candidate, across recoveries and resubmissions), or when it holds
or held an attempt on one of the submission's review tasks (two required reviews are two
reviewers, not one session twice). A person may not decide on a candidate their own
sessions contributed to, unless the pinned policy lets them (`humanMayApproveOwnAgent`).

`_CONFLICTS` is that definition, as one relation: who stands in which relation to a
submission, through which attempt. `require_independent` judges a reviewer with it and
explains a refusal (`NotIndependent`) wherever a reviewer is judged: claiming a review
task by id (`claims.claim_task`), submitting the review (`review.submit_review`) and
recording a human decision (`review.record_human_review`); the next-eligible claim
filters with the same relation (`excluded_submissions`), so a session is never offered
a review it would be refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Select, bindparam, literal, select, union_all
from sqlalchemy.orm import InstrumentedAttribute

from hub.storage.unit_of_work import UnitOfWork
from hub.work.errors import NotIndependent
from hub.work.tables import Attempt, Submission, Task
from hub.work.vocabulary import TaskKind

CONTRIBUTED = "CONTRIBUTED"
REVIEWS = "REVIEWS"


def _attempts(
    submission_id: InstrumentedAttribute[Any], relation: str
) -> Select[str, str, str, str, str, str]:
    """Attempts standing in `relation` to the submission `submission_id` names."""
    return select(
        submission_id.label("submission_id"),
        Attempt.session_id,
        Attempt.principal_id,
        Attempt.id.label("attempt_id"),
        Attempt.task_id,
        literal(relation).label("relation"),
    )


_CONFLICTS = union_all(
    _attempts(Submission.id, CONTRIBUTED).join(Attempt, Attempt.task_id == Submission.task_id),
    _attempts(Task.subject_submission_id, REVIEWS)
    .join(Attempt, Attempt.task_id == Task.id)
    .where(Task.kind == TaskKind.REVIEW),
).subquery("reviewer_conflicts")

# Prebuilt: a review claim, every review and every human decision run one of these.
_AGENT_CONFLICT = (
    select(_CONFLICTS)
    .where(
        _CONFLICTS.c.submission_id == bindparam("submission"),
        _CONFLICTS.c.session_id == bindparam("session"),
        # The attempt under which the review is made is the review, not a conflict.
        _CONFLICTS.c.attempt_id != bindparam("review_attempt"),
    )
    .order_by(_CONFLICTS.c.relation, _CONFLICTS.c.attempt_id)
    .limit(1)
)
# An agent review and a human decision are different reviews: a person is judged against
# the candidate's contributors only.
_PERSON_CONFLICT = (
    select(_CONFLICTS)
    .where(
        _CONFLICTS.c.submission_id == bindparam("submission"),
        _CONFLICTS.c.principal_id == bindparam("principal"),
        _CONFLICTS.c.relation == CONTRIBUTED,
    )
    .order_by(_CONFLICTS.c.attempt_id)
    .limit(1)
)


@dataclass(frozen=True)
class Reviewer:
    """Who would review a submission: an agent's session (with its attempt on the review
    task once it holds one), or a person deciding."""

    session_id: str | None = None
    review_attempt_id: str | None = None
    principal_id: str | None = None
    name: str = ""
    # A person: what they would do ("approve", "reject"), and whether the pinned policy
    # lets contributors do it to their own work.
    verb: str = "review"
    own_work_allowed: bool = False

    @classmethod
    def agent(cls, session_id: str, review_attempt_id: str | None = None) -> Reviewer:
        return cls(session_id=session_id, review_attempt_id=review_attempt_id)

    @classmethod
    def person(cls, principal_id: str, name: str, *, verb: str, own_work_allowed: bool) -> Reviewer:
        return cls(
            principal_id=principal_id, name=name, verb=verb, own_work_allowed=own_work_allowed
        )


def require_independent(uow: UnitOfWork, submission_id: str, reviewer: Reviewer) -> None:
    """Refuse, saying why (`NotIndependent`), a reviewer who is not independent of the
    submission."""
    uow.session.flush()  # a Core read: see this transaction's own attempts
    if reviewer.session_id is not None:
        conflict = uow.session.execute(
            _AGENT_CONFLICT,
            {
                "submission": submission_id,
                "session": reviewer.session_id,
                "review_attempt": reviewer.review_attempt_id or "",
            },
        ).first()
        if conflict is None:
            return
        if conflict.relation == REVIEWS:
            raise NotIndependent(
                f"session {reviewer.session_id} already reviews submission {submission_id} "
                f"(attempt {conflict.attempt_id}): two required reviews are two reviewers"
            )
        raise NotIndependent(
            f"session {reviewer.session_id} contributed to the candidate of task "
            f"{conflict.task_id} (attempt {conflict.attempt_id}): an independent review "
            "needs a separate session"
        )
    if reviewer.own_work_allowed:
        return
    conflict = uow.session.execute(
        _PERSON_CONFLICT, {"submission": submission_id, "principal": reviewer.principal_id}
    ).first()
    if conflict is not None:
        raise NotIndependent(
            f"{reviewer.name} contributed to this candidate and the policy does not let "
            f"contributors {reviewer.verb} their own work"
        )


def excluded_submissions(session_id: str | ColumnElement[str]) -> Select[str]:
    """The submissions a session may not review (for the next-eligible claim's filter)."""
    return select(_CONFLICTS.c.submission_id).where(_CONFLICTS.c.session_id == session_id)
