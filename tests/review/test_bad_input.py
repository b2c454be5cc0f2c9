"""Workflow refusals name the rule and change nothing."""

from __future__ import annotations

from tests.support import work
from tests.support.workflow import (
    approve_by_new_reviewer,
    claim_integration,
    claim_review,
    deliver,
    review,
    sha,
)


def test_a_review_task_reviews_only_its_own_submission(operator, agent) -> None:
    mine = deliver(operator.api, agent().api)
    theirs = deliver(operator.api, agent().api)  # another project
    reviewer = agent()
    claim = claim_review(reviewer.api, mine.project)
    refused = review(reviewer.api, claim["attempt"], theirs.submission)
    assert refused["__typename"] == "ValidationFailed", refused
    assert work.task(operator.api, theirs.task)["state"] == "AWAITING_REVIEW"
    assert work.task(operator.api, mine.task)["state"] == "AWAITING_REVIEW"


def test_unapproved_or_superseded_submissions_are_not_integrated(operator, agent) -> None:
    implementer = agent()
    first = deliver(operator.api, implementer.api)
    unapproved = claim_integration(agent().api, first.submission)
    assert unapproved["__typename"] == "InvalidTransition", unapproved

    critic = agent()
    claim = claim_review(critic.api, first.project)
    review(
        critic.api,
        claim["attempt"],
        first.submission,
        "REJECT",
        [{"severity": "MINOR", "title": "typo", "remedy": "fix it"}],
    )
    second = deliver(
        operator.api,
        implementer.api,
        project=first.project,
        repository=first.repository,
        task=first.task,
        candidate=sha("d"),
    )
    approve_by_new_reviewer(agent().api, first.project, second.submission)
    superseded = claim_integration(agent().api, first.submission)
    assert superseded["__typename"] in ("InvalidTransition", "Conflict"), superseded
    current = claim_integration(agent().api, second.submission)
    assert current["__typename"] == "ClaimIntegrationPayload", current


def test_malformed_reviews_and_reports_are_validation_failures(operator, agent) -> None:
    delivery = deliver(operator.api, agent().api)
    reviewer = agent()
    claim = claim_review(reviewer.api, delivery.project)
    bare_reject = review(reviewer.api, claim["attempt"], delivery.submission, "REJECT")
    assert bare_reject["__typename"] == "ValidationFailed"
    assert "finding" in bare_reject["message"]
    vague = review(
        reviewer.api,
        claim["attempt"],
        delivery.submission,
        "REJECT",
        [{"severity": "BLOCKER", "title": "bad", "remedy": "  "}],
    )
    assert vague["__typename"] == "ValidationFailed" and "remedy" in vague["message"]
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_REVIEW"
