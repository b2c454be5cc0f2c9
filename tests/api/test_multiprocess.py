"""Several server processes on one PostgreSQL database (`hub serve --workers N`, or one
`hub serve` per port behind a balancer): what holds in one process holds across them.

Real `hub serve` processes, real HTTP and WebSockets, real concurrency. Most tests run two
processes on two ports, so the test chooses which process serves each request (with
`--workers 2` on one port the kernel chooses; one test runs that too). Each agent is its
own principal with its own session, pinned to one process. Nothing waits for time to
pass: barriers start the races, and arrivals are awaited with a deadline.

- Claims: agents on both processes race for the next eligible task of a project with
  few tasks, round after round (claim, then submit or relinquish); afterwards the
  attempts table shows one owner at a time per task, every claim its own generation.
- Subscriptions: followers on both processes receive every event of the project once,
  in order, with no gap, whichever process committed it; cross-process wakes come only
  from LISTEN/NOTIFY (the backstop poll is set beyond every deadline) unless a test says.
- A write transaction holding its place in the project's log (docs/architecture.md,
  "The event log", "What a transaction holding its place for long does") blocks no
  claim; followers see nothing past it until it ends, then everything, in order.
"""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import partial
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
import sqlalchemy as sa

from hub.events import service as events
from hub.runtime import Runtime
from tests.conftest import issue_principal, open_session
from tests.support import work
from tests.support.client import Api
from tests.support.processes import ServerProcess, hub_servers, wait_until
from tests.support.subscriptions import subscriber

if TYPE_CHECKING:  # imported for types only: pytest would try to collect `TestDatabase`
    from tests.conftest import TestDatabase

# Several processes need PostgreSQL: `hub serve` refuses --workers > 1 on SQLite.
pytestmark = pytest.mark.parametrize("backend", ["postgresql"], indirect=True)

WAIT = 60.0  # seconds: only ever reached when something is broken
NOTIFY_ONLY = 600.0  # the followers' backstop poll, beyond every deadline here
AGENTS = 16
TASKS = 5
SUBMIT_SHARE = 0.15  # of claims ended by a submission (the task is done), not given back
SENTINEL = "project.alias_added"  # the last write of a test: followers stop at it


# --- principals and agents ----------------------------------------------------------------


@dataclass
class Agent:
    name: str
    server: str  # the base URL of the process serving this agent
    api: Api  # with the agent's session token


@contextmanager
def operator_api(runtime: Runtime, server: ServerProcess) -> Iterator[Api]:
    _, token = issue_principal(runtime, "operator", kind="human", operator=True)
    api = Api(server.base_url, token)
    try:
        yield api
    finally:
        api.close()


@contextmanager
def agents_on(
    runtime: Runtime, servers: list[ServerProcess], count: int = AGENTS
) -> Iterator[list[Agent]]:
    """`count` agents, each with its own principal and session, dealt to the servers in
    turn (each session started through the process that will serve it)."""
    made: list[Agent] = []
    with ExitStack() as closing:
        for index in range(count):
            server = servers[index % len(servers)].base_url
            _, token = issue_principal(runtime, f"agent-{index}")
            principal_api = Api(server, token)
            try:
                _, session_token = open_session(principal_api, workstation=f"ws-{index}")
            finally:
                principal_api.close()
            api = Api(server, session_token)
            closing.callback(api.close)
            made.append(Agent(f"agent-{index}", server, api))
        yield made


def project_with_tasks(api: Api, tasks: int = TASKS) -> tuple[str, set[str]]:
    project_id = work.create_project(api)
    # A submission ends the task: no review task joins the race.
    work.set_policy(api, project_id, reviewPolicy="NONE")
    return project_id, {work.new_task(api, project_id) for _ in range(tasks)}


# --- the claim race -----------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    task_id: str
    generation: int
    attempt_id: str
    server: str


def claim_race(agents: list[Agent], project_id: str, rounds: int, seed: int) -> list[Claim]:
    """Every agent, `rounds` times, all starting together: claim the next eligible task,
    then submit it or give it back. Returns every successful claim."""
    start = threading.Barrier(len(agents), timeout=WAIT)
    claims: list[Claim] = []
    failures: list[BaseException] = []

    def play(index: int, agent: Agent) -> None:
        rng = random.Random(seed * 1000 + index)
        try:
            for _ in range(rounds):
                start.wait()
                payload = work.claim(agent.api, project_id)
                if payload["__typename"] == "NotFound":  # nothing eligible left for it
                    continue
                assert payload["__typename"] == "ClaimPayload", payload
                attempt = payload["attempt"]
                claims.append(
                    Claim(payload["task"]["id"], attempt["generation"], attempt["id"], agent.server)
                )
                if rng.random() < SUBMIT_SHARE:
                    accepted = work.accept(agent.api, attempt)
                    assert accepted["__typename"] == "AttemptPayload", accepted
                    ended = work.submit(agent.api, attempt)
                    assert ended["__typename"] == "AttemptPayload", ended
                else:
                    work.relinquish(agent.api, attempt)
        except threading.BrokenBarrierError:
            pass  # another agent failed: its failure is the one reported
        except BaseException as exc:
            failures.append(exc)
            start.abort()

    with ThreadPoolExecutor(len(agents)) as pool:
        for future in [pool.submit(play, i, agent) for i, agent in enumerate(agents)]:
            future.result(timeout=WAIT * rounds)
    if failures:
        raise failures[0]
    return claims


def assert_one_owner_at_a_time(runtime: Runtime, task_ids: set[str], claims: list[Claim]) -> None:
    """The attempts table, read back after the race: every claim answered is an attempt
    and every attempt was answered to one claimer; per task the generations run 1, 2, 3…
    and each attempt started only after the one before had ended."""
    assert len({(c.task_id, c.generation) for c in claims}) == len(claims), claims
    with runtime.database.engine.connect() as connection:
        attempts = connection.execute(
            sa.text(
                "SELECT id, task_id, generation, state, started_at, ended_at FROM attempts"
                " WHERE task_id = ANY(:tasks) ORDER BY task_id, generation"
            ),
            {"tasks": sorted(task_ids)},
        ).all()
        tasks = {
            row.id: row
            for row in connection.execute(
                sa.text("SELECT id, generation, current_attempt_id FROM tasks WHERE id = ANY(:t)"),
                {"t": sorted(task_ids)},
            )
        }
    assert {(a.task_id, a.generation, a.id) for a in attempts} == {
        (c.task_id, c.generation, c.attempt_id) for c in claims
    }
    for task_id in task_ids:
        history = [a for a in attempts if a.task_id == task_id]
        assert [a.generation for a in history] == list(range(1, len(history) + 1)), history
        for before, after in pairwise(history):
            assert before.ended_at is not None and after.started_at >= before.ended_at, history
        active = [a for a in history if a.state == "ACTIVE"]
        assert len(active) <= 1, history
        if active:
            assert tasks[task_id].current_attempt_id == active[0].id
        assert tasks[task_id].generation == len(history)


# --- followers ----------------------------------------------------------------------------


@dataclass(eq=False)
class Follower:
    """A `projectEvents` subscriber in its own thread, reading until the sentinel."""

    server: str
    token: str
    project_id: str
    received: list[dict[str, Any]] = field(default_factory=list)
    error: BaseException | None = None
    _arrived: threading.Condition = field(default_factory=threading.Condition)
    _thread: threading.Thread | None = None

    def start(self) -> Follower:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            with subscriber(self.server, self.token) as ws:
                ws.subscribe(self.project_id, after=0)
                while True:
                    event = ws.event(timeout=WAIT)
                    with self._arrived:
                        self.received.append(event)
                        self._arrived.notify_all()
                    if event["kind"] == SENTINEL:
                        return
        except BaseException as exc:
            self.error = exc
        finally:
            with self._arrived:
                self._arrived.notify_all()

    def count(self) -> int:
        with self._arrived:
            return len(self.received)

    def wait_for(self, count: int) -> None:
        with self._arrived:
            arrived = self._arrived.wait_for(
                lambda: len(self.received) >= count or self.error is not None, WAIT
            )
        assert self.error is None, self.error
        assert arrived, f"{self.server}: {len(self.received)} of {count} events arrived"

    def join(self) -> list[tuple[int, str, str]]:
        assert self._thread is not None
        self._thread.join(WAIT)
        assert not self._thread.is_alive(), f"{self.server}: the sentinel never arrived"
        assert self.error is None, self.error
        return [(e["sequence"], e["kind"], e["subjectId"]) for e in self.received]


def logged(runtime: Runtime, project_id: str) -> list[tuple[int, str, str]]:
    """The project's events as a reader in the test process reads them (settled)."""
    records: list[tuple[int, str, str]] = []
    while True:
        page = runtime.read(
            partial(events.list_events, stream=project_id, after=len(records), limit=500)
        )
        if not page:
            return records
        records.extend((r.seq, r.kind, r.subject_id) for r in page)


def readable(runtime: Runtime, project_id: str) -> int:
    """How many of the project's events a reader can read now, without waiting."""
    with runtime.database.engine.connect() as connection:
        # The horizon first, the events in a later statement (docs/architecture.md, "The
        # event log").
        horizon = connection.scalar(sa.text("SELECT hub_event_horizon()"))
        count = connection.scalar(
            sa.text(
                "SELECT count(*) FROM events WHERE stream = :s"
                " AND (seq IS NOT NULL OR log_position < :h)"
            ),
            {"s": project_id, "h": horizon},
        )
    return int(count or 0)


def finish(api: Api, project_id: str, followers: list[Follower]) -> list[tuple[int, str, str]]:
    """Write the sentinel; every follower must have received exactly the log up to it."""
    payload = api.mutate("addProjectAlias", {"projectId": project_id, "alias": "the-end"})
    assert payload["__typename"] == "AddProjectAliasPayload", payload
    received = [follower.join() for follower in followers]
    log = [] if not received else received[0]
    assert [seq for seq, _, _ in log] == list(range(1, len(log) + 1))
    for server_view, follower in zip(received, followers, strict=True):
        assert server_view == log, follower.server
    return log


# --- the tests ----------------------------------------------------------------------------


def test_agents_on_two_processes_racing_for_few_tasks_never_share_one(
    test_database: TestDatabase, runtime: Runtime, tmp_path: Path
) -> None:
    with (
        hub_servers(2, test_database.url, tmp_path, poll_seconds=NOTIFY_ONLY) as servers,
        operator_api(runtime, servers[0]) as operator,
        agents_on(runtime, servers) as agents,
    ):
        project_id, task_ids = project_with_tasks(operator)
        claims = claim_race(agents, project_id, rounds=6, seed=1)

    assert_one_owner_at_a_time(runtime, task_ids, claims)
    # Both processes granted claims (each agent only ever talks to its own process).
    assert {claim.server for claim in claims} == {server.base_url for server in servers}
    assert {claim.task_id for claim in claims} == task_ids
    assert len(claims) > len(task_ids)  # tasks given back were claimed again, by others
    # One `attempt.claimed` event per claim, in the one log both processes write.
    log = logged(runtime, project_id)
    assert [seq for seq, _, _ in log] == list(range(1, len(log) + 1))
    assert sum(kind == "attempt.claimed" for _, kind, _ in log) == len(claims)


def test_followers_on_both_processes_receive_every_event_once_in_order_from_both(
    test_database: TestDatabase, runtime: Runtime, tmp_path: Path
) -> None:
    with (
        hub_servers(2, test_database.url, tmp_path, poll_seconds=NOTIFY_ONLY) as servers,
        operator_api(runtime, servers[0]) as operator,
    ):
        one, two = (server.base_url for server in servers)
        project_id = work.create_project(operator)
        followers = [
            Follower(server, operator.token, project_id).start() for server in (one, one, two)
        ]
        for follower in followers:
            follower.wait_for(1)  # `project.created`: each is now live, waiting for wakes

        # Three writers on the second process, one on the first, all at once.
        writers = [two, two, two, one]
        start = threading.Barrier(len(writers), timeout=WAIT)

        def write(server: str) -> list[str]:
            api = Api(server, operator.token)
            try:
                start.wait()
                return [work.new_task(api, project_id) for _ in range(12)]
            finally:
                api.close()

        with ThreadPoolExecutor(len(writers)) as pool:
            created = [t for batch in pool.map(write, writers, timeout=WAIT) for t in batch]
        log = finish(Api(two, operator.token), project_id, followers)

    assert log == logged(runtime, project_id)
    assert sorted(s for _, kind, s in log if kind == "task.created") == sorted(created)
    assert log[-1][1] == SENTINEL


@pytest.mark.parametrize("notifies", [True, False], ids=["notifying", "silent"])
def test_a_write_transaction_held_open_blocks_no_claim_and_followers_resume_in_order(
    test_database: TestDatabase, runtime: Runtime, tmp_path: Path, notifies: bool
) -> None:
    # A held transaction that notifies at commit wakes the followers itself; a silent one
    # (as a write to another stream, or to no stream) leaves them to their backstop poll.
    poll = NOTIFY_ONLY if notifies else 1.0
    with (
        hub_servers(2, test_database.url, tmp_path, poll_seconds=poll) as servers,
        operator_api(runtime, servers[0]) as operator,
        agents_on(runtime, servers) as agents,
    ):
        project_id, task_ids = project_with_tasks(operator)
        followers = [
            Follower(server.base_url, operator.token, project_id).start() for server in servers
        ]
        before = runtime.read(lambda uow: events.last_sequence(uow, stream=project_id))
        for follower in followers:
            follower.wait_for(before)

        with psycopg.connect(test_database.url) as held:
            # An event of the project's stream, placed and not committed (as a writer
            # stalled in its commit): its place is lower than every claim's below, so it
            # holds their events back.
            held.execute(
                "INSERT INTO events (stream, project_id, kind, subject_id, occurred_at, payload,"
                " log_position) VALUES (%s, %s, 'test.held', 'held', now(), '{}',"
                " hub_event_ticket())",
                (project_id, project_id),
            )
            if notifies:
                held.execute("SELECT pg_notify(%s, %s)", (events.NOTIFY_CHANNEL, project_id))

            claims = claim_race(agents, project_id, rounds=2, seed=3)
            # Every claim completed with the transaction still open.
            assert held.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
            assert claims
            # Committed, yet past the open transaction: nobody can read them yet. (Read
            # below the horizon: a service read would first wait for them.)
            assert readable(runtime, project_id) == before
            assert [follower.count() for follower in followers] == [before] * len(followers)
            held.commit()

        log = logged(runtime, project_id)
        assert log[before][1:] == ("test.held", "held")  # numbered first: the lowest place
        for follower in followers:
            follower.wait_for(len(log))  # before the sentinel: no other wake helps
        final = finish(Api(servers[1].base_url, operator.token), project_id, followers)

    assert final[: len(log)] == log and final[len(log)][1] == SENTINEL
    assert sum(kind == "attempt.claimed" for _, kind, _ in log) == len(claims)
    assert_one_owner_at_a_time(runtime, task_ids, claims)


WORKER_STARTED = re.compile(r"Started server process \[(\d+)\]")


def test_hub_serve_with_two_workers_keeps_one_owner_per_task_and_delivers_every_event(
    test_database: TestDatabase, runtime: Runtime, tmp_path: Path
) -> None:
    with hub_servers(
        1, test_database.url, tmp_path, poll_seconds=NOTIFY_ONLY, workers=2
    ) as servers:
        [server] = servers

        def workers() -> set[str]:
            return set(WORKER_STARTED.findall(server.log()))

        assert wait_until(lambda: len(workers()) == 2, WAIT), server.log()
        assert str(server.process.pid) not in workers()  # the workers, not the supervisor
        with operator_api(runtime, server) as operator, agents_on(runtime, servers) as agents:
            project_id, task_ids = project_with_tasks(operator)
            # Several connections: the kernel spreads them over the two workers.
            followers = [
                Follower(server.base_url, operator.token, project_id).start() for _ in range(4)
            ]
            claims = claim_race(agents, project_id, rounds=4, seed=4)
            log = finish(operator, project_id, followers)

    assert log == logged(runtime, project_id)
    assert sum(kind == "attempt.claimed" for _, kind, _ in log) == len(claims)
    assert_one_owner_at_a_time(runtime, task_ids, claims)
