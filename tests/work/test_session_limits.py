"""The per-session active-attempt limit (`maxActiveAttemptsPerSession`, default 1)."""

from __future__ import annotations

from tests.support import work


def test_a_second_claim_in_the_same_session_is_blocked_naming_the_held_attempt(
    operator, agent
) -> None:
    project = work.create_project(operator.api)
    first, second = work.new_task(operator.api, project), work.new_task(operator.api, project)
    a = agent()
    held = work.claimed(a.api, project, first)["attempt"]

    for blocked in (work.claim(a.api, project, second), work.claim(a.api, project)):
        assert blocked["__typename"] == "Blocked", blocked
        assert blocked["blockers"] == [held["id"]]
    assert work.task(operator.api, second)["state"] == "OPEN"
    assert work.claim(agent().api, project, second)["__typename"] == "ClaimPayload"


def test_raising_the_limit_allows_more_attempts_in_one_session(operator, agent) -> None:
    project = work.create_project(operator.api)
    tasks = [work.new_task(operator.api, project) for _ in range(3)]
    policy = work.set_policy(operator.api, project, maxActiveAttemptsPerSession=2)
    assert policy["maxActiveAttemptsPerSession"] == 2
    a = agent()
    one = work.claimed(a.api, project, tasks[0])["attempt"]
    two = work.claimed(a.api, project, tasks[1])["attempt"]

    third = work.claim(a.api, project, tasks[2])
    assert third["__typename"] == "Blocked", third
    assert sorted(third["blockers"]) == sorted([one["id"], two["id"]])


def test_an_expired_attempt_does_not_count(operator, agent, clock) -> None:
    project = work.create_project(operator.api)
    first, second = work.new_task(operator.api, project), work.new_task(operator.api, project)
    a = agent()
    expired = work.claimed(a.api, project, first)["attempt"]
    work.expire(clock, expired)

    claim = work.claim(a.api, project, second)
    assert claim["__typename"] == "ClaimPayload", claim
    assert work.task(operator.api, first)["effectiveState"] == "RECOVERY_CANDIDATE"


def test_a_finished_attempt_does_not_count(operator, agent) -> None:
    project = work.create_project(operator.api)
    first, second = work.new_task(operator.api, project), work.new_task(operator.api, project)
    a = agent()
    attempt = work.claimed(a.api, project, first)["attempt"]
    work.accept(a.api, attempt)
    assert work.submit(a.api, attempt)["task"]["state"] == "DONE"

    assert work.claim(a.api, project, second)["__typename"] == "ClaimPayload"


def test_the_limit_applies_to_recovery_claims_too(operator, agent, clock) -> None:
    project = work.create_project(operator.api)
    orphan, other = work.new_task(operator.api, project), work.new_task(operator.api, project)
    expired = work.claimed(agent().api, project, orphan)["attempt"]
    work.expire(clock, expired)
    b = agent()
    held = work.claimed(b.api, project, other)["attempt"]

    blocked = work.claim_recovery(b.api, orphan)
    assert blocked["__typename"] == "Blocked", blocked
    assert blocked["blockers"] == [held["id"]]
    assert work.task(operator.api, orphan)["currentAttemptId"] == expired["id"]
