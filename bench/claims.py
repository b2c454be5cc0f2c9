"""Claims over real HTTP against a real server, beside the floor the database allows.

N agents, each its own principal and session, run the claim cycle in a closed loop for
a fixed time against a real uvicorn process: claimTask (next eligible) -> renewLease
-> recordAcceptance -> submitAttempt(DELIVERED). A GENERAL task delivered with
acceptance goes straight to DONE, the cheapest cycle that exercises claim, renew and
submit. The client times each claimTask request.

In the same run, on the same database (its own `floor_*` tables), the same number of
threads runs the *floor*: the minimal claim transaction written directly against the
driver (sqlite3 or psycopg, no SQLAlchemy, no HTTP, no GraphQL). Two floors are timed:

- `floor`: claim transactions only (the floor of docs/benchmarks.md; `ratio` uses it);
- `floor_cycle`: the same four write transactions per claim as the service's cycle
  (claim, renew, acceptance, submit), each minimal: the like-for-like comparison.

The stack's own ceiling is measured in the same run too: `bench/stack_floor.py`'s no-op
mutation on uvicorn (as many server processes as `--workers`), driven by as many client
threads as there are agents, half of `--stack-seconds` before the hub run and half after
it, so that both see the machine's load alike. A cycle is four mutations, so
`stack_ratio = claims_per_s / (stack_mutations_per_s / 4)` and `p99_ratio` is claimTask's
p99 over the no-op's.

On PostgreSQL a connection of its own samples `pg_locks` every 50 ms of the measured
window (`LockSampler`): the most backends waiting on a lock at once, and how often a row
of `event_streams` (the per-project event counter) was seen locked or queued on.

Afterwards the database is checked: no task has two ACTIVE attempts, and every
IN_PROGRESS task's current attempt is its one ACTIVE attempt (`double_owned`).

    .venv/bin/python bench/claims.py --backend sqlite --agents 32 --seconds 10
    .venv/bin/python bench/claims.py --backend postgresql --workers 2
    .venv/bin/python bench/claims.py --backend both    # SQLite then PostgreSQL

The last line printed is one JSON object with the figures (`--backend both`: each
backend's under its name, and `pg_over_sqlite`, PostgreSQL's claims/s over SQLite's).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import psycopg
from scratch import Scratch, ms, percentile, scratch_database
from sqlalchemy import insert, text
from stack_floor import Server, drive, floor_served, free_port, summarize

from hub.identity import service as identity
from hub.ids import new_id
from hub.projects import service as projects
from hub.runtime import Runtime
from hub.work.tables import Task, TaskCriteria

PROBLEM = "... on Problem { code message }"
CLAIM = f"""mutation($input: ClaimTaskInput!) {{ claimTask(input: $input) {{ __typename
  ... on ClaimPayload {{ attempt {{ id generation }} lease {{ expiresAt }} serverTime }}
  {PROBLEM} }} }}"""
RENEW = f"""mutation($input: RenewLeaseInput!) {{ renewLease(input: $input) {{ __typename
  ... on AttemptPayload {{ lease {{ expiresAt }} serverTime }} {PROBLEM} }} }}"""
ACCEPT = f"""mutation($input: RecordAcceptanceInput!) {{ recordAcceptance(input: $input) {{
  __typename ... on AttemptPayload {{ attempt {{ id }} serverTime }} {PROBLEM} }} }}"""
SUBMIT = f"""mutation($input: SubmitAttemptInput!) {{ submitAttempt(input: $input) {{ __typename
  ... on AttemptPayload {{ task {{ id state }} submission {{ id }} serverTime }} {PROBLEM} }} }}"""
START_SESSION = f"""mutation($input: StartSessionInput!) {{ startSession(input: $input) {{
  __typename ... on StartSessionPayload {{ token session {{ id }} }} {PROBLEM} }} }}"""

CYCLE = ("claim", "renew", "accept", "submit")
LEASE = timedelta(minutes=10)


# --- the fixture: principals, tokens, a project and its tasks -------------------------------


@dataclass(frozen=True)
class Fixture:
    project_id: str
    operator_id: str
    agent_tokens: list[str]


def prepare(runtime: Runtime, agents: int, tasks: int) -> Fixture:
    """Principals and personal tokens through the service layer; tasks in bulk."""

    def people(uow: Any) -> tuple[str, str, list[str]]:
        operator = identity.create_principal(
            uow, name="bench-operator", kind="human", operator=True
        )
        operator_token = identity.create_token(uow, principal=operator.id, label="bench")
        return operator.id, operator_token.plaintext, create_agents(uow, agents)

    operator_id, operator_token, tokens = runtime.write(people)
    project = runtime.write(
        lambda uow: projects.create_project(
            uow, identity.authenticate(uow, operator_token), name="claims bench"
        )
    )
    insert_tasks(runtime, project.id, operator_id, tasks)
    return Fixture(project.id, operator_id, tokens)


def create_agents(uow: Any, count: int) -> list[str]:
    """`count` agents, each its own principal: their personal tokens."""
    tokens = []
    for index in range(count):
        agent = identity.create_principal(uow, name=f"bench-agent-{index:03d}", kind="agent")
        tokens.append(identity.create_token(uow, principal=agent.id, label="bench").plaintext)
    return tokens


def insert_tasks(runtime: Runtime, project_id: str, created_by: str, count: int) -> None:
    """OPEN GENERAL tasks with one criterion each, as createTask would leave them."""
    now = datetime.now(UTC)
    ids = [new_id("tsk") for _ in range(count)]
    tasks = [
        {
            "id": task_id,
            "project_id": project_id,
            "kind": "GENERAL",
            "title": f"bench task {index}",
            "outcome": "",
            "priority": 0,
            "state": "OPEN",
            "required": True,
            "revision": 1,
            "criteria_revision": 1,
            "generation": 0,
            "blocked_count": 0,
            "created_at": now,
            "created_by": created_by,
            "updated_at": now,
        }
        for index, task_id in enumerate(ids)
    ]
    criteria = [
        {
            "task_id": task_id,
            "revision": 1,
            "project_id": project_id,
            "criteria": ["it works"],
            "created_at": now,
            "created_by": created_by,
        }
        for task_id in ids
    ]
    with runtime.database.engine.begin() as connection:
        connection.execute(insert(Task), tasks)
        connection.execute(insert(TaskCriteria), criteria)


# --- the server ----------------------------------------------------------------------------


@contextmanager
def served(
    scratch: Scratch,
    *,
    workers: int,
    synchronous: str,
    pool_size: int,
    wrapper: str,
    settings: dict[str, str] | None = None,
) -> Iterator[Server]:
    """`hub serve`'s app in its own uvicorn process (access log off, as under load);
    `settings`: more HUB_* variables of its environment."""
    port = free_port()
    env = {
        **os.environ,
        "HUB_DATABASE_URL": scratch.url,
        "HUB_ENVIRONMENT": "production",
        "HUB_SQLITE_SYNCHRONOUS": synchronous,
        "HUB_DATABASE_POOL_SIZE": str(pool_size),
        "HUB_SECRET_KEY": "bench-secret-key-0123456789abcdef",
        "HUB_VAR_DIR": str(scratch.folder / "var"),
        "HUB_ARTIFACT_DIR": str(scratch.folder / "artifacts"),
        **(settings or {}),
    }
    command = [
        *shlex.split(wrapper),
        sys.executable, "-m", "uvicorn", "hub.app:create_app_from_environment", "--factory",
        "--host", "127.0.0.1", "--port", str(port),
        "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip
    if workers > 1:
        command += ["--workers", str(workers)]
    log_path = scratch.folder / "server.log"
    with open(log_path, "wb") as log:
        # The scratch folder as working directory: no stray .env or var/ is picked up.
        # Its own process group: stopping it stops a wrapper's child and uvicorn's workers.
        process = subprocess.Popen(
            command,
            env=env,
            cwd=scratch.folder,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180  # building the schema is slow on a busy machine
        while True:
            if process.poll() is not None:
                raise SystemExit(f"the server exited:\n{log_path.read_text()[-3000:]}")
            try:
                if httpx.get(f"{base_url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("the server did not become ready within 180 s")
            time.sleep(0.2)
        yield Server(base_url, process.pid)
    finally:
        # SIGINT: uvicorn shuts down gracefully, and a profiler wrapper writes its output.
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        errors = [
            line for line in log_path.read_text(errors="replace").splitlines() if "ERROR" in line
        ]
        if errors:
            print(f"server logged {len(errors)} error line(s), first: {errors[0]}", flush=True)


# --- the agents ----------------------------------------------------------------------------


@dataclass
class Tally:
    """One agent's (or, merged, every agent's) figures inside the measured window."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: {op: [] for op in CYCLE})
    problems: Counter[str] = field(default_factory=Counter)
    exhausted: bool = False
    failure: str | None = None  # why an agent stopped early (transport error, GraphQL error)
    server_cpu: float = 0.0
    client_cpu: float = 0.0

    def merge(self, other: Tally) -> None:
        for op, values in other.latencies.items():
            self.latencies[op].extend(values)
        self.problems.update(other.problems)
        self.exhausted = self.exhausted or other.exhausted
        self.failure = self.failure or other.failure


def graphql(client: httpx.Client, document: str, name: str, data: dict[str, Any]) -> Any:
    response = client.post("/graphql", json={"query": document, "variables": {"input": data}})
    response.raise_for_status()
    body = response.json()
    if body.get("errors"):
        raise RuntimeError(f"{name}: {body['errors']}")
    return body["data"][name]


def start_sessions(base_url: str, tokens: list[str]) -> list[str]:
    session_tokens = []
    for index, token in enumerate(tokens):
        with httpx.Client(
            base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        ) as client:
            payload = graphql(
                client,
                START_SESSION,
                "startSession",
                {
                    "workstation": f"bench-ws-{index % 4}",
                    "harness": "bench",
                    "harnessInstance": uuid.uuid4().hex,
                },
            )
        if payload["__typename"] != "StartSessionPayload":
            raise SystemExit(f"startSession: {payload}")
        session_tokens.append(payload["token"])
    return session_tokens


def run_agent(
    base_url: str, token: str, project_id: str, window: tuple[float, float], tally: Tally
) -> None:
    """Claim cycles until the window closes (the cycle in flight then is finished)."""
    try:
        _claim_cycles(base_url, token, project_id, window, tally)
    except Exception as exc:  # reported after the run: a dead agent must not go unnoticed
        tally.failure = f"{type(exc).__name__}: {exc}"[:500]


def _claim_cycles(
    base_url: str, token: str, project_id: str, window: tuple[float, float], tally: Tally
) -> None:
    measure_from, stop_at = window
    with httpx.Client(
        base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=60
    ) as client:

        def timed(op: str, document: str, name: str, data: dict[str, Any]) -> Any:
            started = time.perf_counter()
            payload = graphql(client, document, name, data)
            ended = time.perf_counter()
            if payload["__typename"] in ("ClaimPayload", "AttemptPayload"):
                if started >= measure_from and ended <= stop_at:
                    tally.latencies[op].append(ended - started)
            else:
                tally.problems[f"{op}:{payload.get('code')}"] += 1
            return payload

        while time.perf_counter() < stop_at:
            claim = timed(
                "claim", CLAIM, "claimTask", {"projectId": project_id, "idempotencyKey": _key()}
            )
            if claim["__typename"] != "ClaimPayload":
                if claim.get("code") == "NO_ELIGIBLE_TASK":  # nothing left to claim
                    tally.exhausted = True
                    return
                continue
            attempt = {
                "attemptId": claim["attempt"]["id"],
                "generation": claim["attempt"]["generation"],
            }
            timed("renew", RENEW, "renewLease", {**attempt, "idempotencyKey": _key()})
            timed(
                "accept",
                ACCEPT,
                "recordAcceptance",
                {**attempt, "criteriaRevision": 1, "evidence": ["bench: checked"]},
            )
            timed(
                "submit",
                SUBMIT,
                "submitAttempt",
                {**attempt, "outcome": "DELIVERED", "result": "done", "idempotencyKey": _key()},
            )


def _key() -> str:
    return uuid.uuid4().hex


def run_agents(
    server: Server,
    tokens: list[str],
    project_id: str,
    *,
    warmup: float,
    seconds: float,
    start: float | None = None,
) -> Tally:
    """One agent a session token, each in its own thread; the window opens `warmup`
    seconds after `start` (by `time.perf_counter`; default now) and lasts `seconds`."""
    start = time.perf_counter() if start is None else start
    window = (start + warmup, start + warmup + seconds)
    tallies = [Tally() for _ in tokens]
    threads = [
        threading.Thread(target=run_agent, args=(server.url, token, project_id, window, tally))
        for token, tally in zip(tokens, tallies, strict=True)
    ]
    for thread in threads:
        thread.start()
    total = Tally()
    # CPU spent inside the window: the server's (all its processes) and this client's.
    time.sleep(max(0.0, window[0] - time.perf_counter()))
    server_cpu, client_cpu = server.cpu_seconds(), time.process_time()
    time.sleep(max(0.0, window[1] - time.perf_counter()))
    total.server_cpu = server.cpu_seconds() - server_cpu
    total.client_cpu = time.process_time() - client_cpu
    for thread in threads:
        thread.join()
    for tally in tallies:
        total.merge(tally)
    return total


# --- the floor: minimal transactions against the driver ----------------------------------


SQLITE_FLOOR_SCHEMA = """
CREATE TABLE floor_tasks (
  id TEXT PRIMARY KEY, project_id TEXT NOT NULL, state TEXT NOT NULL,
  priority INTEGER NOT NULL, generation INTEGER NOT NULL, current_attempt_id TEXT,
  blocked_count INTEGER NOT NULL, updated_at TEXT NOT NULL);
CREATE INDEX ix_floor_tasks_ready ON floor_tasks (project_id, priority DESC, id)
  WHERE state IN ('OPEN', 'REVISION_NEEDED') AND blocked_count = 0;
CREATE TABLE floor_attempts (
  id TEXT PRIMARY KEY, task_id TEXT NOT NULL REFERENCES floor_tasks (id),
  session_id TEXT NOT NULL, generation INTEGER NOT NULL, state TEXT NOT NULL,
  expires_at TEXT NOT NULL, started_at TEXT NOT NULL, acceptance TEXT, ended_at TEXT);
CREATE UNIQUE INDEX uq_floor_attempts_active ON floor_attempts (task_id) WHERE state = 'ACTIVE';
CREATE TABLE floor_events (
  id INTEGER PRIMARY KEY, stream TEXT NOT NULL, seq INTEGER, kind TEXT NOT NULL,
  subject_id TEXT NOT NULL, payload TEXT NOT NULL, occurred_at TEXT NOT NULL);
CREATE TABLE floor_streams (stream TEXT PRIMARY KEY, last_seq INTEGER NOT NULL);
INSERT INTO floor_streams VALUES ('floor', 0);
"""

POSTGRESQL_FLOOR_SCHEMA = """
CREATE TABLE floor_tasks (
  id VARCHAR(40) PRIMARY KEY, project_id VARCHAR(40) NOT NULL, state VARCHAR(24) NOT NULL,
  priority INTEGER NOT NULL, generation BIGINT NOT NULL, current_attempt_id VARCHAR(40),
  blocked_count INTEGER NOT NULL, updated_at TIMESTAMPTZ NOT NULL);
CREATE INDEX ix_floor_tasks_ready ON floor_tasks (project_id, priority DESC, id)
  WHERE state IN ('OPEN', 'REVISION_NEEDED') AND blocked_count = 0;
CREATE TABLE floor_attempts (
  id VARCHAR(40) PRIMARY KEY, task_id VARCHAR(40) NOT NULL REFERENCES floor_tasks (id),
  session_id VARCHAR(40) NOT NULL, generation BIGINT NOT NULL, state VARCHAR(16) NOT NULL,
  expires_at TIMESTAMPTZ NOT NULL, started_at TIMESTAMPTZ NOT NULL, acceptance JSONB,
  ended_at TIMESTAMPTZ);
CREATE UNIQUE INDEX uq_floor_attempts_active ON floor_attempts (task_id) WHERE state = 'ACTIVE';
CREATE TABLE floor_events (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, stream VARCHAR(64) NOT NULL,
  seq BIGINT, kind VARCHAR(64) NOT NULL, subject_id VARCHAR(64) NOT NULL,
  payload JSONB NOT NULL, occurred_at TIMESTAMPTZ NOT NULL);
CREATE TABLE floor_streams (stream VARCHAR(64) PRIMARY KEY, last_seq BIGINT NOT NULL);
INSERT INTO floor_streams VALUES ('floor', 0);
ALTER TABLE floor_events ADD COLUMN log_position bigint;
CREATE SEQUENCE floor_positions AS bigint;
CREATE INDEX ix_floor_events_unnumbered ON floor_events (stream, log_position, id)
  WHERE seq IS NULL;
CREATE FUNCTION floor_ticket() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE taken bigint;
BEGIN
  PERFORM pg_advisory_lock(5212146107383021567);
  BEGIN
    taken := nextval('floor_positions');
    PERFORM pg_advisory_xact_lock(5212146107383021568 + taken);
  EXCEPTION WHEN OTHERS OR query_canceled THEN
    PERFORM pg_advisory_unlock(5212146107383021567);
    RAISE;
  END;
  PERFORM pg_advisory_unlock(5212146107383021567);
  RETURN taken;
END $$;
CREATE FUNCTION floor_horizon() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE running bigint; top bigint;
BEGIN
  PERFORM pg_advisory_lock_shared(5212146107383021567);
  BEGIN
    SELECT min(((l.classid::bigint << 32) | l.objid::bigint) - 5212146107383021568) INTO running
    FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.objsubid = 1
      AND l.classid::bigint BETWEEN 1213547333 AND 1213547333 + 255
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database());
    SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END INTO top
    FROM floor_positions;
  EXCEPTION WHEN OTHERS OR query_canceled THEN
    PERFORM pg_advisory_unlock_shared(5212146107383021567);
    RAISE;
  END;
  PERFORM pg_advisory_unlock_shared(5212146107383021567);
  RETURN COALESCE(running, top + 1);
END $$;
CREATE FUNCTION floor_number_events(target text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE numbered bigint; below bigint;
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtextextended('floor:' || target, 0)) THEN
    RETURN 0;
  END IF;
  below := floor_horizon();
  WITH base AS (SELECT last_seq FROM floor_streams WHERE stream = target),
  ranked AS (
    SELECT id, row_number() OVER (ORDER BY log_position, id) AS rank FROM floor_events
    WHERE stream = target AND seq IS NULL AND log_position < below)
  UPDATE floor_events SET seq = base.last_seq + ranked.rank
  FROM base, ranked WHERE floor_events.id = ranked.id;
  GET DIAGNOSTICS numbered = ROW_COUNT;
  UPDATE floor_streams SET last_seq = last_seq + numbered
  WHERE stream = target AND numbered > 0;
  RETURN numbered;
END $$;
"""

READY_SQL = (
    "SELECT id, generation FROM floor_tasks WHERE project_id = {p}"
    " AND state IN ('OPEN', 'REVISION_NEEDED') AND blocked_count = 0"
    " ORDER BY priority DESC, id LIMIT 1"
)
CLAIM_TASK_SQL = (
    "UPDATE floor_tasks SET generation = {p}, state = 'IN_PROGRESS',"
    " current_attempt_id = {p}, updated_at = {p} WHERE id = {p}"
)
INSERT_ATTEMPT_SQL = (
    "INSERT INTO floor_attempts (id, task_id, session_id, generation, state, expires_at,"
    " started_at) VALUES ({p}, {p}, {p}, {p}, 'ACTIVE', {p}, {p})"
)
INSERT_EVENT_SQL = (
    "INSERT INTO floor_events (stream, seq, kind, subject_id, payload, occurred_at)"
    " VALUES ({p}, {p}, {p}, {p}, {p}, {p})"
)
# The service's PostgreSQL append (migration 0016): the stream's finished events
# numbered first under a try-lock, then the transaction's place taken (the last write
# before its commit), the event stored unnumbered at it. The floor's functions are the
# service's with their own lock range (same shape, same costs).
INSERT_UNNUMBERED_SQL = (
    "WITH numbered AS MATERIALIZED (SELECT floor_number_events({p}) AS count),"
    " placed AS MATERIALIZED (SELECT floor_ticket() AS place"
    " FROM (SELECT count(*) FROM numbered) AS done)"
    " INSERT INTO floor_events (stream, kind, subject_id, payload, occurred_at, log_position)"
    " SELECT {p}, {p}, {p}, {p}, {p}, placed.place FROM placed"
)
NEXT_SEQ_SQL = (
    "UPDATE floor_streams SET last_seq = last_seq + 1 WHERE stream = {p} RETURNING last_seq"
)
RENEW_SQL = (
    "UPDATE floor_attempts SET expires_at = {p}"
    " WHERE id = {p} AND generation = {p} AND state = 'ACTIVE'"
)
ACCEPT_SQL = "UPDATE floor_attempts SET acceptance = {p} WHERE id = {p} AND state = 'ACTIVE'"
END_ATTEMPT_SQL = (
    "UPDATE floor_attempts SET state = 'SUBMITTED', ended_at = {p} WHERE id = {p}"
    " AND state = 'ACTIVE'"
)
DONE_TASK_SQL = (
    "UPDATE floor_tasks SET state = 'DONE', current_attempt_id = NULL, updated_at = {p}"
    " WHERE id = {p}"
)
LOCK_TASK_SQL = "SELECT generation FROM floor_tasks WHERE id = {p} FOR UPDATE"


class FloorDriver:
    """One thread's connection and its four minimal transactions."""

    def __init__(
        self,
        scratch: Scratch,
        lock: threading.Lock,
        synchronous: str,
        counter: bool,
        after_commit: bool = False,
    ) -> None:
        self.sqlite = scratch.backend == "sqlite"
        self.lock = lock
        # Number events from one counter row per stream, as the service's event log does
        # on SQLite (and did on PostgreSQL before migration 0016).
        self.counter = counter
        # PostgreSQL: number them after commit, below the horizon, as it does now.
        self.after_commit = after_commit
        self.p = "?" if self.sqlite else "%s"
        self.connection: Any
        if self.sqlite:
            self.connection = sqlite3.connect(
                scratch.sqlite_path, isolation_level=None, check_same_thread=False, timeout=5
            )
            for pragma in ("journal_mode=WAL", "foreign_keys=ON", "busy_timeout=5000"):
                self.connection.execute(f"PRAGMA {pragma}")
            self.connection.execute(f"PRAGMA synchronous={synchronous}")
        else:
            self.connection = psycopg.connect(scratch.libpq_url)
        self.session_id = new_id("ses")

    def sql(self, template: str) -> str:
        return template.format(p=self.p)

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """SQLite: BEGIN IMMEDIATE under the in-process lock; PostgreSQL: a transaction."""
        if self.sqlite:
            with self.lock:
                self.connection.execute("BEGIN IMMEDIATE")
                try:
                    yield self.connection
                except BaseException:
                    self.connection.execute("ROLLBACK")
                    raise
                self.connection.execute("COMMIT")
        else:
            with self.connection.cursor() as cursor:
                try:
                    yield cursor
                except BaseException:
                    self.connection.rollback()
                    raise
                self.connection.commit()

    def event(self, db: Any, kind: str, task_id: str, attempt_id: str, now: datetime) -> None:
        payload = json.dumps({"attempt": attempt_id, "session": self.session_id})
        if self.after_commit:
            db.execute(
                self.sql(INSERT_UNNUMBERED_SQL),
                ("floor", "floor", kind, task_id, payload, self.ts(now)),
            )
            return
        seq = db.execute(self.sql(NEXT_SEQ_SQL), ("floor",)).fetchone()[0] if self.counter else None
        db.execute(self.sql(INSERT_EVENT_SQL), ("floor", seq, kind, task_id, payload, self.ts(now)))

    def ts(self, value: datetime) -> Any:
        return value.isoformat() if self.sqlite else value

    def claim(self) -> tuple[str, str, int] | None:
        ready = self.sql(READY_SQL) + ("" if self.sqlite else " FOR UPDATE SKIP LOCKED")
        with self.transaction() as db:
            row = db.execute(ready, ("floor",)).fetchone()
            if row is None:
                return None
            task_id, generation = row[0], row[1] + 1
            now = datetime.now(UTC)
            attempt_id = new_id("att")
            db.execute(self.sql(CLAIM_TASK_SQL), (generation, attempt_id, self.ts(now), task_id))
            db.execute(
                self.sql(INSERT_ATTEMPT_SQL),
                (attempt_id, task_id, self.session_id, generation, self.ts(now + LEASE),
                 self.ts(now)),
            )  # fmt: skip
            self.event(db, "attempt.claimed", task_id, attempt_id, now)
        return task_id, attempt_id, generation

    def _lock(self, db: Any, task_id: str) -> None:
        if not self.sqlite:
            db.execute(self.sql(LOCK_TASK_SQL), (task_id,))

    def renew(self, task_id: str, attempt_id: str, generation: int) -> None:
        with self.transaction() as db:
            self._lock(db, task_id)
            now = datetime.now(UTC)
            db.execute(self.sql(RENEW_SQL), (self.ts(now + LEASE), attempt_id, generation))
            self.event(db, "lease.renewed", task_id, attempt_id, now)

    def accept(self, task_id: str, attempt_id: str) -> None:
        with self.transaction() as db:
            self._lock(db, task_id)
            now = datetime.now(UTC)
            db.execute(self.sql(ACCEPT_SQL), (json.dumps({"criteria_revision": 1}), attempt_id))
            self.event(db, "acceptance.recorded", task_id, attempt_id, now)

    def submit(self, task_id: str, attempt_id: str) -> None:
        with self.transaction() as db:
            self._lock(db, task_id)
            now = datetime.now(UTC)
            db.execute(self.sql(END_ATTEMPT_SQL), (self.ts(now), attempt_id))
            db.execute(self.sql(DONE_TASK_SQL), (self.ts(now), task_id))
            self.event(db, "attempt.submitted", task_id, attempt_id, now)

    def close(self) -> None:
        self.connection.close()


def create_floor(scratch: Scratch, tasks: int) -> None:
    now = datetime.now(UTC)
    rows = [(new_id("tsk"), "floor", "OPEN", 0, 0, None, 0) for _ in range(tasks)]
    if scratch.backend == "sqlite":
        with sqlite3.connect(scratch.sqlite_path, isolation_level=None) as connection:
            connection.executescript(SQLITE_FLOOR_SCHEMA)
            connection.execute("BEGIN")
            connection.executemany(
                "INSERT INTO floor_tasks VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(*row, now.isoformat()) for row in rows],
            )
            connection.execute("COMMIT")
        return
    with psycopg.connect(scratch.libpq_url) as connection:
        connection.execute(POSTGRESQL_FLOOR_SCHEMA)
        with connection.cursor().copy(
            "COPY floor_tasks (id, project_id, state, priority, generation,"
            " current_attempt_id, blocked_count, updated_at) FROM STDIN"
        ) as copy:
            for row in rows:
                copy.write_row((*row, now))
        connection.execute("ANALYZE floor_tasks")


def reset_floor(scratch: Scratch) -> None:
    """Every floor task OPEN again, attempts and events gone: the next floor starts alike."""
    statements = [
        "DELETE FROM floor_events",
        "UPDATE floor_streams SET last_seq = 0",
        "DELETE FROM floor_attempts",
        "UPDATE floor_tasks SET state = 'OPEN', generation = 0, current_attempt_id = NULL",
    ]
    if scratch.backend == "sqlite":
        with sqlite3.connect(scratch.sqlite_path, isolation_level=None) as connection:
            connection.execute("BEGIN")
            for statement in statements:
                connection.execute(statement)
            connection.execute("COMMIT")
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return
    with psycopg.connect(scratch.libpq_url) as connection:
        for statement in statements:
            connection.execute(statement)
        connection.commit()
        connection.autocommit = True
        connection.execute("VACUUM ANALYZE floor_tasks")


@dataclass
class FloorFigures:
    claims_per_s: float
    latencies: list[float]
    exhausted: bool


def run_floor(
    scratch: Scratch,
    *,
    threads: int,
    seconds: float,
    synchronous: str,
    cycle: bool,
    counter: bool = False,
    after_commit: bool = False,
) -> FloorFigures:
    lock = threading.Lock()
    drivers = [
        FloorDriver(scratch, lock, synchronous, counter, after_commit) for _ in range(threads)
    ]
    latencies: list[list[float]] = [[] for _ in drivers]
    exhausted = threading.Event()
    start = time.perf_counter()
    stop_at = start + seconds

    def work(driver: FloorDriver, mine: list[float]) -> None:
        while time.perf_counter() < stop_at:
            started = time.perf_counter()
            claimed = driver.claim()
            ended = time.perf_counter()
            if claimed is None:
                exhausted.set()
                return
            if ended <= stop_at:
                mine.append(ended - started)
            if cycle:
                task_id, attempt_id, generation = claimed
                driver.renew(task_id, attempt_id, generation)
                driver.accept(task_id, attempt_id)
                driver.submit(task_id, attempt_id)

    workers = [
        threading.Thread(target=work, args=(driver, mine))
        for driver, mine in zip(drivers, latencies, strict=True)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    for driver in drivers:
        driver.close()
    merged = [value for mine in latencies for value in mine]
    return FloorFigures(len(merged) / seconds, merged, exhausted.is_set())


# --- checking the outcome -------------------------------------------------------------------


DOUBLE_OWNED_SQL = """
SELECT
  (SELECT count(*) FROM (SELECT task_id FROM attempts WHERE state = 'ACTIVE'
                         GROUP BY task_id HAVING count(*) > 1) AS twice)
+ (SELECT count(*) FROM tasks t WHERE t.state = 'IN_PROGRESS' AND NOT EXISTS (
     SELECT 1 FROM attempts a
     WHERE a.id = t.current_attempt_id AND a.task_id = t.id AND a.state = 'ACTIVE'))
+ (SELECT count(*) FROM attempts a JOIN tasks t ON t.id = a.task_id
   WHERE a.state = 'ACTIVE' AND (t.current_attempt_id IS NULL OR t.current_attempt_id <> a.id))
"""

CONSISTENCY_SQL = """
SELECT
  (SELECT count(*) FROM attempts),
  (SELECT count(*) FROM tasks WHERE state = 'DONE'),
  (SELECT count(*) FROM submissions WHERE outcome = 'DELIVERED'),
  (SELECT count(*) FROM tasks t WHERE t.generation <> (
     SELECT count(*) FROM attempts a WHERE a.task_id = t.id))
"""


def check(runtime: Runtime) -> tuple[int, dict[str, int]]:
    with runtime.database.engine.connect() as connection:
        double_owned = int(connection.execute(text(DOUBLE_OWNED_SQL)).scalar_one())
        attempts, done, delivered, bad_generation = connection.execute(text(CONSISTENCY_SQL)).one()
    return double_owned, {
        "attempts": int(attempts),
        "done_tasks": int(done),
        "delivered_submissions": int(delivered),
        "generation_mismatches": int(bad_generation),
    }


# --- PostgreSQL's locks during the run ------------------------------------------------------


LOCKS_SQL = """
SELECT
  (SELECT count(DISTINCT l.pid) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
   WHERE NOT l.granted AND a.datname = current_database()),
  (SELECT count(DISTINCT pid) FROM pg_locks
   WHERE locktype = 'tuple' AND relation = 'event_streams'::regclass
     AND database = (SELECT oid FROM pg_database WHERE datname = current_database())),
  {row_locks},
  (SELECT coalesce(json_object_agg(kind, waiters), '{{}}') FROM (
     SELECT l.locktype
            || CASE WHEN l.locktype = 'advisory' AND l.classid::bigint = {ticket_class}
                    THEN ':event-ticket'
                    WHEN l.locktype = 'advisory' THEN ':other'
                    WHEN l.relation IS NOT NULL THEN ':' || l.relation::regclass::text
                    ELSE '' END AS kind,
            count(DISTINCT l.pid) AS waiters
     FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE NOT l.granted AND a.datname = current_database()
     GROUP BY 1) AS waits)
"""
# The event log's ticket lock (migration 0016): its key's high 32 bits.
EVENT_TICKET_CLASS = 0x48554244


class LockSampler:
    """From a connection of its own, every `period` seconds inside `window` (by
    `time.perf_counter`): the backends of this database waiting on any lock, the backends
    queued on an `event_streams` row (the per-project event counter; they hold or await
    its tuple lock), and, where the pgrowlocks extension is available, the rows of
    `event_streams` locked by a transaction still open (seen with or without a queue:
    whether a per-project row is held to commit)."""

    def __init__(self, scratch: Scratch, window: tuple[float, float], period: float = 0.05):
        self.scratch = scratch
        self.window = window
        self.period = period
        self.samples: list[tuple[int, int, int]] = []
        # What backends waited on: the most seen at once, by lock kind.
        self.waits_by_kind: dict[str, int] = {}
        self.row_locks_readable = False
        self.failure: str | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> LockSampler:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.thread.join()

    def _run(self) -> None:
        try:
            with psycopg.connect(self.scratch.libpq_url, autocommit=True) as connection:
                try:
                    connection.execute("CREATE EXTENSION IF NOT EXISTS pgrowlocks")
                    self.row_locks_readable = True
                except psycopg.Error:
                    pass  # not installed on this server: queues only
                query = LOCKS_SQL.format(
                    row_locks="(SELECT count(*) FROM pgrowlocks('event_streams'))"
                    if self.row_locks_readable
                    else "0",
                    ticket_class=EVENT_TICKET_CLASS,
                )
                tick = self.window[0]
                while tick < self.window[1]:
                    time.sleep(max(0.0, tick - time.perf_counter()))
                    waiting, queued, locked, kinds = connection.execute(query).fetchone()
                    self.samples.append((int(waiting), int(queued), int(locked)))
                    for kind, waiters in (kinds or {}).items():
                        self.waits_by_kind[kind] = max(self.waits_by_kind.get(kind, 0), waiters)
                    tick = max(tick + self.period, time.perf_counter())
        except Exception as exc:  # reported, not fatal: the claims figures stand alone
            self.failure = f"{type(exc).__name__}: {exc}"[:300]

    def figures(self) -> dict[str, Any]:
        seen = sum(1 for _, queued, locked in self.samples if queued or locked)
        return {
            "pg_lock_samples": len(self.samples),
            "pg_lock_waits_max": max((w for w, _, _ in self.samples), default=0),
            "event_streams_row_locks_seen": seen,
            "event_streams_locked_share": round(seen / len(self.samples), 3)
            if self.samples
            else None,
            "event_streams_waiters_max": max((q for _, q, _ in self.samples), default=0),
            "event_streams_row_locks_readable": self.row_locks_readable,
            "pg_lock_waits_max_by_kind": dict(sorted(self.waits_by_kind.items())),
        }


# --- the run --------------------------------------------------------------------------------

MUTATIONS_PER_CYCLE = len(CYCLE)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--backend",
        choices=("sqlite", "postgresql", "both"),
        default="sqlite",
        help="both: SQLite, then PostgreSQL, back to back",
    )
    parser.add_argument("--agents", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0, help="measured window")
    parser.add_argument("--warmup", type=float, default=2.0, help="unmeasured seconds first")
    parser.add_argument("--floor-seconds", type=float, default=5.0, help="each floor's window")
    parser.add_argument(
        "--stack-seconds",
        type=float,
        default=10.0,
        help="the stack floor's window, half before and half after the hub run",
    )
    parser.add_argument("--tasks", type=int, default=0, help="default: 20000 (SQLite), 60000")
    parser.add_argument(
        "--database-url", help="SQLite file, or a hub_bench* PostgreSQL db (both: PostgreSQL's)"
    )
    parser.add_argument(
        "--workers", type=int, default=1, help="server processes (PostgreSQL), stack floor's too"
    )
    parser.add_argument("--pool-size", type=int, default=0, help="HUB_DATABASE_POOL_SIZE")
    parser.add_argument("--sqlite-synchronous", choices=("FULL", "NORMAL"), default="FULL")
    parser.add_argument(
        "--server-wrapper",
        default="",
        help="command the server runs under, e.g. 'py-spy record -o claims.svg --'",
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args(argv)
    if args.backend == "sqlite" and args.workers != 1:
        parser.error("SQLite runs as one server process")
    if args.backend != "both":
        print(json.dumps(run(args, args.backend, args.database_url)), flush=True)
        return
    sqlite = run(args, "sqlite", None)
    postgresql = run(args, "postgresql", args.database_url)
    both = {
        "backend": "both",
        "pg_over_sqlite": round(postgresql["claims_per_s"] / sqlite["claims_per_s"], 3)
        if sqlite["claims_per_s"]
        else None,
        "sqlite": sqlite,
        "postgresql": postgresql,
    }
    print(json.dumps(both), flush=True)


def run(args: argparse.Namespace, backend: str, database_url: str | None) -> dict[str, Any]:
    """One backend's run: the stack floor's first half, the hub run, the stack floor's
    second half, then the driver floors; its figures."""
    workers = args.workers if backend == "postgresql" else 1
    tasks = args.tasks or (20_000 if backend == "sqlite" else 60_000)
    # Within PostgreSQL's max_connections (shared with other users of the server).
    pool_size = args.pool_size or max(4, min(20, 40 // workers))
    sampler: LockSampler | None = None

    with scratch_database(backend, database_url, keep=args.keep) as scratch:
        runtime = scratch.runtime(sqlite_synchronous=args.sqlite_synchronous)
        started = time.perf_counter()
        fixture = prepare(runtime, args.agents, tasks)
        create_floor(scratch, tasks)
        _say(
            f"{backend}: {args.agents} agents, {tasks} tasks (+ {tasks} floor tasks) "
            f"ready in {time.perf_counter() - started:.1f} s; scratch {scratch.folder}"
        )

        # The stack floor brackets the hub run, half before and half after, with the same
        # number of client threads and server processes: the two share the machine's
        # load as closely as running one after the other allows.
        with floor_served(workers) as stack:
            stack_runs = [drive(stack, args.agents, args.stack_seconds / 2)]
            with served(
                scratch,
                workers=workers,
                synchronous=args.sqlite_synchronous,
                pool_size=pool_size,
                wrapper=args.server_wrapper,
            ) as server:
                sessions = start_sessions(server.url, fixture.agent_tokens)
                start = time.perf_counter()
                window = (start + args.warmup, start + args.warmup + args.seconds)
                if backend == "postgresql":
                    sampler = LockSampler(scratch, window)
                with sampler or nullcontext():
                    tally = run_agents(
                        server,
                        sessions,
                        fixture.project_id,
                        warmup=args.warmup,
                        seconds=args.seconds,
                        start=start,
                    )
            stack_runs.append(drive(stack, args.agents, args.stack_seconds / 2))
        stack_floor = summarize(stack_runs)
        double_owned, consistency = check(runtime)
        runtime.close()

        floor = run_floor(
            scratch,
            threads=args.agents,
            seconds=args.floor_seconds,
            synchronous=args.sqlite_synchronous,
            cycle=False,
        )
        reset_floor(scratch)
        floor_cycle = run_floor(
            scratch,
            threads=args.agents,
            seconds=args.floor_seconds,
            synchronous=args.sqlite_synchronous,
            cycle=True,
        )
        reset_floor(scratch)
        floor_counted = run_floor(
            scratch,
            threads=args.agents,
            seconds=args.floor_seconds,
            synchronous=args.sqlite_synchronous,
            cycle=True,
            counter=True,
        )

    claims = tally.latencies["claim"]
    claims_per_s = len(claims) / args.seconds
    for op in CYCLE:
        values = tally.latencies[op]
        _say(
            f"service {op:6}: n={len(values):6}  p50 {ms(percentile(values, 50)):8.2f} ms"
            f"  p99 {ms(percentile(values, 99)):8.2f} ms"
        )
    _say(
        f"stack floor (no-op mutation, {args.agents} clients, {workers} process(es)): "
        f"{stack_floor['mutations_per_s']} mutations/s, p50 {stack_floor['p50_ms']} ms, "
        f"p99 {stack_floor['p99_ms']} ms, server CPU "
        f"{stack_floor['server_cpu_ms_per_mutation']} ms per mutation"
    )
    floors = {
        "claim transactions only": floor,
        "4-transaction cycle": floor_cycle,
        "4-transaction cycle + per-stream event counter row": floor_counted,
    }
    for label, figures in floors.items():
        _say(
            f"floor ({label}): {figures.claims_per_s:.1f} claims/s, claim p50 "
            f"{ms(percentile(figures.latencies, 50))} ms, "
            f"p99 {ms(percentile(figures.latencies, 99))} ms"
        )
    per_claim = max(1, len(claims))
    _say(
        f"CPU per claim (one cycle) in the window: server {ms(tally.server_cpu / per_claim)} ms,"
        f" bench client {ms(tally.client_cpu / per_claim)} ms;"
        f" CPU calibration (1e6-step Python loop): {ms(calibration())} ms"
    )
    if tally.problems:
        _say(f"problems returned: {dict(tally.problems)}")
    if tally.failure:
        _say(f"WARNING: an agent stopped early: {tally.failure}")
    if tally.exhausted or any(figures.exhausted for figures in floors.values()):
        _say("WARNING: tasks ran out during the run; raise --tasks")
    if sampler is not None and sampler.failure:
        _say(f"WARNING: the pg_locks sampler stopped: {sampler.failure}")
    _say(f"after the run: {consistency}")

    def ratio(floor_rate: float) -> float | None:
        return round(claims_per_s / floor_rate, 3) if floor_rate else None

    p99_ms = ms(percentile(claims, 99))
    stack_cycles_per_s = stack_floor["mutations_per_s"] / MUTATIONS_PER_CYCLE
    return {
        "backend": backend,
        "agents": args.agents,
        "workers": workers,
        "sqlite_synchronous": args.sqlite_synchronous if backend == "sqlite" else None,
        "seconds": args.seconds,
        "claims": len(claims),
        "claims_per_s": round(claims_per_s, 1),
        "p50_ms": ms(percentile(claims, 50)),
        "p99_ms": p99_ms,
        "floor_claims_per_s": round(floor.claims_per_s, 1),
        "floor_p50_ms": ms(percentile(floor.latencies, 50)),
        "floor_p99_ms": ms(percentile(floor.latencies, 99)),
        "ratio": ratio(floor.claims_per_s),
        "floor_cycle_claims_per_s": round(floor_cycle.claims_per_s, 1),
        "cycle_ratio": ratio(floor_cycle.claims_per_s),
        "floor_counted_cycle_claims_per_s": round(floor_counted.claims_per_s, 1),
        "stack_mutations_per_s": stack_floor["mutations_per_s"],
        "stack_p50_ms": stack_floor["p50_ms"],
        "stack_p99_ms": stack_floor["p99_ms"],
        "mutations_per_cycle": MUTATIONS_PER_CYCLE,
        "stack_ratio": ratio(stack_cycles_per_s),
        "p99_ratio": round(p99_ms / stack_floor["p99_ms"], 2) if stack_floor["p99_ms"] else None,
        "server_cpu_ms_per_claim": ms(tally.server_cpu / per_claim),
        "stack_server_cpu_ms_per_mutation": stack_floor["server_cpu_ms_per_mutation"],
        **(sampler.figures() if sampler is not None else {}),
        "double_owned": double_owned,
        "load_1min": round(os.getloadavg()[0], 1),
    }


def calibration() -> float:
    """CPU seconds for a fixed pure-Python loop: how fast this machine is right now."""
    started = time.process_time()
    total = 0
    for step in range(1_000_000):
        total += step
    return time.process_time() - started


def _say(message: str) -> None:
    print(message, flush=True)


if __name__ == "__main__":
    main()
