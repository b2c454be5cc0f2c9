"""`projectEvents` over a real WebSocket (`graphql-transport-ws`) against a real server.

The subscription's promise is a gap-free, duplicate-free stream: replay after a
sequence number, then live, with no seam a concurrent commit can fall into. On
PostgreSQL the promise holds across server processes through LISTEN/NOTIFY.
"""

from __future__ import annotations

import asyncio
import statistics
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from websockets.exceptions import ConnectionClosed

from hub.events.feed import EventSignal
from hub.events.listener import listen_for_events
from hub.events.service import NOTIFY_CHANNEL, append_event
from hub.runtime import Runtime
from hub.storage.database import Database
from hub.storage.unit_of_work import UnitOfWork
from tests.support.client import Api
from tests.support.processes import hub_servers, wait_until
from tests.support.subscriptions import RECEIVE_TIMEOUT, subscriber, websocket

if TYPE_CHECKING:  # imported for types only: pytest would try to collect `TestDatabase`
    from tests.conftest import Principal, TestDatabase


def create_project(api: Api) -> str:
    payload = api.mutate(
        "createProject",
        {"name": f"p-{uuid.uuid4().hex[:8]}"},
        "... on CreateProjectPayload { project { id } }",
    )
    assert payload["__typename"] == "CreateProjectPayload", payload
    project_id: str = payload["project"]["id"]
    return project_id


def append_ticks(runtime: Runtime, project_id: str, count: int) -> None:
    """`count` events in one transaction (the project already has `project.created`)."""

    def write(uow: UnitOfWork) -> None:
        uow.no_lock_needed("test events, appended to no row anyone locks")
        for _ in range(count):
            append_event(uow, project_id=project_id, kind="test.tick", subject_id=project_id,
                         actor_id=None)

    runtime.write(write)


# --- replay, live, resume ----------------------------------------------------------------


def test_replay_then_live_has_no_gap_and_no_duplicate_while_commits_race_the_switch(
    runtime: Runtime, server: str, operator: Principal
) -> None:
    project_id = create_project(operator.api)  # sequence 1
    # Past two replay pages (500 each), so the replay itself spans several reads.
    append_ticks(runtime, project_id, 1199)
    before, during = 1200, 200
    go = threading.Event()
    failures: list[BaseException] = []

    def commit_while_replaying() -> None:
        try:
            go.wait(RECEIVE_TIMEOUT)
            for _ in range(during):
                append_ticks(runtime, project_id, 1)  # one commit per event
        except BaseException as exc:
            failures.append(exc)

    writer = threading.Thread(target=commit_while_replaying)
    writer.start()
    try:
        with subscriber(server, operator.token) as ws:
            ws.subscribe(project_id, after=0)
            go.set()
            received = ws.sequences(before + during)
    finally:
        go.set()
        writer.join(timeout=60)
    assert not failures, failures
    assert received == list(range(1, before + during + 1))


def test_resuming_after_k_yields_k_plus_one_onwards_then_live(
    runtime: Runtime, server: str, operator: Principal
) -> None:
    project_id = create_project(operator.api)
    append_ticks(runtime, project_id, 9)  # sequences 1..10

    with subscriber(server, operator.token) as ws:
        ws.subscribe(project_id, after=4)
        assert ws.sequences(6) == [5, 6, 7, 8, 9, 10]
        append_ticks(runtime, project_id, 1)
        assert ws.sequences(1) == [11]
        append_ticks(runtime, project_id, 1)
        # The next event is 12, not a repeat of 11.
        assert ws.sequences(1) == [12]


def test_subscribing_to_an_unknown_project_is_a_not_found_error(
    server: str, operator: Principal
) -> None:
    with subscriber(server, operator.token) as ws:
        ws.subscribe("prj_does_not_exist", after=0)
        message = ws.receive()
        assert message["type"] == "next" and message["payload"]["data"] is None, message
        [error] = message["payload"]["errors"]
        assert error["extensions"]["code"] == "NOT_FOUND"
        assert "prj_does_not_exist" in error["message"]
        # The operation ends there; the connection stays usable.
        assert ws.receive() == {"id": "1", "type": "complete"}
        ws.subscribe(create_project(operator.api), id="2")
        assert ws.sequences(1, id="2") == [1]


def test_a_subscriber_that_goes_away_leaves_the_event_signal(
    runtime: Runtime, server: str, operator: Principal
) -> None:
    project_id = create_project(operator.api)
    signal = runtime.event_signal
    baseline = signal.follower_count()

    with subscriber(server, operator.token) as ws:
        ws.subscribe(project_id, id="a")
        ws.subscribe(project_id, id="b")
        first = {(m["id"], m["payload"]["data"]["projectEvents"]["sequence"])
                 for m in (ws.receive(), ws.receive())}
        assert first == {("a", 1), ("b", 1)}
        assert signal.follower_count() == baseline + 2
        # The client stops one subscription: that follower leaves, the other stays.
        ws.send({"id": "a", "type": "complete"})
        assert wait_until(lambda: signal.follower_count() == baseline + 1)
    # The connection closes with "b" still open: its follower leaves too.
    assert wait_until(lambda: signal.follower_count() == baseline)


# --- authentication ----------------------------------------------------------------------


@pytest.mark.parametrize("token", [None, "hub_pat_not-a-real-token"])
def test_an_unauthenticated_connection_is_rejected(server: str, token: str | None) -> None:
    with websocket(server) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            ws.init(token)
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 4403


def test_subscribing_before_connection_init_is_rejected(
    server: str, operator: Principal
) -> None:
    project_id = create_project(operator.api)
    with websocket(server) as ws:
        ws.subscribe(project_id)
        with pytest.raises(ConnectionClosed) as closed:
            ws.receive()
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 4401


# --- across processes (PostgreSQL) -------------------------------------------------------


# One process on SQLite: there is no other process to hear.
POSTGRESQL_ONLY = pytest.mark.parametrize("backend", ["postgresql"], indirect=True)


@POSTGRESQL_ONLY
def test_a_commit_in_one_process_reaches_a_subscriber_of_another_through_notify(
    test_database: TestDatabase,
    operator: Principal,
    tmp_path: Path,
    record_property: Callable[[str, object], None],
) -> None:
    # The poll backstop is far beyond every receive deadline: only NOTIFY can deliver.
    poll = 600.0
    with hub_servers(2, test_database.url, tmp_path, poll_seconds=poll) as (one, two):
        writer = Api(one.base_url, operator.token)
        try:
            project_id = create_project(writer)
            with subscriber(two.base_url, operator.token) as ws:
                ws.subscribe(project_id, after=0)
                # Sequence 1 arrived by the initial read; the follower now only waits.
                assert ws.sequences(1) == [1]
                latencies: list[float] = []
                for expected in range(2, 7):
                    started = time.perf_counter()
                    payload = writer.mutate(
                        "addProjectAlias", {"projectId": project_id, "alias": f"alias-{expected}"}
                    )
                    assert payload["__typename"] == "AddProjectAliasPayload", payload
                    assert ws.sequences(1) == [expected]
                    latencies.append(time.perf_counter() - started)
        finally:
            writer.close()
    # Recorded, not asserted: wall-clock bounds make flaky tests.
    record_property("notify_latency_median_ms", round(statistics.median(latencies) * 1000, 1))
    record_property("notify_latency_max_ms", round(max(latencies) * 1000, 1))


@POSTGRESQL_ONLY
def test_the_listener_reconnects_after_losing_its_connection_and_stops_cleanly(
    database: Database,
) -> None:
    name = f"hub-test-listener-{uuid.uuid4().hex[:8]}"
    stream = f"prj_{uuid.uuid4().hex}"
    conninfo = database.url.set(drivername="postgresql").render_as_string(hide_password=False)

    async def sql(statement: str, *params: object) -> list[tuple[Any, ...]]:
        async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
            cursor = await conn.execute(statement, params)
            return await cursor.fetchall() if cursor.description else []

    async def notify() -> None:
        await sql("SELECT pg_notify(%s, %s)", NOTIFY_CHANNEL, stream)

    async def listeners() -> int:
        rows = await sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", name)
        return int(rows[0][0])

    async def scenario() -> None:
        signal = EventSignal()
        async with listen_for_events(
            database.url, signal, application_name=name, initial_backoff_seconds=0.05
        ):
            with signal.subscribe(stream) as wake:
                await notify()
                await asyncio.wait_for(wake.wait(), RECEIVE_TIMEOUT)
                wake.clear()

                await sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                          " WHERE application_name = %s", name)
                # Back online, the listener wakes every follower: anything committed
                # while it was away may have been announced to nobody.
                await asyncio.wait_for(wake.wait(), RECEIVE_TIMEOUT)
                wake.clear()
                assert await listeners() == 1

                await notify()
                await asyncio.wait_for(wake.wait(), RECEIVE_TIMEOUT)
        # Shutdown closes the dedicated connection.
        deadline = time.monotonic() + RECEIVE_TIMEOUT
        while await listeners() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert await listeners() == 0

    asyncio.run(scenario())
