"""Recovery mode OPERATOR_RELEASE: after expiry, nobody recovers a task until an
operator releases it (`releaseTask`, with a reason)."""

from __future__ import annotations

from typing import Any

from tests.support import work
from tests.support.sql import events_of


def _operator_release_project(operator: Any) -> str:
    project = work.create_project(operator.api)
    policy = work.set_policy(operator.api, project, recoveryMode="OPERATOR_RELEASE")
    assert policy["recoveryMode"] == "OPERATOR_RELEASE"
    return project


def test_recovery_waits_for_an_operator_release(operator, agent, clock, database) -> None:
    project = _operator_release_project(operator)
    a, b = agent(), agent()
    claim = work.claimed(a.api, project, work.new_task(operator.api, project))
    task_id, expired = claim["task"]["id"], claim["attempt"]
    work.expire(clock, expired)

    refused = work.claim_recovery(b.api, task_id)
    assert refused["__typename"] == "PermissionDenied", refused
    assert "releaseTask" in refused["message"]
    released = work.release_task(operator.api, task_id, "ws-3 was reimaged")
    assert released["__typename"] == "TaskPayload", released
    assert released["task"]["effectiveState"] == "RECOVERY_CANDIDATE"  # release claims nothing
    [event] = events_of(database, "task.released_for_recovery")
    assert (event["subject"], event["actor"], event["reason"]) == (
        task_id, operator.id, "ws-3 was reimaged"
    )

    recovery = work.recovered(b.api, task_id)
    assert (recovery["attempt"]["kind"], recovery["attempt"]["generation"]) == ("RECOVERY", 2)
    packet = recovery["recoveryPacket"]
    assert [(x["id"], x["state"]) for x in packet["attempts"]] == [
        (expired["id"], "SUPERSEDED"), (recovery["attempt"]["id"], "ACTIVE")
    ]


def test_only_an_operator_releases_and_only_after_expiry(
    operator, agent, make_principal, clock
) -> None:
    project = _operator_release_project(operator)
    a = agent()
    claim = work.claimed(a.api, project, work.new_task(operator.api, project))
    task_id = claim["task"]["id"]

    early = work.release_task(operator.api, task_id)
    assert early["__typename"] == "InvalidTransition", early  # the lease is still valid
    unclaimed = work.release_task(operator.api, work.new_task(operator.api, project))
    assert unclaimed["__typename"] == "InvalidTransition", unclaimed  # nothing to release
    work.expire(clock, claim["attempt"])
    for outsider in (a.api, make_principal(kind="human").api, a.principal.api):
        refused = work.release_task(outsider, task_id)
        assert refused["__typename"] == "PermissionDenied", refused
    no_reason = work.release_task(operator.api, task_id, "  ")
    assert (no_reason["__typename"], no_reason["field"]) == ("ValidationFailed", "reason")

    assert work.claim_recovery(agent().api, task_id)["__typename"] == "PermissionDenied"
    assert work.release_task(operator.api, task_id)["__typename"] == "TaskPayload"
    assert work.claim_recovery(agent().api, task_id)["__typename"] == "ClaimRecoveryPayload"


def test_a_release_lets_one_recovery_through_not_the_next(operator, agent, clock) -> None:
    """The release is for the expired generation: when the recovery attempt itself
    expires, the operator must release the task again."""
    project = _operator_release_project(operator)
    claim = work.claimed(agent().api, project, work.new_task(operator.api, project))
    task_id = claim["task"]["id"]
    work.expire(clock, claim["attempt"])
    work.release_task(operator.api, task_id)
    b = agent()
    second = work.recovered(b.api, task_id)["attempt"]
    work.expire(clock, second)

    assert work.claim_recovery(agent().api, task_id)["__typename"] == "PermissionDenied"
    assert work.release_task(operator.api, task_id)["__typename"] == "TaskPayload"
    third = work.recovered(agent().api, task_id)
    assert third["attempt"]["generation"] == 3


def test_release_is_not_needed_in_agent_recovery_mode(operator, agent, clock) -> None:
    project = work.create_project(operator.api)  # the default policy: AGENT
    claim = work.claimed(agent().api, project, work.new_task(operator.api, project))
    work.expire(clock, claim["attempt"])
    assert work.claim_recovery(agent().api, claim["task"]["id"])["__typename"] == (
        "ClaimRecoveryPayload"
    )
