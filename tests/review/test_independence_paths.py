"""Reviewer independence is one rule (`hub.work._independence`), judged on every path a
reviewer takes: claiming a review task by id, claiming the next eligible task, submitting
the review, and recording a human decision. One test per path; each fails if that path
stops asking the rule (docs/design.md, "Submissions, review and independence")."""

from __future__ import annotations

from typing import Any

import pytest

from hub.work import _claims as claims
from tests.support import work
from tests.support.sql import fetch_value
from tests.support.workflow import claim_review, deliver, human_review, review

NOT_INDEPENDENT = "independent review needs a separate session"


def _review_task(operator: Any, project: str) -> str:
    [review_task] = work.candidates(operator.api, project, kinds=["REVIEW"])
    return review_task


def test_claiming_a_review_task_by_id_refuses_its_contributor(operator, agent) -> None:
    implementer = agent()
    delivery = deliver(operator.api, implementer.api)

    review_task = _review_task(operator, delivery.project)
    refused = work.claim(implementer.api, delivery.project, review_task)
    assert refused["__typename"] == "PermissionDenied", refused
    assert NOT_INDEPENDENT in refused["message"]
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_REVIEW"


def test_claiming_a_second_review_task_by_id_refuses_a_session_already_reviewing(
    operator, agent
) -> None:
    """Two required reviews are two reviewers, not one session twice."""
    project = work.create_project(operator.api)
    work.set_policy(operator.api, project, requiredAgentApprovals=2, maxActiveAttemptsPerSession=2)
    delivery = deliver(operator.api, agent().api, project=project)
    reviewer = agent()
    first = claim_review(reviewer.api, project)
    assert first["__typename"] == "ClaimPayload", first
    [second] = [
        t for t in work.review_tasks(operator.api, delivery.submission) if t != first["task"]["id"]
    ]

    refused = work.claim(reviewer.api, project, second)
    assert refused["__typename"] == "PermissionDenied", refused
    assert f"already reviews submission {delivery.submission}" in refused["message"]


def test_the_next_eligible_claim_never_offers_a_contributor_its_review(operator, agent) -> None:
    implementer = agent()
    delivery = deliver(operator.api, implementer.api)

    nothing = claim_review(implementer.api, delivery.project)
    assert (nothing["__typename"], nothing["code"]) == ("NotFound", "NO_ELIGIBLE_TASK"), nothing
    # The control: the same review task goes to an independent session.
    assert claim_review(agent().api, delivery.project)["__typename"] == "ClaimPayload"


def test_submitting_a_review_refuses_a_contributor_holding_the_review_task(
    operator, agent, database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the claim by id stops a contributor before the review; without it, the
    contributor holds its own review task, and submitting the review still refuses it.
    The server runs in this process, so the patch reaches it."""
    monkeypatch.setattr(claims, "require_independent", lambda *_: None)
    implementer = agent()
    delivery = deliver(operator.api, implementer.api)
    claim = work.claim(implementer.api, delivery.project, _review_task(operator, delivery.project))
    assert claim["__typename"] == "ClaimPayload", claim  # the claim-time check is off

    refused = review(implementer.api, claim["attempt"], delivery.submission)
    assert refused["__typename"] == "PermissionDenied", refused
    assert NOT_INDEPENDENT in refused["message"]
    assert fetch_value(database, "SELECT count(*) FROM reviews") == 0
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_REVIEW"


def test_a_human_decision_refuses_a_person_whose_session_contributed(
    operator, make_principal, start_session, database
) -> None:
    project = work.create_project(operator.api)
    work.set_policy(operator.api, project, reviewPolicy="HUMAN")
    human = make_principal(kind="human")
    delivery = deliver(operator.api, start_session(human).api, project=project)

    refused = human_review(human.api, delivery.submission)
    assert refused["__typename"] == "PermissionDenied", refused
    assert "contributed to this candidate" in refused["message"]
    assert fetch_value(database, "SELECT count(*) FROM reviews") == 0
