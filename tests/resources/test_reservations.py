"""Scenarios 19 and 20 (docs/scenarios.md): all-or-nothing reservations, and recovery
holds that block only the resource an old job may still be using."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from hub.clock import ManualClock
from hub.runtime import Runtime
from tests.support import jobs, work
from tests.support.client import Api

PACKET = """
  ... on ClaimRecoveryPayload {
    attempt { id generation }
    recoveryPacket { jobs { id status freshness } holds { id resourceId state openJobIds } }
  }
"""


def _active_reservations(runtime: Runtime) -> list[tuple[str, str]]:
    with runtime.database.engine.connect() as connection:
        return [
            (row[0], row[1])
            for row in connection.execute(sa.text(
                "SELECT resource_id, attempt_id FROM reservations WHERE released_at IS NULL"
            ))
        ]


def _events(runtime: Runtime, kind: str) -> list[dict[str, Any]]:
    with runtime.database.engine.connect() as connection:
        rows = connection.execute(
            sa.text("SELECT actor_id, payload FROM events WHERE kind = :k ORDER BY id"),
            {"k": kind},
        ).all()
    # JSONB comes back decoded on PostgreSQL, as text on SQLite.
    return [{"actor": actor, **(p if isinstance(p, dict) else json.loads(p))} for actor, p in rows]


def test_acquiring_a_set_while_one_is_held_returns_the_blocker_and_holds_neither(
    operator, agent, runtime
) -> None:
    project = work.create_project(operator.api)
    a_res = jobs.define_resource(operator.api, project, "fixture-db")
    b_res = jobs.define_resource(operator.api, project, "integration-branch")
    first, second = agent(), agent()
    one = work.claimed(first.api, project, work.new_task(operator.api, project))["attempt"]
    two = work.claimed(second.api, project, work.new_task(operator.api, project))["attempt"]
    assert jobs.acquire(first.api, one, b_res)["__typename"] == "ReservationsPayload"

    blocked = jobs.acquire(second.api, two, a_res, b_res)
    assert blocked["__typename"] == "Blocked", blocked
    assert blocked["blockers"] == [b_res]
    assert _active_reservations(runtime) == [(b_res, one["id"])]  # A was not taken

    released = first.api.mutate(
        "releaseResources",
        {"attemptId": one["id"], "generation": one["generation"],
         "reservationIds": [_active_id(runtime)]},
        "... on ReservationsPayload { reservations { state } }",
    )
    assert released["reservations"][0]["state"] == "RELEASED"
    taken = jobs.acquire(second.api, two, a_res, b_res)
    assert taken["__typename"] == "ReservationsPayload"
    assert {r["resourceId"] for r in taken["reservations"]} == {a_res, b_res}


def _active_id(runtime: Runtime) -> str:
    with runtime.database.engine.connect() as connection:
        return str(connection.execute(
            sa.text("SELECT id FROM reservations WHERE released_at IS NULL")
        ).scalar_one())


def test_capacity_is_shared_by_units_and_a_request_above_capacity_is_refused(
    operator, agent, runtime
) -> None:
    project = work.create_project(operator.api)
    cpu = jobs.define_resource(
        operator.api, project, "build-cpu", scope="WORKSTATION", mode="CAPACITY",
        capacity=8, unit="cores",
    )
    first, second = agent(), agent()
    one = work.claimed(first.api, project, work.new_task(operator.api, project))["attempt"]
    two = work.claimed(second.api, project, work.new_task(operator.api, project))["attempt"]
    too_much = jobs.acquire(first.api, one, (cpu, 9))
    assert too_much["__typename"] == "ValidationFailed", too_much
    assert too_much["field"] == "requests[0].units"
    assert jobs.acquire(first.api, one, (cpu, 6))["__typename"] == "ReservationsPayload"
    assert jobs.acquire(second.api, two, (cpu, 3))["blockers"] == [cpu]
    assert jobs.acquire(second.api, two, (cpu, 2))["__typename"] == "ReservationsPayload"

    reading = operator.api.mutate(
        "recordCapacityObservation",
        {"resourceId": cpu, "available": 1, "total": 8, "source": "nproc on ws-1",
         "observedAt": "2026-01-01T11:59:00+00:00"},
        "... on CapacityObservationPayload { reading { available observedAt recordedAt } }",
    )
    assert reading["reading"]["available"] == 1
    [status] = [s for s in jobs.resources(operator.api, project) if s["resource"]["id"] == cpu]
    assert status["unitsInUse"] == 8
    assert status["latestReading"]["available"] == 1


def test_a_recovery_hold_blocks_only_the_resource_an_old_job_may_still_use(
    operator, agent, runtime, clock: ManualClock
) -> None:
    project = work.create_project(operator.api)
    fixture = jobs.define_resource(operator.api, project, "fixture-db")
    other = jobs.define_resource(operator.api, project, "docs-site")
    a, b = agent(), agent()
    claim = work.claimed(a.api, project, work.new_task(operator.api, project))
    attempt, task_id = claim["attempt"], claim["task"]["id"]
    job = jobs.registered_job(a.api, attempt)
    assert jobs.acquire(a.api, attempt, fixture)["__typename"] == "ReservationsPayload"
    jobs.observe(a.api, job)
    clock.set(datetime.fromisoformat(attempt["expiresAt"]))  # A's lease ends, job running

    recovery = b.api.mutate(
        "claimRecovery", {"taskId": task_id, "idempotencyKey": work.key()}, PACKET
    )
    assert recovery["__typename"] == "ClaimRecoveryPayload", recovery  # the claim succeeds
    packet = recovery["recoveryPacket"]
    assert [(j["id"], j["status"]) for j in packet["jobs"]] == [(job["id"], "RUNNING")]
    [hold] = packet["holds"]
    assert (hold["resourceId"], hold["state"], hold["openJobIds"]) == (
        fixture, "HELD", [job["id"]])
    b_attempt = recovery["attempt"]
    disposition = b.api.mutate(
        "recordRecoveryDisposition",
        {"attemptId": b_attempt["id"], "generation": b_attempt["generation"],
         "disposition": "BLOCKED", "reason": "old test run still holds the fixture db"},
    )
    assert disposition["__typename"] == "AttemptPayload", disposition

    blocked = jobs.acquire(b.api, b_attempt, fixture)
    assert blocked["__typename"] == "Blocked" and blocked["blockers"] == [fixture]
    assert "recovery hold" in blocked["message"]
    unrelated = jobs.acquire(b.api, b_attempt, other)  # the hold blocks nothing else
    assert unrelated["__typename"] == "ReservationsPayload", unrelated

    finished = jobs.finish(a.api, job, 0)  # the producer's terminal result
    assert finished["__typename"] == "JobPayload", finished
    [cleared] = finished["releasedReservations"]
    assert cleared["state"] == "RELEASED" and cleared["holdClearReason"]
    [event] = _events(runtime, "resource.hold_cleared")
    assert event["how"] == "PRODUCER_RESULT" and event["actor"] == a.principal.id
    assert jobs.acquire(b.api, b_attempt, fixture)["__typename"] == "ReservationsPayload"


def test_a_reporter_observing_the_exit_clears_the_hold(
    operator, agent, runtime, server, clock: ManualClock
) -> None:
    project = work.create_project(operator.api)
    fixture = jobs.define_resource(operator.api, project, "fixture-db")
    a = agent()
    attempt = work.claimed(a.api, project, work.new_task(operator.api, project))["attempt"]
    job = jobs.registered_job(a.api, attempt)
    jobs.acquire(a.api, attempt, fixture, jobId=job["id"])
    opened = jobs.open_window(a.api, attempt, clock.now() + timedelta(minutes=30))
    clock.set(datetime.fromisoformat(attempt["expiresAt"]))
    [status] = jobs.resources(operator.api, project)
    assert [r["state"] for r in status["reservations"]] == ["HELD"]
    reporter = Api(server, opened["reporterToken"])
    try:
        exited = jobs.observe(reporter, job, "EXITED")
    finally:
        reporter.close()
    assert exited["__typename"] == "JobPayload", exited
    assert exited["job"]["status"] == "EXITED" and exited["job"]["exitStatus"] is None
    assert [r["state"] for r in exited["releasedReservations"]] == ["RELEASED"]
    [event] = _events(runtime, "resource.hold_cleared")
    assert event["how"] == "REPORTED_EXIT"
    assert jobs.resources(operator.api, project)[0]["reservations"] == []


def test_an_operator_clears_a_hold_only_with_a_reason(
    operator, agent, runtime, clock: ManualClock
) -> None:
    project = work.create_project(operator.api)
    fixture = jobs.define_resource(operator.api, project, "fixture-db")
    a = agent()
    attempt = work.claimed(a.api, project, work.new_task(operator.api, project))["attempt"]
    jobs.observe(a.api, jobs.registered_job(a.api, attempt))
    jobs.acquire(a.api, attempt, fixture)
    reservation = _active_id(runtime)
    clock.set(datetime.fromisoformat(attempt["expiresAt"]))
    selection = "... on ReservationPayload { reservation { state holdClearedBy } }" \
        " ... on ValidationFailed { field }"

    no_reason = operator.api.mutate(
        "clearHold", {"reservationId": reservation, "reason": "  "}, selection
    )
    assert no_reason["__typename"] == "ValidationFailed" and no_reason["field"] == "reason"
    by_agent = a.api.mutate(
        "clearHold", {"reservationId": reservation, "reason": "mine"}, selection
    )
    assert by_agent["__typename"] == "PermissionDenied"
    assert _active_reservations(runtime) == [(fixture, attempt["id"])]

    cleared = operator.api.mutate(
        "clearHold",
        {"reservationId": reservation, "reason": "checked ws-1: the test run is gone"},
        selection,
    )
    assert cleared["reservation"] == {"state": "RELEASED", "holdClearedBy": operator.id}
    [event] = _events(runtime, "resource.hold_cleared")
    assert (event["how"], event["reason"], event["actor"]) == (
        "OPERATOR", "checked ws-1: the test run is gone", operator.id)


def test_shared_scope_resources_are_one_identity_across_projects(operator, agent) -> None:
    one, two = work.create_project(operator.api), work.create_project(operator.api, "Two")
    env_one = jobs.define_resource(operator.api, one, "staging", scope="ENVIRONMENT")
    env_two = jobs.define_resource(operator.api, two, "staging", scope="ENVIRONMENT")
    assert env_one == env_two
    own_one = jobs.define_resource(operator.api, one, "fixture", scope="PROJECT")
    own_two = jobs.define_resource(operator.api, two, "fixture", scope="PROJECT")
    assert own_one != own_two
    a, b = agent(), agent()
    in_one = work.claimed(a.api, one, work.new_task(operator.api, one))["attempt"]
    in_two = work.claimed(b.api, two, work.new_task(operator.api, two))["attempt"]
    assert jobs.acquire(a.api, in_one, env_one)["__typename"] == "ReservationsPayload"
    assert jobs.acquire(b.api, in_two, env_two)["blockers"] == [env_one]
    foreign = jobs.acquire(b.api, in_two, own_one)
    assert foreign["__typename"] == "ValidationFailed"
    redefined = operator.api.mutate(
        "defineResource",
        {"projectId": two, "key": "staging", "scope": "ENVIRONMENT", "mode": "CAPACITY",
         "capacity": 2},
    )
    assert redefined["__typename"] == "Conflict"
