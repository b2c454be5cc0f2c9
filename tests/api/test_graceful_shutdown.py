"""SIGTERM stops a `hub serve` process gracefully (docs/ops/deploying.md, "Graceful
shutdown"): real processes, real HTTP, WebSockets and server-sent events, on both
databases.

- Under load (threads sending keyed mutations), the process exits 0 within its grace;
  every request got an answer or an error a client retries (connection refused or
  reset, 503); every acknowledged write is there when a new server opens the same
  database, and each retried key is applied once.
- An open subscription is closed with 1012 "server restarting"; its client resumes from
  its cursor on the next server and sees every event once, in order. An open dashboard
  stream gets a last `server-restarting` event with a `retry:` hint.
- With a shutdown delay, /readyz answers 503 `draining` while the process still serves;
  a second SIGTERM stops it at once.
"""

from __future__ import annotations

import signal
import threading
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from hub.runtime import Runtime
from tests.conftest import issue_principal
from tests.support import work
from tests.support.client import Api
from tests.support.processes import ServerProcess, hub_servers, wait_until
from tests.support.sql import fetch_value
from tests.support.subscriptions import subscriber
from tests.web.conftest import Dashboard
from tests.web.test_live_events import next_event

if TYPE_CHECKING:  # imported for types only: pytest would try to collect `TestDatabase`
    from tests.conftest import TestDatabase

pytestmark = pytest.mark.slow

GRACE_SECONDS = 20
WAIT = 60.0  # only ever reached when something is broken
LOAD_THREADS = 6
TASK_SELECTION = "... on CreateTaskPayload { task { id } }"
# What a client may retry with the same idempotency key: the server was not reached, or
# went away before answering, or said it is unavailable.
RETRYABLE = (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError,
             httpx.WriteError)


def stop(server: ServerProcess) -> None:
    server.process.send_signal(signal.SIGTERM)


def assert_exits_zero(server: ServerProcess, within: float) -> None:
    assert server.process.wait(timeout=within) == 0, server.log()


def create_task_input(project_id: str, key: str) -> dict[str, Any]:
    return {"projectId": project_id, "idempotencyKey": key, "kind": "GENERAL",
            "title": f"task {key[:8]}", "acceptanceCriteria": ["it works"]}


def create_task(api: Api, project_id: str, key: str) -> httpx.Response:
    return api.post(
        "mutation($input: CreateTaskInput!) { createTask(input: $input) {"
        f" __typename ... on Problem {{ code message }} {TASK_SELECTION} }} }}",
        {"input": create_task_input(project_id, key)},
    )


@dataclass
class Load:
    """What the load's threads saw: keys answered (with their task) and keys a client
    would retry; anything else is a failure."""

    answered: dict[str, str] = field(default_factory=dict)
    retryable: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    signalled: bool = False
    answered_after_signal: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def keyed_mutations(server: ServerProcess, token: str, project_id: str, load: Load) -> None:
    """Create tasks, each with its own key, until the server refuses connections."""
    api = Api(server.base_url, token)
    try:
        while True:
            key = work.key()
            try:
                response = create_task(api, project_id, key)
            except httpx.ConnectError:
                with load.lock:
                    load.retryable.append(key)
                return  # the listener is closed: the server has stopped serving
            except RETRYABLE:
                with load.lock:
                    load.retryable.append(key)
                continue
            with load.lock:
                if response.status_code == 503:
                    load.retryable.append(key)
                    continue
                body = response.json() if response.status_code == 200 else {}
                payload = (body.get("data") or {}).get("createTask") or {}
                if payload.get("__typename") != "CreateTaskPayload":
                    load.failures.append(f"{response.status_code} {response.text[:300]}")
                    return
                load.answered[key] = payload["task"]["id"]
                load.answered_after_signal += load.signalled
    finally:
        api.close()


@pytest.fixture
def operator_token(runtime: Runtime) -> str:
    return issue_principal(runtime, "operator", kind="human", operator=True)[1]


def one_server(
    test_database: TestDatabase, workdir: Path, **settings: str
) -> AbstractContextManager[list[ServerProcess]]:
    return hub_servers(
        1, test_database.url, workdir, poll_seconds=1.0,
        settings={"HUB_SHUTDOWN_GRACE_SECONDS": str(GRACE_SECONDS), **settings},
    )


def test_sigterm_under_load_answers_every_request_and_loses_no_acknowledged_write(
    test_database: TestDatabase, runtime: Runtime, operator_token: str, tmp_path: Path
) -> None:
    load = Load()
    with one_server(test_database, tmp_path / "first") as [first]:
        api = Api(first.base_url, operator_token)
        project_id = work.create_project(api)
        api.close()
        threads = [
            threading.Thread(target=keyed_mutations,
                             args=(first, operator_token, project_id, load))
            for _ in range(LOAD_THREADS)
        ]
        for thread in threads:
            thread.start()
        assert wait_until(lambda: len(load.answered) >= 40 or bool(load.failures), WAIT)
        signalled = time.monotonic()
        load.signalled = True
        stop(first)
        assert_exits_zero(first, within=GRACE_SECONDS + 10)
        assert time.monotonic() - signalled < GRACE_SECONDS, first.log()
        for thread in threads:
            thread.join(timeout=WAIT)
    assert not load.failures, load.failures
    assert load.answered_after_signal >= 1  # the requests in flight were answered
    assert len(load.retryable) >= LOAD_THREADS  # each thread ended on a refusal

    with one_server(test_database, tmp_path / "second") as [second]:
        api = Api(second.base_url, operator_token)
        try:
            # An acknowledged write is there: its key answers with the same task.
            for key, task_id in load.answered.items():
                replayed = create_task(api, project_id, key).json()["data"]["createTask"]
                assert replayed["task"]["id"] == task_id, (key, replayed)
            # A key the client would retry is applied once, whether or not it had been.
            retried = {
                key: create_task(api, project_id, key).json()["data"]["createTask"]
                for key in load.retryable
            }
        finally:
            api.close()
    assert all(p["__typename"] == "CreateTaskPayload" for p in retried.values()), retried
    tasks = fetch_value(test_database.database,
                        "SELECT count(*) FROM tasks WHERE project_id = :p", p=project_id)
    assert tasks == len(load.answered) + len(load.retryable)


def test_sigterm_closes_streams_with_the_reason_and_a_subscriber_resumes_on_the_next_server(
    test_database: TestDatabase, runtime: Runtime, operator_token: str, tmp_path: Path
) -> None:
    _, viewer_token = issue_principal(runtime, "viewer", kind="human")
    with one_server(test_database, tmp_path / "first") as [first]:
        api = Api(first.base_url, operator_token)
        project_id = work.create_project(api)
        for _ in range(3):
            work.new_task(api, project_id)
        api.close()
        browser = Dashboard(first.base_url)
        assert browser.post_form("/login", {"token": viewer_token}).status_code == 303
        with (
            subscriber(first.base_url, operator_token) as socket,
            browser.http.stream("GET", f"/projects/{project_id}/events/live?after=0",
                                headers={"accept": "text/event-stream"},
                                timeout=httpx.Timeout(WAIT)) as live,
        ):
            socket.subscribe(project_id, after=0)
            seen = socket.sequences(4)  # project.created and three tasks
            lines = live.iter_lines()
            assert next_event(lines)["event"] == "project-event"

            stop(first)
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    socket.receive(timeout=WAIT)
            assert closed.value.rcvd is not None
            assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (
                1012, "server restarting"
            )
            farewell = next_event(lines)
            while farewell["event"] == "project-event":  # the ones before it, then it
                farewell = next_event(lines)
            assert farewell["event"] == "server-restarting", farewell
            assert farewell["retry"] == "1000"
        browser.close()
        assert_exits_zero(first, within=GRACE_SECONDS + 10)

    with one_server(test_database, tmp_path / "second") as [second]:
        api = Api(second.base_url, operator_token)
        try:
            for _ in range(2):
                work.new_task(api, project_id)
            every = [e["sequence"] for e in api(
                "query($p: ID!) { events(projectId: $p, first: 100) { sequence } }",
                p=project_id)["events"]]
        finally:
            api.close()
        with subscriber(second.base_url, operator_token) as socket:
            socket.subscribe(project_id, after=seen[-1])
            seen += socket.sequences(len(every) - len(seen))
    assert seen == every


def test_readyz_answers_draining_during_the_delay_and_a_second_sigterm_stops_at_once(
    test_database: TestDatabase, operator_token: str, tmp_path: Path
) -> None:
    with one_server(test_database, tmp_path, HUB_SHUTDOWN_DELAY_SECONDS="300") as [server]:
        stop(server)

        def draining() -> bool:
            answer = httpx.get(f"{server.base_url}/readyz", timeout=5)
            return answer.status_code == 503 and answer.json() == {"status": "draining"}

        assert wait_until(draining, WAIT)
        api = Api(server.base_url, operator_token)
        try:  # still serving while a balancer takes it out
            assert api("{ viewer { serverTime } }")["viewer"]["serverTime"]
        finally:
            api.close()
        stop(server)
        assert_exits_zero(server, within=GRACE_SECONDS + 10)


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_sigterm_stops_every_worker_of_a_multiprocess_server_with_status_zero(
    test_database: TestDatabase, operator_token: str, tmp_path: Path
) -> None:
    with hub_servers(1, test_database.url, tmp_path, poll_seconds=1.0, workers=2,
                     settings={"HUB_SHUTDOWN_GRACE_SECONDS": str(GRACE_SECONDS)}) as [server]:
        with subscriber(server.base_url, operator_token) as socket:
            stop(server)
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    socket.receive(timeout=WAIT)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1012
        assert_exits_zero(server, within=GRACE_SECONDS + 10)
