"""The refusals of the jobs issue: each leaves nothing half-written."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from hub.runtime import Runtime
from tests.support import jobs, work


def _count(runtime: Runtime, table: str) -> int:
    with runtime.database.engine.connect() as connection:
        return int(connection.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one())


def _attempt(operator: Any, session: Any) -> dict[str, Any]:
    project = work.create_project(operator.api)
    attempt: dict[str, Any] = work.claimed(
        session.api, project, work.new_task(operator.api, project)
    )["attempt"]
    return attempt


def test_a_job_registered_twice_with_different_data_is_an_idempotency_conflict(
    operator, agent, runtime
) -> None:
    a = agent()
    attempt = _attempt(operator, a)
    first = jobs.register_job(a.api, attempt, job_id="build-42")
    assert first["__typename"] == "JobPayload" and first["replay"] is False
    again = jobs.register_job(a.api, attempt, job_id="build-42")  # same data, new key
    assert again["__typename"] == "JobPayload" and again["replay"] is True
    assert again["job"]["id"] == first["job"]["id"]
    changed = jobs.register_job(a.api, attempt, job_id="build-42", invocation="make deploy")
    assert changed["__typename"] == "IdempotencyConflict", changed
    assert _count(runtime, "jobs") == 1


def test_an_agent_session_must_key_a_job_registration(operator, agent, runtime) -> None:
    a = agent()
    attempt = _attempt(operator, a)
    unkeyed = jobs.register_job(a.api, attempt, idempotencyKey=None)
    assert unkeyed["__typename"] == "ValidationFailed" and unkeyed["field"] == "idempotencyKey"
    assert _count(runtime, "jobs") == 0


def test_observing_an_unknown_or_foreign_job_is_permission_denied(operator, agent) -> None:
    a, b = agent(), agent()
    job = jobs.registered_job(a.api, _attempt(operator, a))
    assert jobs.observe(b.api, job)["__typename"] == "PermissionDenied"
    assert jobs.observe(a.api, {"id": "job_does_not_exist"})["__typename"] == "PermissionDenied"
    assert jobs.job(operator.api, job["id"])["observationCount"] == 0


def test_malformed_job_and_evidence_input_is_refused(operator, agent, runtime) -> None:
    a = agent()
    attempt = _attempt(operator, a)
    naive = jobs.register_job(a.api, attempt, expectedDeadline="2030-01-01T00:00:00")
    assert naive["__typename"] == "ValidationFailed" and naive["field"] == "expectedDeadline"
    blank = jobs.register_job(a.api, attempt, producer="  ")
    assert blank["__typename"] == "ValidationFailed" and blank["field"] == "producer"
    no_snapshot = jobs.record_evidence(a.api, attempt, revision=None)
    assert no_snapshot["__typename"] == "ValidationFailed"
    no_reason = jobs.record_evidence(
        a.api, attempt, checks=[{"name": "unit", "outcome": "FAIL"}]
    )
    assert no_reason["__typename"] == "ValidationFailed"
    assert no_reason["field"] == "checks[0].reason"
    assert _count(runtime, "jobs") == 0 and _count(runtime, "evidence") == 0


def test_a_finished_job_keeps_its_result(operator, agent) -> None:
    a = agent()
    job = jobs.registered_job(a.api, _attempt(operator, a))
    assert jobs.finish(a.api, job, 2)["job"]["exitStatus"] == 2
    assert jobs.finish(a.api, job, 2)["replay"] is True
    assert jobs.finish(a.api, job, 0)["__typename"] == "InvalidTransition"
    assert jobs.observe(a.api, job)["__typename"] == "InvalidTransition"
    assert jobs.job(a.api, job["id"])["exitStatus"] == 2
