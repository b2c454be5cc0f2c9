"""A recovery that itself expires and is recovered again: the history accumulates, and a
resource an old job may still use stays in a recovery hold across both recoveries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hub.clock import ManualClock
from tests.support import jobs, work


@dataclass
class Chain:
    project: str
    task: str
    fixture: str  # acquired by A, whose job is still running
    docs: str  # acquired by B, which launched nothing
    a: Any
    b: Any
    c: Any
    job: dict[str, Any]
    attempts: list[dict[str, Any]]  # A's, B's and C's
    packet: dict[str, Any]  # as C's recovery claim returned it


def _recovered_twice(operator: Any, agent: Any, clock: ManualClock) -> Chain:
    project = work.create_project(operator.api)
    fixture = jobs.define_resource(operator.api, project, "fixture-db")
    docs = jobs.define_resource(operator.api, project, "docs-site")
    a, b, c = agent(), agent(), agent()
    claim = work.claimed(a.api, project, work.new_task(operator.api, project))
    task, first = claim["task"]["id"], claim["attempt"]
    job = jobs.registered_job(a.api, first)
    jobs.observe(a.api, job)  # launched and running; nobody hears from it again
    assert jobs.acquire(a.api, first, fixture)["__typename"] == "ReservationsPayload"
    work.expire(clock, first)

    second = work.recovered(b.api, task)["attempt"]
    work.dispose(b.api, second, "BLOCKED", "the old test run still holds the fixture db")
    assert jobs.acquire(b.api, second, docs)["__typename"] == "ReservationsPayload"
    work.expire(clock, second)

    recovery = work.recovered(c.api, task)
    third = recovery["attempt"]
    work.dispose(c.api, third, "BLOCKED", "still waiting for the old test run")
    return Chain(
        project, task, fixture, docs, a, b, c, job, [first, second, third],
        recovery["recoveryPacket"],
    )


def test_the_third_attempt_sees_the_whole_history(operator, agent, clock) -> None:
    chain = _recovered_twice(operator, agent, clock)
    first, second, third = (attempt["id"] for attempt in chain.attempts)

    assert [
        (x["id"], x["kind"], x["state"], x["generation"], x["recoversAttemptId"], x["disposition"])
        for x in chain.packet["attempts"]
    ] == [
        (first, "FRESH", "SUPERSEDED", 1, None, None),
        (second, "RECOVERY", "SUPERSEDED", 2, first, "BLOCKED"),
        (third, "RECOVERY", "ACTIVE", 3, second, None),
    ]
    assert [x["sessionId"] for x in chain.packet["attempts"]] == [
        chain.a.session_id, chain.b.session_id, chain.c.session_id
    ]
    assert [(j["id"], j["status"]) for j in chain.packet["jobs"]] == [(chain.job["id"], "RUNNING")]
    task = work.task(operator.api, chain.task)
    assert (task["generation"], task["currentAttemptId"]) == (3, third)


def test_the_old_jobs_resource_stays_held_until_the_job_finishes(operator, agent, clock) -> None:
    chain = _recovered_twice(operator, agent, clock)
    third = chain.attempts[2]
    [hold] = chain.packet["holds"]
    assert (hold["resourceId"], hold["attemptId"], hold["state"], hold["openJobIds"]) == (
        chain.fixture, chain.attempts[0]["id"], "HELD", [chain.job["id"]]
    )

    blocked = jobs.acquire(chain.c.api, third, chain.fixture)
    assert (blocked["__typename"], blocked["blockers"]) == ("Blocked", [chain.fixture])
    assert "recovery hold" in blocked["message"]
    # B launched nothing: its reservation lapsed with its lease and blocks nobody.
    assert jobs.acquire(chain.c.api, third, chain.docs)["__typename"] == "ReservationsPayload"

    finished = jobs.finish(chain.a.api, chain.job, 0)  # the producer's terminal result
    assert [r["state"] for r in finished["releasedReservations"]] == ["RELEASED"]
    assert work.recovery_packet(operator.api, chain.task)["holds"] == []
    taken = jobs.acquire(chain.c.api, third, chain.fixture)
    assert taken["__typename"] == "ReservationsPayload", taken


def test_an_operator_may_clear_the_old_hold_instead(operator, agent, clock) -> None:
    chain = _recovered_twice(operator, agent, clock)
    third = chain.attempts[2]
    [hold] = chain.packet["holds"]
    assert jobs.acquire(chain.c.api, third, chain.fixture)["__typename"] == "Blocked"

    cleared = operator.api.mutate(
        "clearHold",
        {"reservationId": hold["id"], "reason": "ws-1 rebooted: the test run is gone"},
        "... on ReservationPayload { reservation { state holdClearedBy } }",
    )
    assert cleared["reservation"] == {"state": "RELEASED", "holdClearedBy": operator.id}
    assert jobs.job(operator.api, chain.job["id"])["status"] == "RUNNING"  # nothing else moved
    taken = jobs.acquire(chain.c.api, third, chain.fixture)
    assert taken["__typename"] == "ReservationsPayload", taken
