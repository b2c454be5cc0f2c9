"""A reporter token is for its one attempt and window: it cannot end its agent's session,
and it reads only `viewer`, its own attempt and that attempt's jobs (queries and the
`jobObservations` subscription); every other read is refused (docs/credentials.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import pytest

from hub.clock import ManualClock
from tests.support import jobs, work
from tests.support.client import Api, GraphQLErrors
from tests.support.subscriptions import GraphQLSocket, subscriber

if TYPE_CHECKING:
    from tests.conftest import AgentSession, Principal

JOB_OBSERVATIONS = """subscription($p: ID!, $j: ID!) {
  jobObservations(projectId: $p, jobId: $j) { jobId kind } }"""
PROJECT_EVENTS = "subscription($p: ID!) { projectEvents(projectId: $p) { sequence } }"


@contextmanager
def _reporter(
    server: str, clock: ManualClock, session: AgentSession, attempt: dict[str, Any]
) -> Iterator[tuple[Api, str]]:
    opened = jobs.open_window(session.api, attempt, clock.now() + timedelta(minutes=30))
    assert opened["__typename"] == "OpenWatchWindowPayload", opened
    api = Api(server, opened["reporterToken"])
    try:
        yield api, opened["reporterToken"]
    finally:
        api.close()


def _refused(api: Api, query: str, **variables: Any) -> str:
    with pytest.raises(GraphQLErrors) as refused:
        api(query, **variables)
    [error] = refused.value.errors
    assert error["extensions"]["code"] == "PERMISSION_DENIED", error
    return str(error["message"])


def test_a_reporter_token_cannot_end_its_agents_session(
    server: str, operator: Principal, agent: Callable[..., AgentSession], clock: ManualClock
) -> None:
    a = agent()
    project = work.create_project(operator.api)
    attempt = work.claimed(a.api, project, work.new_task(operator.api, project))["attempt"]
    with _reporter(server, clock, a, attempt) as (reporter, _):
        ended = reporter.mutate("endSession", {"sessionId": a.session_id})
        assert ended["__typename"] == "PermissionDenied", ended
        assert ended["message"].startswith("a reporter token cannot call endSession")
        # Nothing was revoked: the session and its reporter both still work.
        assert a.api("{ viewer { session { endedAt } } }")["viewer"]["session"] == {
            "endedAt": None
        }
        assert work.renew(reporter, attempt)["__typename"] == "AttemptPayload"


def test_a_reporter_reads_only_its_attempt_and_that_attempts_jobs(
    server: str, operator: Principal, agent: Callable[..., AgentSession], clock: ManualClock
) -> None:
    a, b = agent(), agent()
    project = work.create_project(operator.api)
    claim = work.claimed(a.api, project, work.new_task(operator.api, project))
    attempt, task_id = claim["attempt"], claim["task"]["id"]
    other = work.claimed(b.api, project, work.new_task(operator.api, project))["attempt"]
    job, other_job = jobs.registered_job(a.api, attempt), jobs.registered_job(b.api, other)
    attempt_query = "query($id: ID!) { attempt(id: $id) { id } }"

    with _reporter(server, clock, a, attempt) as (reporter, _):
        viewer = reporter("{ viewer { credential principal { id } } }")["viewer"]
        assert viewer["credential"] == "REPORTER"
        assert reporter(attempt_query, id=attempt["id"])["attempt"] == {"id": attempt["id"]}
        assert jobs.job(reporter, job["id"])["id"] == job["id"]

        assert "not attempt" in _refused(reporter, attempt_query, id=other["id"])
        assert "not job" in _refused(reporter, "query($id: ID!) { job(id: $id) { id } }",
                                     id=other_job["id"])
        for query, variables in (
            ("query($id: ID!) { task(id: $id) { id } }", {"id": task_id}),
            ("query($p: ID!) { jobs(projectId: $p) { edges { node { id } } } }", {"p": project}),
            ("query($p: ID!) { events(projectId: $p) { sequence } }", {"p": project}),
            ("{ projects { edges { node { id } } } }", {}),
            ("query($id: ID!) { recoveryPacket(taskId: $id) { task { id } } }", {"id": task_id}),
        ):
            assert "a reporter token cannot call" in _refused(reporter, query, **variables)


def test_a_reporter_follows_only_its_own_jobs_and_not_the_project_log(
    server: str, operator: Principal, agent: Callable[..., AgentSession], clock: ManualClock
) -> None:
    a, b = agent(), agent()
    project = work.create_project(operator.api)
    attempt = work.claimed(a.api, project, work.new_task(operator.api, project))["attempt"]
    other = work.claimed(b.api, project, work.new_task(operator.api, project))["attempt"]
    job, other_job = jobs.registered_job(a.api, attempt), jobs.registered_job(b.api, other)

    def first_answer(ws: GraphQLSocket, query: str, variables: dict[str, str]) -> Any:
        ws.send({"id": "1", "type": "subscribe",
                 "payload": {"query": query, "variables": variables}})
        return ws.receive()["payload"]

    with _reporter(server, clock, a, attempt) as (_, token):
        with subscriber(server, token) as ws:
            own = first_answer(ws, JOB_OBSERVATIONS, {"p": project, "j": job["id"]})
            assert own["data"]["jobObservations"] == {"jobId": job["id"],
                                                     "kind": "job.registered"}
        with subscriber(server, token) as ws:
            foreign = first_answer(ws, JOB_OBSERVATIONS, {"p": project, "j": other_job["id"]})
            assert foreign["errors"][0]["extensions"]["code"] == "PERMISSION_DENIED"
        with subscriber(server, token) as ws:
            log = first_answer(ws, PROJECT_EVENTS, {"p": project})
            [error] = log["errors"]
            assert error["extensions"]["code"] == "PERMISSION_DENIED"
            assert error["message"].startswith("a reporter token cannot call projectEvents")
