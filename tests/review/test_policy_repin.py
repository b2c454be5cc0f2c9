"""A submission keeps the review policy revision it was submitted under; only an
operator's explicit re-pin (with a reason) moves it onto the current revision, opening
the reviews it now needs, closing unclaimed surplus ones and settling its status."""

from __future__ import annotations

from collections.abc import Callable

from hub.storage.database import Database
from tests.conftest import AgentSession, Principal
from tests.support import work
from tests.support.review import repin, status, workflow_tasks
from tests.support.sql import events_of
from tests.support.workflow import (
    Delivery,
    approve_by_new_reviewer,
    claim_review,
    deliver,
    human_review,
    review,
)


def delivered(
    operator: Principal, agent: Callable[..., AgentSession], **policy: object
) -> Delivery:
    """A submission made under the project's policy (revision 2 when `policy` is given,
    else the default revision 1: AGENT review, one approval)."""
    project = work.create_project(operator.api)
    if policy:
        work.set_policy(operator.api, project, **policy)
    return deliver(operator.api, agent().api, project=project)


def review_states(operator: Principal, delivery: Delivery) -> list[str]:
    return [task["state"] for task in workflow_tasks(operator.api, delivery.project, "REVIEW")]


def test_without_a_repin_a_policy_change_leaves_the_open_submission_alone(
    operator: Principal, agent: Callable[..., AgentSession]
) -> None:
    delivery = delivered(operator, agent)
    work.set_policy(
        operator.api, delivery.project, reviewPolicy="AGENT_AND_HUMAN", requiredAgentApprovals=2
    )
    pinned = status(operator.api, delivery.submission)
    assert (pinned["policyRevision"], pinned["reviewPolicy"]) == (1, "AGENT")
    assert (pinned["requiredAgentApprovals"], pinned["requiredHumanApprovals"]) == (1, 0)
    assert review_states(operator, delivery) == ["OPEN"]

    approve_by_new_reviewer(agent().api, delivery.project, delivery.submission)
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_INTEGRATION"


def test_only_an_operator_repins_with_a_reason_onto_a_newer_revision(
    operator: Principal,
    agent: Callable[..., AgentSession],
    make_principal: Callable[..., Principal],
    database: Database,
) -> None:
    delivery = delivered(operator, agent)
    current = repin(operator.api, delivery.submission, "nothing changed yet")
    assert current["__typename"] == "InvalidTransition", current
    assert "already pinned to policy revision 1" in current["message"]

    work.set_policy(operator.api, delivery.project, requiredAgentApprovals=2)
    for someone in (agent().api, make_principal(kind="human").api):
        refused = repin(someone, delivery.submission, "I would like two reviews")
        assert refused["__typename"] == "PermissionDenied", refused
    for reason in ("", "   "):
        unexplained = repin(operator.api, delivery.submission, reason)
        assert (unexplained["__typename"], unexplained["field"]) == ("ValidationFailed", "reason")
    assert status(operator.api, delivery.submission)["policyRevision"] == 1
    assert review_states(operator, delivery) == ["OPEN"]
    assert events_of(database, "review.policy_repinned") == []

    # Once review is settled there is nothing left to re-pin.
    approve_by_new_reviewer(agent().api, delivery.project, delivery.submission)
    settled = repin(operator.api, delivery.submission, "too late")
    assert settled["__typename"] == "InvalidTransition", settled
    assert "awaiting review" in settled["message"]
    assert status(operator.api, delivery.submission)["policyRevision"] == 1


def test_raising_required_approvals_opens_another_review_task(
    operator: Principal, agent: Callable[..., AgentSession], database: Database
) -> None:
    delivery = delivered(operator, agent)
    work.set_policy(operator.api, delivery.project, requiredAgentApprovals=2)

    raised = repin(operator.api, delivery.submission, "payments code needs two reviewers")
    assert raised["__typename"] == "ReviewStatusPayload", raised
    assert raised["status"]["policyRevision"] == 2
    assert raised["status"]["requiredAgentApprovals"] == 2
    assert review_states(operator, delivery) == ["OPEN", "OPEN"]
    [event] = events_of(database, "review.policy_repinned")
    assert event == {
        "subject": delivery.task,
        "actor": operator.id,
        "submission": delivery.submission,
        "from": 1,
        "to": 2,
        "reason": "payments code needs two reviewers",
    }

    approve_by_new_reviewer(agent().api, delivery.project, delivery.submission)
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_REVIEW"
    approve_by_new_reviewer(agent().api, delivery.project, delivery.submission)
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_INTEGRATION"


def test_lowering_required_approvals_already_met_moves_on_to_integration(
    operator: Principal, agent: Callable[..., AgentSession]
) -> None:
    delivery = delivered(operator, agent, requiredAgentApprovals=2)
    approve_by_new_reviewer(agent().api, delivery.project, delivery.submission)
    assert review_states(operator, delivery) == ["DONE", "OPEN"]
    work.set_policy(operator.api, delivery.project, requiredAgentApprovals=1)

    lowered = repin(operator.api, delivery.submission, "one review is enough here")
    assert lowered["status"]["readyForIntegration"] is True
    reviews = workflow_tasks(operator.api, delivery.project, "REVIEW")
    assert [(t["state"], t["closeReason"]) for t in reviews] == [
        ("DONE", None),
        ("CLOSED", "SUPERSEDED"),
    ]
    assert "one review is enough here" in reviews[1]["closeNote"]
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_INTEGRATION"
    [integration] = workflow_tasks(operator.api, delivery.project, "INTEGRATION")
    assert (integration["state"], integration["subjectSubmissionId"]) == (
        "OPEN",
        delivery.submission,
    )


def test_repinning_from_agent_to_human_review_closes_the_agent_review_and_waits_for_a_human(
    operator: Principal, agent: Callable[..., AgentSession]
) -> None:
    delivery = delivered(operator, agent)
    work.set_policy(operator.api, delivery.project, reviewPolicy="HUMAN")

    human = repin(operator.api, delivery.submission, "a person must see this one")
    assert human["status"]["reviewPolicy"] == "HUMAN"
    assert human["status"]["waitingReason"] == "waiting for a human reviewer (0 of 1 approvals)"
    assert review_states(operator, delivery) == ["CLOSED"]
    assert claim_review(agent().api, delivery.project)["__typename"] == "NotFound"
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_REVIEW"

    assert human_review(operator.api, delivery.submission)["status"]["approved"] is True
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_INTEGRATION"


def test_repinning_to_no_review_moves_straight_on_to_integration(
    operator: Principal, agent: Callable[..., AgentSession]
) -> None:
    delivery = delivered(operator, agent)
    work.set_policy(operator.api, delivery.project, reviewPolicy="NONE")

    none = repin(operator.api, delivery.submission, "docs-only change")
    assert none["status"]["readyForIntegration"] is True
    assert review_states(operator, delivery) == ["CLOSED"]
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_INTEGRATION"
    assert [t["state"] for t in workflow_tasks(operator.api, delivery.project, "INTEGRATION")] == [
        "OPEN"
    ]


def test_a_repin_that_settles_review_closes_a_claimed_review_task(
    operator: Principal, agent: Callable[..., AgentSession]
) -> None:
    project = work.create_project(operator.api)
    delivery = deliver(operator.api, agent().api, project=project)
    reviewer = agent()
    claim = claim_review(reviewer.api, project)
    assert claim["__typename"] == "ClaimPayload", claim
    work.set_policy(operator.api, project, reviewPolicy="NONE")
    moved = repin(operator.api, delivery.submission, "this change needs no review")
    assert moved["__typename"] == "ReviewStatusPayload", moved
    assert work.task(operator.api, delivery.task)["state"] == "AWAITING_INTEGRATION"
    # The reviewer is not left holding a task that can no longer finish.
    review_task = work.task(operator.api, claim["task"]["id"])
    assert review_task["state"] == "CLOSED" and review_task["currentAttemptId"] is None
    late = review(reviewer.api, claim["attempt"], delivery.submission)
    assert late["__typename"] == "InvalidTransition", late
