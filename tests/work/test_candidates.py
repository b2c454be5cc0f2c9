"""The `candidates` query: ready work by priority then age, and only ready work."""

from __future__ import annotations

import pytest

from tests.support import work
from tests.support.client import GraphQLErrors
from tests.support.workflow import claim_review, deliver, review


def test_ready_work_comes_by_priority_then_age(operator) -> None:
    project = work.create_project(operator.api)
    old_low = work.new_task(operator.api, project, priority=0)
    old_high = work.new_task(operator.api, project, priority=5)
    new_high = work.new_task(operator.api, project, priority=5)
    urgent = work.new_task(operator.api, project, priority=100)
    new_low = work.new_task(operator.api, project, priority=0)
    negative = work.new_task(operator.api, project, priority=-3)

    assert work.candidates(operator.api, project) == [
        urgent, old_high, new_high, old_low, new_low, negative
    ]


def test_kinds_filter_and_first_limit_the_offer(operator) -> None:
    project = work.create_project(operator.api)
    general = work.new_task(operator.api, project, priority=1)
    implementation = work.new_task(operator.api, project, kind="IMPLEMENTATION")
    objective = work.new_task(operator.api, project, kind="OBJECTIVE", priority=9)

    assert work.candidates(operator.api, project, kinds=["IMPLEMENTATION"]) == [implementation]
    assert work.candidates(operator.api, project, kinds=["GENERAL", "OBJECTIVE"]) == [
        objective, general
    ]
    assert work.candidates(operator.api, project, kinds=["REVIEW"]) == []
    assert work.candidates(operator.api, project, first=2) == [objective, general]
    assert work.candidates(operator.api, project, first=1, kinds=["GENERAL"]) == [general]


def test_blocked_claimed_and_awaiting_review_work_is_not_offered(operator, agent) -> None:
    project = work.create_project(operator.api)
    prerequisite = work.new_task(operator.api, project)
    blocked = work.new_task(operator.api, project, prerequisiteIds=[prerequisite], priority=50)
    claimed = work.new_task(operator.api, project, priority=40)
    work.claimed(agent().api, project, claimed)
    delivered = deliver(operator.api, agent().api, project=project, priority=30)
    [review_task] = work.candidates(operator.api, project, kinds=["REVIEW"])

    assert work.task(operator.api, blocked)["effectiveState"] == "BLOCKED"
    assert work.task(operator.api, delivered.task)["state"] == "AWAITING_REVIEW"
    # The delivery's own review task is ready work (it inherits the priority); the
    # implementation waiting on it, the blocked task and the claimed one are not.
    assert work.candidates(operator.api, project) == [review_task, prerequisite]

    finisher = agent()
    attempt = work.claimed(finisher.api, project, prerequisite)["attempt"]
    work.accept(finisher.api, attempt)
    assert work.submit(finisher.api, attempt)["task"]["state"] == "DONE"
    assert work.candidates(operator.api, project) == [blocked, review_task]


def test_work_sent_back_for_revision_is_offered_again(operator, agent) -> None:
    delivery = deliver(operator.api, agent().api)
    reviewer = agent()
    claim = claim_review(reviewer.api, delivery.project)
    finding = {"severity": "MAJOR", "title": "no tests", "remedy": "add parser tests"}
    review(reviewer.api, claim["attempt"], delivery.submission, "REJECT", [finding])

    assert work.task(operator.api, delivery.task)["state"] == "REVISION_NEEDED"
    assert work.candidates(operator.api, delivery.project) == [delivery.task]


def test_an_expired_claim_is_not_offered_as_fresh_work(operator, agent, clock) -> None:
    project = work.create_project(operator.api)
    task_id = work.new_task(operator.api, project)
    attempt = work.claimed(agent().api, project, task_id)["attempt"]
    work.expire(clock, attempt)

    assert work.task(operator.api, task_id)["effectiveState"] == "RECOVERY_CANDIDATE"
    assert work.candidates(operator.api, project) == []  # recovery is claimRecovery's


def test_an_unknown_project_is_not_found(operator) -> None:
    with pytest.raises(GraphQLErrors) as refused:
        work.candidates(operator.api, "prj_00000000000000000000000000")
    assert refused.value.codes == ["NOT_FOUND"]


def test_first_out_of_range_is_refused(operator) -> None:
    project = work.create_project(operator.api)
    work.new_task(operator.api, project)
    for first in (0, -1, 100_000):
        with pytest.raises(GraphQLErrors) as refused:
            work.candidates(operator.api, project, first=first)
        assert refused.value.codes == ["VALIDATION_FAILED"]
