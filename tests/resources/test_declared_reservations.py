"""An operation that depends on resources declares its reservations, and proceeds only
if the acting attempt holds each of them, live, now: otherwise `Blocked` names the ones
it does not, and nothing is written."""

from __future__ import annotations

from typing import Any

from hub.clock import ManualClock
from tests.support import jobs, work
from tests.support.client import Api
from tests.support.workflow import (
    approve_by_new_reviewer,
    claim_integration,
    deliver,
    evidence_of,
    integration,
    report,
    sha,
    validate,
)


def _worker(operator: Any, agent: Any, project: str) -> tuple[Api, dict[str, Any]]:
    """A new agent holding a new task of `project`: its api and its attempt."""
    worker = agent()
    claim = work.claimed(worker.api, project, work.new_task(operator.api, project))
    return worker.api, {**claim["attempt"], "taskId": claim["task"]["id"]}


def _refused_registration(
    api: Api, project: str, attempt: dict[str, Any], reservation: str
) -> dict[str, Any]:
    refused = jobs.register_job(api, attempt, reservationIds=[reservation])
    assert jobs.task_jobs(api, project, attempt["taskId"]) == []  # no job row
    return refused


def test_a_job_registers_with_the_reservations_its_attempt_holds_live(operator, agent) -> None:
    project = work.create_project(operator.api)
    fixture = jobs.define_resource(operator.api, project, "fixture-db")
    api, attempt = _worker(operator, agent, project)
    held = jobs.reserved(api, attempt, fixture)

    job = jobs.registered_job(api, attempt, reservationIds=[held])
    assert job["reservationIds"] == [held]


def test_a_job_declaring_another_attempts_reservation_is_blocked_and_not_registered(
    operator, agent
) -> None:
    project = work.create_project(operator.api)
    fixture = jobs.define_resource(operator.api, project, "fixture-db")
    holder, holding = _worker(operator, agent, project)
    theirs = jobs.reserved(holder, holding, fixture)
    api, attempt = _worker(operator, agent, project)

    refused = _refused_registration(api, project, attempt, theirs)
    assert refused["__typename"] == "Blocked" and refused["blockers"] == [theirs], refused


def test_a_job_declaring_a_released_reservation_is_blocked(operator, agent) -> None:
    project = work.create_project(operator.api)
    fixture = jobs.define_resource(operator.api, project, "fixture-db")
    api, attempt = _worker(operator, agent, project)
    released = jobs.reserved(api, attempt, fixture)
    assert jobs.release(api, attempt, released)["__typename"] == "ReservationsPayload"

    refused = _refused_registration(api, project, attempt, released)
    assert refused["__typename"] == "Blocked" and refused["blockers"] == [released], refused


def test_a_recovery_attempt_cannot_declare_a_reservation_in_a_recovery_hold(
    operator, agent, clock: ManualClock
) -> None:
    project = work.create_project(operator.api)
    fixture = jobs.define_resource(operator.api, project, "fixture-db")
    api, attempt = _worker(operator, agent, project)
    jobs.observe(api, jobs.registered_job(api, attempt))  # still running...
    kept = jobs.reserved(api, attempt, fixture)
    work.expire(clock, attempt)  # ...when the lease ends: the reservation is a hold
    assert jobs.reservation(operator.api, kept)["state"] == "HELD"
    rescuer = agent()
    recovery = work.recovered(rescuer.api, attempt["taskId"])["attempt"]
    work.dispose(rescuer.api, recovery, "RESTART", "the old run may still use the fixture")

    refused = jobs.register_job(rescuer.api, recovery, reservationIds=[kept])
    assert refused["__typename"] == "Blocked" and refused["blockers"] == [kept], refused
    assert len(jobs.task_jobs(operator.api, project, attempt["taskId"])) == 1  # the old one


def test_another_projects_reservation_is_not_found(operator, agent) -> None:
    project, other = work.create_project(operator.api), work.create_project(operator.api)
    elsewhere = jobs.define_resource(operator.api, other, "fixture-db")
    outsider, outside = _worker(operator, agent, other)
    foreign = jobs.reserved(outsider, outside, elsewhere)
    api, attempt = _worker(operator, agent, project)

    refused = _refused_registration(api, project, attempt, foreign)
    assert refused["__typename"] == "NotFound" and foreign in refused["message"], refused


def _integrating(operator: Any, agent: Any) -> tuple[str, Api, dict[str, Any]]:
    """An approved delivery whose integration the integrator has claimed."""
    delivery = deliver(operator.api, agent().api)
    approve_by_new_reviewer(agent().api, delivery.project, delivery.submission)
    integrator = agent()
    claim = claim_integration(integrator.api, delivery.submission)
    assert claim["__typename"] == "ClaimIntegrationPayload", claim
    return delivery.project, integrator.api, claim


def test_a_publish_declaring_a_reservation_the_integrator_does_not_hold_is_blocked(
    operator, agent
) -> None:
    project, integrator, claim = _integrating(operator, agent)
    deploy = jobs.define_resource(operator.api, project, "deploy-env")
    holder, holding = _worker(operator, agent, project)
    theirs = jobs.reserved(holder, holding, deploy)

    refused = report(integrator, claim, "PUBLISHED", base=sha("a"), result=sha("c"),
                     reservationIds=[theirs])
    assert refused["__typename"] == "Blocked" and refused["blockers"] == [theirs], refused
    found = integration(operator.api, claim["integration"]["id"])
    assert (found["state"], found["reservationHeld"]) == ("IN_PROGRESS", True)

    assert jobs.release(holder, holding, theirs)["__typename"] == "ReservationsPayload"
    own = jobs.reserved(integrator, claim["attempt"], deploy)
    published = report(integrator, claim, "PUBLISHED", base=sha("a"), result=sha("c"),
                       reservationIds=[own])
    assert published["integration"]["state"] == "PUBLISHED", published


def test_a_validation_declaring_a_released_reservation_is_blocked(operator, agent) -> None:
    project, integrator, claim = _integrating(operator, agent)
    deploy = jobs.define_resource(operator.api, project, "deploy-env")
    released = jobs.reserved(integrator, claim["attempt"], deploy)
    given_back = jobs.release(integrator, claim["attempt"], released)
    assert given_back["__typename"] == "ReservationsPayload", given_back
    published = report(integrator, claim, "PUBLISHED", base=sha("a"), result=sha("c"))
    assert published["__typename"] == "IntegrationPayload", published

    passing = evidence_of(integrator, claim, sha("c"))
    refused = validate(integrator, claim, sha("c"), evidence_ids=[passing],
                       reservationIds=[released])
    assert refused["__typename"] == "Blocked" and refused["blockers"] == [released], refused
    found = integration(operator.api, claim["integration"]["id"])
    assert (found["state"], found["validations"]) == ("PUBLISHED", [])
