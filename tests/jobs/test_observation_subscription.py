"""`jobObservations` over graphql-transport-ws: one job's changes, replayed then live,
and on PostgreSQL across server processes (an observation committed by one process
reaches a subscriber of another through LISTEN/NOTIFY)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.api.test_subscriptions import POSTGRESQL_ONLY
from tests.support import jobs, work
from tests.support.client import Api
from tests.support.processes import hub_servers
from tests.support.subscriptions import GraphQLSocket, subscriber

if TYPE_CHECKING:
    from tests.conftest import Principal, TestDatabase

JOB_OBSERVATIONS = """
subscription($projectId: ID!, $jobId: ID!, $after: Int!) {
  jobObservations(projectId: $projectId, jobId: $jobId, after: $after) {
    sequence jobId kind status exitStatus observedAt
  }
}
"""


def _subscribe(ws: GraphQLSocket, project_id: str, job_id: str, after: int = 0) -> None:
    ws.send({
        "id": "1",
        "type": "subscribe",
        "payload": {"query": JOB_OBSERVATIONS,
                    "variables": {"projectId": project_id, "jobId": job_id, "after": after}},
    })


def _next(ws: GraphQLSocket) -> dict[str, Any]:
    message = ws.receive()
    assert message["type"] == "next" and "errors" not in message["payload"], message
    observation: dict[str, Any] = message["payload"]["data"]["jobObservations"]
    return observation


def _running_job(operator_api: Api, session_api: Api) -> tuple[str, dict[str, Any]]:
    project = work.create_project(operator_api, f"p-{uuid.uuid4().hex[:6]}")
    attempt = work.claimed(session_api, project, work.new_task(operator_api, project))["attempt"]
    return project, jobs.registered_job(session_api, attempt)


def test_a_subscriber_sees_one_jobs_registration_observations_and_result(
    server: str, operator: Principal, agent: Callable[..., Any]
) -> None:
    a, b = agent(), agent()
    project, job = _running_job(operator.api, a.api)
    other = jobs.registered_job(b.api, work.claimed(
        b.api, project, work.new_task(operator.api, project))["attempt"])
    with subscriber(server, operator.token) as ws:
        _subscribe(ws, project, job["id"])
        registered = _next(ws)  # replayed from the log
        assert (registered["kind"], registered["status"]) == ("job.registered", "REGISTERED")
        jobs.observe(b.api, other)  # another job's change is not this stream's
        jobs.observe(a.api, job)
        running = _next(ws)
        assert (running["jobId"], running["kind"], running["status"]) == (
            job["id"], "job.observed", "RUNNING")
        jobs.finish(a.api, job, 3)
        finished = _next(ws)
        assert (finished["kind"], finished["exitStatus"]) == ("job.finished", 3)
        assert finished["sequence"] > running["sequence"] > registered["sequence"]

    # Resuming after the last sequence seen yields nothing old.
    with subscriber(server, operator.token) as ws:
        _subscribe(ws, project, job["id"], after=running["sequence"])
        assert _next(ws)["sequence"] == finished["sequence"]


def test_subscribing_to_a_job_of_another_project_is_not_found(
    server: str, operator: Principal, agent: Callable[..., Any]
) -> None:
    a = agent()
    _, job = _running_job(operator.api, a.api)
    elsewhere = work.create_project(operator.api, "elsewhere")
    with subscriber(server, operator.token) as ws:
        _subscribe(ws, elsewhere, job["id"])
        message = ws.receive()
        assert message["payload"]["errors"][0]["extensions"]["code"] == "NOT_FOUND", message


@POSTGRESQL_ONLY
def test_an_observation_through_one_process_reaches_a_subscriber_of_another(
    test_database: TestDatabase,
    operator: Principal,
    make_principal: Callable[..., Principal],
    tmp_path: Path,
) -> None:
    # The poll backstop is far beyond every receive deadline: only NOTIFY can deliver.
    with hub_servers(2, test_database.url, tmp_path, poll_seconds=600.0) as servers:
        one, two = (server.base_url for server in servers)
        agent_principal = make_principal(kind="agent")
        on_one = Api(one, operator.token)
        principal_on_one = Api(one, agent_principal.token)
        started = principal_on_one.mutate(
            "startSession",
            {"workstation": "ws-1", "harness": "pytest", "harnessInstance": "i-1"},
            "... on StartSessionPayload { token }",
        )
        session_on_one = Api(one, started["token"])
        try:
            project, job = _running_job(on_one, session_on_one)
            with subscriber(two, operator.token) as ws:
                _subscribe(ws, project, job["id"])
                assert _next(ws)["kind"] == "job.registered"
                for _ in range(3):
                    observed = jobs.observe(session_on_one, job)
                    assert observed["__typename"] == "JobPayload", observed
                    heard = _next(ws)
                    assert (heard["kind"], heard["status"]) == ("job.observed", "RUNNING")
                jobs.finish(session_on_one, job, 0)
                assert _next(ws)["kind"] == "job.finished"
        finally:
            for api in (on_one, principal_on_one, session_on_one):
                api.close()
