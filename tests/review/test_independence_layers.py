"""Reviewer independence is checked twice: when a review task is claimed, and again when
the review is submitted. These tests take the claim-time layer away and show the
review-time layer (`review.service.submit_review`, `NotIndependent`) still refuses a
contributor approving its own candidate."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
from sqlalchemy import Select, false, select

from hub.work import attempts, workflow
from hub.work.tables import Submission
from tests.support import work
from tests.support.sql import fetch_value
from tests.support.workflow import claim_review, deliver, review


def _no_submission_is_off_limits(_session_id: Any) -> Select[Any]:
    return select(Submission.id).where(false())


@pytest.fixture
def without_claim_time_independence(monkeypatch: pytest.MonkeyPatch) -> None:
    """Switch off both claim-time defences: the named-claim check and the next-eligible
    filter. The server runs in this process, so patching the modules reaches it; the
    next-eligible statement is cached, so it gets a fresh cache that sees the patch."""
    monkeypatch.setattr(workflow, "check_independent_reviewer", lambda *_: None)
    monkeypatch.setattr(workflow, "not_reviewable_by", _no_submission_is_off_limits)
    monkeypatch.setattr(attempts, "_next_eligible", cache(attempts._next_eligible.__wrapped__))


def _refused_as_not_independent(reviewer: Any, claim: dict[str, Any], submission: str) -> None:
    assert claim["__typename"] == "ClaimPayload", claim  # the claim-time layer is off
    refused = review(reviewer.api, claim["attempt"], submission)
    assert refused["__typename"] == "PermissionDenied", refused
    assert "independent review needs a separate session" in refused["message"]


@pytest.mark.usefixtures("without_claim_time_independence")
def test_the_implementers_session_cannot_approve_its_own_work_at_review_time(
    operator, agent, database
) -> None:
    implementer = agent()
    delivery = deliver(operator.api, implementer.api)

    claim = claim_review(implementer.api, delivery.project)  # offered its own review task
    _refused_as_not_independent(implementer, claim, delivery.submission)
    assert fetch_value(database, "SELECT count(*) FROM reviews") == 0
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_REVIEW"
    review_task = work.task(operator.api, claim["task"]["id"])
    assert (review_task["state"], review_task["currentAttemptId"]) == (
        "IN_PROGRESS", claim["attempt"]["id"]
    )


@pytest.mark.usefixtures("without_claim_time_independence")
def test_an_earlier_contributors_session_cannot_approve_at_review_time(
    operator, agent, clock, database
) -> None:
    """The session of an expired attempt that a recovery replaced is a contributor too."""
    project = work.create_project(operator.api)
    task = work.new_task(operator.api, project, kind="IMPLEMENTATION")
    first, second = agent(), agent()
    work.expire(clock, work.claimed(first.api, project, task)["attempt"])
    attempt = work.recovered(second.api, task)["attempt"]
    work.dispose(second.api, attempt, "RESTART", "nothing was pushed")
    delivery = deliver(operator.api, second.api, project=project, task=task, attempt=attempt)
    [review_task] = work.candidates(operator.api, project, kinds=["REVIEW"])

    claim = work.claim(first.api, project, review_task)  # by name this time
    _refused_as_not_independent(first, claim, delivery.submission)
    assert fetch_value(database, "SELECT count(*) FROM reviews") == 0
    assert work.task(operator.api, task)["state"] == "AWAITING_REVIEW"


def test_with_both_layers_on_the_contributor_never_gets_the_review_task(
    operator, agent
) -> None:
    """The control: unpatched, the claim-time layer already stops the implementer."""
    implementer = agent()
    delivery = deliver(operator.api, implementer.api)
    assert claim_review(implementer.api, delivery.project)["__typename"] == "NotFound"
