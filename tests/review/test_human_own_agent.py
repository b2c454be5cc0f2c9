"""`humanMayApproveOwnAgent`: a human who worked on a candidate (through a session they
opened with their own token) may approve it only if the project's policy says so, as
pinned when the candidate was submitted."""

from __future__ import annotations

from typing import Any

from hub.storage.database import Database
from tests.support import work
from tests.support.sql import fetch_all
from tests.support.workflow import Delivery, deliver, human_review


def _human_reviews(database: Database) -> list[tuple[str, str]]:
    rows = fetch_all(
        database, "SELECT principal_id, decision FROM reviews WHERE reviewer_kind = 'HUMAN'"
    )
    return [(row["principal_id"], row["decision"]) for row in rows]


def _delivered_by_human(
    operator: Any, make_principal: Any, start_session: Any, **policy: Any
) -> tuple[Any, Delivery]:
    """A HUMAN-review project where a human implements in their own session."""
    project = work.create_project(operator.api)
    work.set_policy(operator.api, project, reviewPolicy="HUMAN", **policy)
    human = make_principal(kind="human")
    delivery = deliver(operator.api, start_session(human).api, project=project)
    return human, delivery


def test_a_human_contributor_cannot_approve_their_own_work_by_default(
    operator, make_principal, start_session, database
) -> None:
    human, delivery = _delivered_by_human(operator, make_principal, start_session)

    refused = human_review(human.api, delivery.submission)
    assert refused["__typename"] == "PermissionDenied", refused
    assert "contributed to this candidate" in refused["message"]
    assert _human_reviews(database) == []
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_REVIEW"

    someone_else = make_principal(kind="human")
    approved = human_review(someone_else.api, delivery.submission)
    assert approved["status"]["approved"] is True
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_INTEGRATION"


def test_a_human_contributors_rejection_is_refused_in_its_own_words(
    operator, make_principal, start_session, database
) -> None:
    human, delivery = _delivered_by_human(operator, make_principal, start_session)

    refused = human_review(human.api, delivery.submission, decision="REJECT")
    assert refused["__typename"] == "PermissionDenied", refused
    assert "contributors reject their own work" in refused["message"]
    assert "approve" not in refused["message"]
    assert _human_reviews(database) == []


def test_the_policy_may_let_a_human_approve_their_own_agents_work(
    operator, make_principal, start_session, database
) -> None:
    human, delivery = _delivered_by_human(
        operator, make_principal, start_session, humanMayApproveOwnAgent=True
    )

    approved = human_review(human.api, delivery.submission)
    assert approved["__typename"] == "ReviewPayload", approved
    assert approved["review"]["reviewerKind"] == "HUMAN"
    assert (approved["status"]["humanApprovals"], approved["status"]["approved"]) == (1, True)
    assert _human_reviews(database) == [(human.id, "APPROVE")]
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_INTEGRATION"


def test_the_policy_pinned_at_submission_decides_not_a_later_change(
    operator, make_principal, start_session, database
) -> None:
    human, delivery = _delivered_by_human(operator, make_principal, start_session)
    later = work.set_policy(operator.api, delivery.project, humanMayApproveOwnAgent=True)
    assert later["humanMayApproveOwnAgent"] is True

    refused = human_review(human.api, delivery.submission)
    assert refused["__typename"] == "PermissionDenied", refused
    assert _human_reviews(database) == []


def test_the_allowance_is_for_humans_not_for_the_contributing_session(
    operator, make_principal, start_session
) -> None:
    """Even when allowed, the decision comes from the human's own token: the session
    that did the work cannot record a human review."""
    project = work.create_project(operator.api)
    work.set_policy(operator.api, project, reviewPolicy="HUMAN", humanMayApproveOwnAgent=True)
    human = make_principal(kind="human")
    session = start_session(human)
    delivery = deliver(operator.api, session.api, project=project)

    refused = human_review(session.api, delivery.submission)
    assert refused["__typename"] == "PermissionDenied", refused
    assert human_review(human.api, delivery.submission)["status"]["approved"] is True
