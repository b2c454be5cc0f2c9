"""Scenarios 7-8 (docs/scenarios.md): a retried claim or submission refers to the
original, never repeats it."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from hub.maintenance import prune
from tests.support import work


def test_claim_retry_yields_one_attempt_and_one_lease(operator, agent, runtime, clock) -> None:
    project = work.create_project(operator.api)
    task_id = work.new_task(operator.api, project)
    a = agent()
    key = work.key()
    first = work.claim(a.api, project, task_id, idempotency_key=key)
    assert first["__typename"] == "ClaimPayload" and first["replay"] is False
    clock.advance(30)
    again = work.claim(a.api, project, task_id, idempotency_key=key)
    assert again["__typename"] == "ClaimPayload"
    assert again["replay"] is True
    assert again["attempt"]["id"] == first["attempt"]["id"]
    assert again["lease"] == first["lease"]  # not extended by the retry
    with runtime.database.engine.connect() as connection:
        count = connection.execute(
            sa.text("SELECT count(*) FROM attempts WHERE task_id = :t"), {"t": task_id}
        ).scalar()
    assert count == 1
    assert work.task(operator.api, task_id)["generation"] == 1

    other_task = work.new_task(operator.api, project)
    reused = work.claim(a.api, project, other_task, idempotency_key=key)
    assert reused["__typename"] == "IdempotencyConflict", reused


def test_replayed_claim_reports_current_state(operator, agent, clock) -> None:
    project = work.create_project(operator.api)
    task_id = work.new_task(operator.api, project)
    a = agent()
    key = work.key()
    first = work.claimed(a.api, project, task_id, idempotency_key=key)
    clock.set(datetime.fromisoformat(first["attempt"]["expiresAt"]))
    replay = work.claim(a.api, project, task_id, idempotency_key=key)
    assert replay["replay"] is True
    assert replay["attempt"]["leaseExpired"] is True  # historical receipt, current truth
    assert replay["task"]["effectiveState"] == "RECOVERY_CANDIDATE"


def test_claim_receipt_past_retention_is_expired_not_reexecuted(
    operator, agent, runtime, clock
) -> None:
    project = work.create_project(operator.api)
    task_id = work.new_task(operator.api, project)
    a = agent()
    key = work.key()
    first = work.claimed(a.api, project, task_id, idempotency_key=key)
    work.submit(a.api, first["attempt"])  # no acceptance: refused, the claim stays
    clock.advance(runtime.settings.receipt_retention_seconds + 1)
    report = prune(runtime)
    assert report.receipts.tombstoned >= 1
    retry = work.claim(a.api, project, task_id, idempotency_key=key)
    assert retry["__typename"] == "IdempotencyReceiptExpired", retry
    clock.advance(runtime.settings.tombstone_retention_seconds + 1)
    assert prune(runtime).receipts.deleted >= 1


def test_submission_retry_acknowledges_the_original(operator, agent, runtime) -> None:
    project = work.create_project(operator.api)
    task_id = work.new_task(operator.api, project)
    a = agent()
    attempt = work.claimed(a.api, project, task_id)["attempt"]
    assert work.accept(a.api, attempt)["__typename"] == "AttemptPayload"
    key = work.key()
    first = work.submit(a.api, attempt, idempotency_key=key, result="report attached")
    assert first["__typename"] == "AttemptPayload" and first["task"]["state"] == "DONE"
    reopened = operator.api.mutate(
        "closeTask", {"taskId": task_id, "reason": "REJECTED", "note": "after the fact"}
    )
    assert reopened["__typename"] == "InvalidTransition"  # DONE tasks are not closed
    retry = work.submit(a.api, attempt, idempotency_key=key, result="report attached")
    assert retry["__typename"] == "AttemptPayload", retry
    assert retry["replay"] is True
    assert retry["submission"]["id"] == first["submission"]["id"]
    assert retry["attempt"]["state"] == "SUBMITTED"
    assert retry["task"]["state"] == "DONE"
    with runtime.database.engine.connect() as connection:
        assert (
            connection.execute(
                sa.text("SELECT count(*) FROM submissions WHERE task_id = :t"), {"t": task_id}
            ).scalar()
            == 1
        )
    fresh_key = work.submit(a.api, attempt)
    assert fresh_key["__typename"] == "InvalidTransition"  # a new key cannot reopen it


def test_agent_sessions_must_key_claims_and_submissions(operator, agent) -> None:
    project = work.create_project(operator.api)
    task_id = work.new_task(operator.api, project)
    a = agent()
    unkeyed = a.api.mutate("claimTask", {"projectId": project, "taskId": task_id})
    assert unkeyed["__typename"] == "ValidationFailed"
    assert "idempotencyKey" in unkeyed["message"]
