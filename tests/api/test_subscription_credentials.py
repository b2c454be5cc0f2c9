"""Subscriptions last only as long as their credential: a token revoked, a session ended
or a principal disabled while `projectEvents` or `jobObservations` is open ends it with
an UNAUTHENTICATED error, within the re-check interval (a setting)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from hub.identity import service as identity
from hub.runtime import Runtime
from hub.settings import Settings
from tests.api.test_subscriptions import append_ticks, create_project
from tests.conftest import AgentSession, Principal
from tests.jobs.test_observation_subscription import JOB_OBSERVATIONS
from tests.support import jobs, work
from tests.support.subscriptions import GraphQLSocket, subscriber

# The check's interval comes from settings; whether the credential still holds is judged
# with the coordinator clock. Waiting for the stream to end is bounded by this deadline.
RECHECK_SECONDS = 0.05
ENDS_WITHIN = 10.0


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"credential_recheck_seconds": RECHECK_SECONDS})


def revoke_token(runtime: Runtime, subscriber: AgentSession) -> None:
    token_id = "tok_" + subscriber.token.split("_")[2]
    runtime.write(lambda uow: identity.revoke_token(uow, token_id=token_id))


def end_session(runtime: Runtime, subscriber: AgentSession) -> None:
    def end(uow: Any) -> None:
        owner = identity.authenticate(uow, subscriber.principal.token)
        identity.end_session(uow, owner, session_id=subscriber.session_id, reason="done")

    runtime.write(end)


def disable_principal(runtime: Runtime, subscriber: AgentSession) -> None:
    runtime.write(
        lambda uow: identity.disable_principal(uow, principal=subscriber.principal.id)
    )


ENDINGS: dict[str, Callable[[Runtime, AgentSession], None]] = {
    "token revoked": revoke_token,
    "session ended": end_session,
    "principal disabled": disable_principal,
}


def assert_ended_unauthenticated(ws: GraphQLSocket, id: str = "1") -> None:
    message = ws.receive(timeout=ENDS_WITHIN)
    while message["type"] == "next" and "errors" not in message["payload"]:
        message = ws.receive(timeout=ENDS_WITHIN)  # events already on their way
    assert message["type"] == "next" and message["id"] == id, message
    [error] = message["payload"]["errors"]
    assert error["extensions"]["code"] == "UNAUTHENTICATED", error
    assert "credential no longer holds" in error["message"], error
    assert "revoked" in error["message"] or "ended" in error["message"], error
    assert ws.receive(timeout=ENDS_WITHIN) == {"id": id, "type": "complete"}


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_project_events_subscription_ends_when_its_credential_does(
    ending: str, runtime: Runtime, server: str, operator: Principal,
    agent: Callable[..., AgentSession],
) -> None:
    project_id = create_project(operator.api)
    watcher = agent()
    with subscriber(server, watcher.token) as ws:
        ws.subscribe(project_id, after=0)
        assert ws.sequences(1) == [1]  # open and delivering
        ENDINGS[ending](runtime, watcher)
        assert_ended_unauthenticated(ws)
        # Nothing more is delivered on it, even when the project moves on.
        append_ticks(runtime, project_id, 1)
        ws.subscribe(project_id, after=0, id="2")
        assert_ended_unauthenticated(ws, id="2")


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_job_observations_subscription_ends_when_its_credential_does(
    ending: str, runtime: Runtime, server: str, operator: Principal,
    agent: Callable[..., AgentSession],
) -> None:
    worker = agent()
    project = work.create_project(operator.api, f"p-{uuid.uuid4().hex[:6]}")
    attempt = work.claimed(worker.api, project, work.new_task(operator.api, project))["attempt"]
    job = jobs.registered_job(worker.api, attempt)
    watcher = agent()
    with subscriber(server, watcher.token) as ws:
        ws.send({
            "id": "1", "type": "subscribe",
            "payload": {"query": JOB_OBSERVATIONS,
                        "variables": {"projectId": project, "jobId": job["id"], "after": 0}},
        })
        first = ws.receive()
        assert first["payload"]["data"]["jobObservations"]["kind"] == "job.registered", first
        ENDINGS[ending](runtime, watcher)
        assert_ended_unauthenticated(ws)
