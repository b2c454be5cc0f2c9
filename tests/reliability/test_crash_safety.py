"""Crash safety: real `hub serve` processes killed with SIGKILL under keyed writes
(docs/ops/crash-safety.md).

Agents, each its own principal and session, run the agent's cycle over HTTP: create an
implementation task, claim it, register its worktree, two checkpoints, submit, then
claim the next review of another agent's submission and approve it. Meanwhile a killer
sends SIGKILL to a server process at random points of the write stream (seeded; the seed
is printed, `HUB_CRASH_SEED` replays it) and restarts it on the same database and port.
On SQLite the one server is killed. On PostgreSQL two servers of two workers each run;
a kill takes one whole server (its agents fail over to the other) or one worker (the
other keeps serving the port; uvicorn's supervisor replaces it).

Every write goes through a ledger (tests/support/ledger.py): an answer is an
acknowledgement; no answer (the connection cut or refused, a 5xx) and the write is sent
again with the same key and input until answered. Afterwards the database must hold
every acknowledged write with the acknowledged values, none twice; every task at most
one current attempt; every project's event log dense, every event readable, one event
per write applied.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest

from hub.events import service as events
from hub.maintenance.check import check
from hub.runtime import Runtime
from hub.storage.database import Database
from tests.conftest import issue_principal, open_session
from tests.support import work
from tests.support.client import Api
from tests.support.ledger import MASKED, Ledger, LedgerClient, Write
from tests.support.processes import (
    BOOT_SECONDS,
    ServerProcess,
    server_environment,
    start_server,
    stop_server,
    wait_until,
)
from tests.support.sql import fetch_all

if TYPE_CHECKING:  # imported for types only: pytest would try to collect `TestDatabase`
    from tests.conftest import TestDatabase

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

SEED = int(os.environ.get("HUB_CRASH_SEED") or random.SystemRandom().randrange(1 << 32))
KILLS = 6  # per database and run
AGENTS = 4
PROJECTS = 2
CHECKPOINTS = 2  # per implementation attempt
# A kill comes after this many more answered writes (a random number in the range), and
# then a pause of up to KILL_JITTER seconds: random points of the write stream, whatever
# the machine's speed.
KILL_AFTER = (5, 80)
KILL_JITTER = 0.05
AFTER_LAST_KILL = 100  # answered writes after the last restart before the agents stop
MAX_CYCLES = 2000  # per agent: a backstop only
# An agent's pause between cycles (seconds, at random in the range): agents think, and
# the servers booting after a kill share the machine with them.
THINK = (0.0, 0.25)
AT_RISK = 0.25  # seconds: answers this close before a kill are the ones a crash could lose


# What a kill takes: a whole server (every process of it), or one of its workers.
Kill = Literal["server", "worker"]


@dataclass(frozen=True)
class Plan:
    servers: int
    workers: int  # per server
    kills: tuple[Kill, ...]  # shuffled per run


# SQLite runs one server process; PostgreSQL two of two workers each, one of them killed
# whole or one of its workers killed while the rest keep serving.
SERVER: list[Kill] = ["server"]
SERVER_OR_WORKER: list[Kill] = ["server", "worker"]
PLANS = {
    "sqlite": Plan(servers=1, workers=1, kills=tuple(SERVER * KILLS)),
    "postgresql": Plan(servers=2, workers=2, kills=tuple(SERVER_OR_WORKER * (KILLS // 2))),
}
WAIT = 180.0
STARTED = "Application startup complete."  # uvicorn logs it once per worker started

SHA_BASE, SHA_CANDIDATE = "a" * 40, "b" * 40
CREATED = "... on CreateTaskPayload { replay task { id title } }"
CLAIMED = (
    "... on ClaimPayload { replay task { id kind subjectSubmissionId } attempt { id generation } }"
)
ATTEMPT = (
    "... on AttemptPayload { replay attempt { id generation state }"
    " checkpoint { id summary } submission { id } worktree { id } }"
)
REVIEWED = "... on ReviewPayload { replay review { id decision attemptId } }"


# --- the servers and the killer -------------------------------------------------------------


@dataclass
class Outage:
    kind: Kill
    server: str
    killed_at: float
    back_at: float = 0.0


@dataclass
class Served:
    process: ServerProcess
    startups: int  # the `STARTED` lines its log shows once every worker it started is up


def live_children(parent: int) -> set[int]:
    """The live worker processes uvicorn's supervisor `parent` runs (spawned by
    multiprocessing; its resource tracker, also a child, is not one)."""
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue  # ended meanwhile
        if int(fields[1]) == parent and fields[0] != "Z" and b"spawn_main" in cmdline:
            found.add(int(entry.name))
    return found


class Fleet:
    """The test's `hub serve --workers N` processes, each restarted on its own port after
    it was killed; a killed worker is replaced by uvicorn's supervisor."""

    def __init__(self, database_url: str, workdir: Path, count: int, workers: int) -> None:
        self.env = server_environment(database_url, workdir, poll_seconds=1.0)
        # The durable default, whatever the developer's environment says: what this test
        # proves on SQLite holds for it (docs/ops/crash-safety.md).
        self.env["HUB_SQLITE_SYNCHRONOUS"] = "FULL"
        self.workdir, self.workers, self.starts = workdir, workers, 0
        self.servers = [self._start(index) for index in range(count)]
        for served in self.servers:
            self._await(served)

    @property
    def urls(self) -> list[str]:
        return [served.process.base_url for served in self.servers]

    def kill_server(self, index: int) -> None:
        """SIGKILL to every process of the server at once (its process group): with one
        worker that is uvicorn's own process, the only one; with several, their
        supervisor and every worker, as when the machine or container dies."""
        process = self.servers[index].process.process
        cmdline = Path(f"/proc/{process.pid}/cmdline").read_bytes().split(b"\0")
        assert b"serve" in cmdline, cmdline  # the server, not some wrapper
        os.killpg(process.pid, signal.SIGKILL)  # started in a session, and group, of its own
        process.wait(timeout=30)
        assert process.returncode == -signal.SIGKILL

    def restart(self, index: int) -> None:
        port = int(self.urls[index].rsplit(":", 1)[1])
        self.servers[index] = self._start(index, port)
        self._await(self.servers[index])

    def kill_worker(self, index: int, rng: random.Random) -> None:
        """SIGKILL to one worker process of the server; the others keep serving its port
        while the supervisor starts a replacement, which this waits for."""
        served = self.servers[index]
        supervisor = served.process.process.pid
        workers = live_children(supervisor)
        assert len(workers) == self.workers, workers
        victim = rng.choice(sorted(workers))
        os.kill(victim, signal.SIGKILL)
        served.startups += 1

        def replaced() -> bool:
            alive = live_children(supervisor)
            return victim not in alive and len(alive) == self.workers and self._up(served)

        assert wait_until(replaced, BOOT_SECONDS), served.process.log()

    def _start(self, index: int, port: int | None = None) -> Served:
        self.starts += 1
        process = start_server(
            self.env, self.workdir, name=f"{index}-{self.starts}", port=port, workers=self.workers
        )
        return Served(process, startups=self.workers)

    def _up(self, served: Served) -> bool:
        return served.process.log().count(STARTED) >= served.startups and served.process.ready()

    def _await(self, served: Served) -> None:
        process = served.process
        up = wait_until(
            lambda: self._up(served) or process.process.poll() is not None, BOOT_SECONDS
        )
        assert up and process.process.poll() is None, process.log()

    def stop(self) -> None:
        for served in self.servers:
            stop_server(served.process)


@contextmanager
def fleet_of(database_url: str, workdir: Path, count: int, workers: int) -> Iterator[Fleet]:
    fleet = Fleet(database_url, workdir, count, workers)
    try:
        yield fleet
    finally:
        fleet.stop()


# --- the agents -----------------------------------------------------------------------------


@dataclass
class Agent:
    name: str
    principal_id: str
    session_id: str
    project_id: str
    client: LedgerClient
    cycles: int = 0


@dataclass
class Setting:
    projects: list[str]
    repositories: dict[str, str]  # project id -> repository id
    agents: list[Agent]


def answered(write: Write) -> dict[str, Any]:
    assert write.answer is not None, write  # every write is answered in the end
    return write.answer


def expect(write: Write, answer: dict[str, Any], typename: str) -> dict[str, Any]:
    assert answer["__typename"] == typename, (write, answer)
    return answer


def cycle(agent: Agent, repository: str, number: int) -> None:
    """One agent's keyed cycle: create, claim, worktree, checkpoints, submit, then review
    another agent's submission if one is waiting."""
    write = agent.client.write
    title = f"{agent.name} cycle {number}"
    created = expect(
        *write(
            "createTask",
            {
                "projectId": agent.project_id,
                "kind": "IMPLEMENTATION",
                "title": title,
                "acceptanceCriteria": ["it works"],
                "idempotencyKey": work.key(),
            },
            CREATED,
        ),
        "CreateTaskPayload",
    )
    task_id = created["task"]["id"]
    claimed = expect(
        *write(
            "claimTask",
            {"projectId": agent.project_id, "taskId": task_id, "idempotencyKey": work.key()},
            CLAIMED,
        ),
        "ClaimPayload",
    )
    held = {"attemptId": claimed["attempt"]["id"], "generation": claimed["attempt"]["generation"]}
    # Takes no key: a second registration of the same worktree for the same task updates
    # its one row.
    expect(
        *write(
            "registerWorktree",
            {
                **held,
                "repositoryId": repository,
                "worktreeId": f"wt-{task_id}",
                "path": f"/src/{task_id}",
                "branch": f"hub/{task_id[-6:]}",
                "baseRevision": SHA_BASE,
                "workstation": agent.name,
            },
            ATTEMPT,
        ),
        "AttemptPayload",
    )
    for step in range(CHECKPOINTS):
        expect(
            *write(
                "recordCheckpoint",
                {
                    **held,
                    "summary": f"{title} step {step}",
                    "revision": SHA_CANDIDATE,
                    "published": True,
                    "idempotencyKey": work.key(),
                },
                ATTEMPT,
            ),
            "AttemptPayload",
        )
    expect(
        *write(
            "submitAttempt",
            {
                **held,
                "outcome": "DELIVERED",
                "result": f"{title} done",
                "candidateRevision": SHA_CANDIDATE,
                "handoff": "ready",
                "idempotencyKey": work.key(),
            },
            ATTEMPT,
        ),
        "AttemptPayload",
    )
    claim, review = write(
        "claimTask",
        {"projectId": agent.project_id, "kinds": ["REVIEW"], "idempotencyKey": work.key()},
        CLAIMED,
    )
    if review.get("code") == "NO_ELIGIBLE_TASK":
        return  # every waiting submission is the agent's own, or already taken
    expect(claim, review, "ClaimPayload")
    expect(
        *write(
            "submitReview",
            {
                "attemptId": review["attempt"]["id"],
                "generation": review["attempt"]["generation"],
                "submissionId": review["task"]["subjectSubmissionId"],
                "decision": "APPROVE",
                "summary": f"{agent.name} read it",
                "evidence": ["ran the tests"],
                "idempotencyKey": work.key(),
            },
            REVIEWED,
        ),
        "ReviewPayload",
    )


def set_up(runtime: Runtime, urls: list[str], ledger: Ledger) -> Setting:
    """Projects (agent review, one approval), a repository each, and the agents with
    their sessions, spread over the projects and the servers."""
    _, token = issue_principal(runtime, "operator", kind="human", operator=True)
    operator = Api(urls[0], token)
    projects: list[str] = []
    repositories: dict[str, str] = {}
    try:
        for index in range(PROJECTS):
            project = work.create_project(operator, name=f"Crash {index}")
            work.set_policy(operator, project, reviewPolicy="AGENT", requiredAgentApprovals=1)
            repositories[project] = work.add_repository(operator, project)
            projects.append(project)
    finally:
        operator.close()
    agents: list[Agent] = []
    for index in range(AGENTS):
        name = f"agent-{index}"
        home = index % len(urls)
        principal_id, token = issue_principal(runtime, name)
        principal = Api(urls[home], token)
        try:
            session_id, session_token = open_session(principal, workstation=name)
        finally:
            principal.close()
        client = LedgerClient(name, session_token, urls, home, ledger)
        agents.append(Agent(name, principal_id, session_id, projects[index % PROJECTS], client))
    return Setting(projects, repositories, agents)


# --- the run --------------------------------------------------------------------------------


@dataclass
class Run:
    seed: int
    outages: list[Outage] = field(default_factory=list)


def crash_loop(
    fleet: Fleet, setting: Setting, ledger: Ledger, rng: random.Random, kinds: list[Kill]
) -> Run:
    """Agents cycling until the killer, after its kills and some work past the last
    restart, tells them to stop."""
    stop = threading.Event()
    run = Run(SEED)

    def play(agent: Agent, thinking: random.Random) -> None:
        repository = setting.repositories[agent.project_id]
        while not stop.is_set() and agent.cycles < MAX_CYCLES:
            cycle(agent, repository, agent.cycles)
            agent.cycles += 1
            stop.wait(thinking.uniform(*THINK))

    def progress(more: int, players: list[Future[None]]) -> None:
        """Until `more` further writes are answered; an agent's failure ends the run."""
        target = ledger.acknowledged() + more
        deadline = time.monotonic() + WAIT
        while not ledger.wait_for(target, timeout=0.2):
            for player in players:
                if player.done():
                    player.result()  # raises the agent's failure
                    raise AssertionError("an agent stopped early")
            assert time.monotonic() < deadline, f"no progress: {ledger.acknowledged()}/{target}"

    with ThreadPoolExecutor(len(setting.agents)) as pool:
        players = [
            pool.submit(play, agent, random.Random(rng.random())) for agent in setting.agents
        ]
        try:
            for kind in kinds:
                progress(rng.randint(*KILL_AFTER), players)
                time.sleep(rng.uniform(0, KILL_JITTER))
                victim = rng.randrange(len(fleet.servers))
                outage = Outage(kind, fleet.urls[victim], time.monotonic())
                if kind == "worker":
                    fleet.kill_worker(victim, rng)
                else:
                    fleet.kill_server(victim)
                    fleet.restart(victim)
                outage.back_at = time.monotonic()
                run.outages.append(outage)
            progress(AFTER_LAST_KILL, players)
        finally:
            stop.set()
        for player in players:
            player.result(timeout=WAIT)
    return run


# --- the checks -----------------------------------------------------------------------------


@dataclass
class Findings:
    lost: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)  # invariants: current attempts, the log


def in_projects(
    database: Database, table: str, columns: str, projects: list[str]
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for project in projects:
        rows += fetch_all(
            database, f"SELECT {columns} FROM {table} WHERE project_id = :p", p=project
        )
    return rows


def check_writes(database: Database, setting: Setting, ledger: Ledger, found: Findings) -> None:
    """Every acknowledged write is stored with the acknowledged values, and only once."""
    projects = setting.projects
    sessions = {agent.name: agent.session_id for agent in setting.agents}
    principals = {agent.name: agent.principal_id for agent in setting.agents}
    tasks = {
        r["id"]: r for r in in_projects(database, "tasks", "id, kind, title, created_by", projects)
    }
    attempts = {
        r["id"]: r
        for r in in_projects(
            database, "attempts", "id, task_id, session_id, generation, state", projects
        )
    }
    checkpoints = {
        r["id"]: r
        for r in in_projects(database, "checkpoints", "id, attempt_id, summary", projects)
    }
    submissions = {
        r["id"]: r for r in in_projects(database, "submissions", "id, attempt_id", projects)
    }
    reviews = {
        r["id"]: r for r in in_projects(database, "reviews", "id, attempt_id, decision", projects)
    }
    worktrees = {r["id"]: r for r in in_projects(database, "worktrees", "id, task_id", projects)}
    receipts = {
        (r["principal_id"], r["key"])
        for r in fetch_all(database, "SELECT principal_id, key FROM idempotency_receipts")
    }

    def stored(write: Write, rows: dict[str, dict[str, Any]], id_: str, **values: Any) -> None:
        row = rows.get(id_)
        if row is None or any(row[column] != value for column, value in values.items()):
            found.lost.append(f"{write.operation} {write.key}: {id_} {values} stored as {row}")

    def once(what: str, counted: Counter[Any]) -> None:
        found.duplicated += [f"{what} {value} x{n}" for value, n in counted.items() if n > 1]

    for write in ledger.writes():
        keyed = write.key is not None and answered(write) and write.payload
        if keyed and (principals[write.agent], write.key) not in receipts:
            found.lost.append(f"{write.operation} {write.key}: no receipt")
    for write in ledger.writes("createTask"):
        stored(write, tasks, answered(write)["task"]["id"], title=write.input["title"])
    for write in ledger.writes("claimTask"):
        if write.payload:
            answer = answered(write)
            stored(
                write,
                attempts,
                answer["attempt"]["id"],
                task_id=answer["task"]["id"],
                session_id=sessions[write.agent],
                generation=answer["attempt"]["generation"],
            )
    for write in ledger.writes("recordCheckpoint"):
        checkpoint = answered(write)["checkpoint"]
        stored(
            write,
            checkpoints,
            checkpoint["id"],
            attempt_id=write.input["attemptId"],
            summary=write.input["summary"],
        )
    for write in ledger.writes("registerWorktree"):
        stored(write, worktrees, answered(write)["worktree"]["id"])
    for write in ledger.writes("submitAttempt"):
        submission = answered(write)["submission"]
        stored(write, submissions, submission["id"], attempt_id=write.input["attemptId"])
    for write in ledger.writes("submitReview"):
        review = answered(write)["review"]
        stored(
            write, reviews, review["id"], attempt_id=write.input["attemptId"], decision="APPROVE"
        )

    # Only once: each title, checkpoint summary, submission and review per attempt, one
    # attempt per task (nobody gives one back here) and one worktree row per task (its
    # registration takes no key: a retry updates the row), however often it was sent.

    once("task titled", Counter(row["title"] for row in tasks.values()))
    once("attempts of task", Counter(row["task_id"] for row in attempts.values()))
    once("checkpoint", Counter((r["attempt_id"], r["summary"]) for r in checkpoints.values()))
    once("worktrees of task", Counter(r["task_id"] for r in worktrees.values()))
    once("submissions of attempt", Counter(r["attempt_id"] for r in submissions.values()))
    once("reviews of attempt", Counter(r["attempt_id"] for r in reviews.values()))
    # And nothing stored that no write asked for (review and integration tasks are opened
    # by submissions and reviews, not created by a write).
    asked = {
        "implementation tasks": (
            len(ledger.writes("createTask")),
            len([t for t in tasks.values() if t["kind"] == "IMPLEMENTATION"]),
        ),
        "checkpoints": (len(ledger.writes("recordCheckpoint")), len(checkpoints)),
        "submissions": (len(ledger.writes("submitAttempt")), len(submissions)),
        "reviews": (len(ledger.writes("submitReview")), len(reviews)),
        "attempts": (len([w for w in ledger.writes("claimTask") if w.payload]), len(attempts)),
    }
    for what, (sent, rows) in asked.items():
        if rows > sent:
            found.duplicated.append(f"{what}: {rows} stored for {sent} writes")
        elif rows < sent:
            found.lost.append(f"{what}: {rows} stored for {sent} writes")


def check_current_attempts(database: Database, setting: Setting, found: Findings) -> None:
    """Every task has at most one current attempt, and its generations run 1, 2, 3…"""
    attempts = in_projects(database, "attempts", "id, task_id, generation, state", setting.projects)
    for task in in_projects(
        database, "tasks", "id, generation, current_attempt_id", setting.projects
    ):
        history = sorted(
            (a for a in attempts if a["task_id"] == task["id"]), key=lambda a: a["generation"]
        )
        active = [a["id"] for a in history if a["state"] == "ACTIVE"]
        if len(active) > 1:
            found.broken.append(f"task {task['id']}: active attempts {active}")
        if active and task["current_attempt_id"] != active[0]:
            found.broken.append(
                f"task {task['id']}: current {task['current_attempt_id']}, active {active}"
            )
        if [a["generation"] for a in history] != list(range(1, len(history) + 1)):
            found.broken.append(
                f"task {task['id']}: generations {[a['generation'] for a in history]}"
            )
        if task["generation"] != len(history):
            found.broken.append(
                f"task {task['id']}: generation {task['generation']}, {len(history)} attempts"
            )


def logged(runtime: Runtime, project_id: str) -> list[events.EventRecord]:
    records: list[events.EventRecord] = []
    while True:
        page = runtime.read(
            partial(
                events.list_events,
                stream=project_id,
                after=records[-1].seq if records else 0,
                limit=500,
            )
        )
        if not page:
            return records
        records.extend(page)


def check_event_logs(
    runtime: Runtime, database: Database, setting: Setting, ledger: Ledger, found: Findings
) -> None:
    """Each project's log is numbered 1…n with no gap, every stored event readable, the
    stored numbers a prefix of the read ones; and one event per write applied."""
    log: list[events.EventRecord] = []
    for project in setting.projects:
        read = logged(runtime, project)
        numbers = [record.seq for record in read]
        if numbers != list(range(1, len(numbers) + 1)):
            gaps = sorted(set(range(1, max(numbers, default=0) + 1)) - set(numbers))
            found.broken.append(f"project {project}: log numbered with gaps at {gaps[:20]}")
        stored = [
            row["seq"]
            for row in fetch_all(database, "SELECT seq FROM events WHERE stream = :s", s=project)
        ]
        if len(stored) != len(read):
            found.broken.append(f"project {project}: {len(stored)} events stored, {len(read)} read")
        numbered = sorted(seq for seq in stored if seq is not None)
        if numbered != list(range(1, len(numbered) + 1)):
            found.broken.append(f"project {project}: stored numbers {numbered[:5]}… not dense")
        log += read
    counted = Counter((record.kind, record.subject_id) for record in log)

    def events_of(kind: str, subject: str, expected: int, write: Write) -> None:
        if counted[kind, subject] != expected:
            problem = f"{kind} of {subject}: {counted[kind, subject]} events, {expected} writes"
            (found.lost if counted[kind, subject] < expected else found.duplicated).append(
                f"{problem} ({write.operation} {write.key})"
            )

    checkpoints = Counter(w.input["attemptId"] for w in ledger.writes("recordCheckpoint"))
    task_of: dict[str, str] = {}  # attempt id -> task id
    for write in ledger.writes("createTask"):
        events_of("task.created", answered(write)["task"]["id"], 1, write)
    for write in ledger.writes("claimTask"):
        if write.payload:
            task, attempt = answered(write)["task"], answered(write)["attempt"]
            task_of[attempt["id"]] = task["id"]
            events_of("attempt.claimed", task["id"], 1, write)
            if task["kind"] == "IMPLEMENTATION":
                events_of("checkpoint.recorded", task["id"], checkpoints[attempt["id"]], write)
    for write in ledger.writes("submitAttempt"):
        events_of("attempt.submitted", task_of[write.input["attemptId"]], 1, write)
    totals = Counter(record.kind for record in log)
    for kind, operation in (
        ("checkpoint.recorded", "recordCheckpoint"),
        ("attempt.submitted", "submitAttempt"),
        ("review.recorded", "submitReview"),
    ):
        writes = len([w for w in ledger.writes(operation) if w.payload])
        if totals[kind] != writes:
            found.duplicated.append(f"{totals[kind]} {kind} events for {writes} writes")


def summary(backend: str, run: Run, setting: Setting, ledger: Ledger, found: Findings) -> str:
    """The run's figures, one line (shown with `pytest -s`)."""
    writes = ledger.writes()
    doubted = [w for w in writes if w.in_doubt and w.key is not None and w.payload]
    kills = [outage.killed_at for outage in run.outages]
    just_before = [
        w for w in writes if any(0 <= killed - (w.answered_at or 0) < AT_RISK for killed in kills)
    ]
    masked = sum(reason.endswith(MASKED) for w in writes for reason in w.unanswered)
    kills_of = Counter(outage.kind for outage in run.outages)
    down = [outage.back_at - outage.killed_at for outage in run.outages]
    return (
        f"seed {SEED}, kills {len(run.outages)} ({kills_of['server']} servers,"
        f" {kills_of['worker']} workers; back in {min(down):.0f}-{max(down):.0f}s),"
        f" cycles {sum(a.cycles for a in setting.agents)},"
        f" writes {len(writes)}, sends {sum(w.sends for w in writes)},"
        f" acknowledged {sum(w.answer is not None for w in writes)}"
        f" ({len(just_before)} within {AT_RISK:g}s before a kill),"
        f" retried {sum(w.retried for w in writes)},"
        f" in doubt {len(doubted)} (replayed {sum(w.replayed for w in doubted)},"
        f" applied on retry {sum(not w.replayed for w in doubted)}),"
        f" internal errors {masked}, lost {len(found.lost)},"
        f" duplicated {len(found.duplicated)}, broken {len(found.broken)}"
    )


# --- the test -------------------------------------------------------------------------------


def test_killed_servers_lose_no_acknowledged_write_and_apply_none_twice(
    backend: str, test_database: TestDatabase, runtime: Runtime, tmp_path: Path
) -> None:
    print(f"\ncrash safety ({backend}): seed {SEED} (HUB_CRASH_SEED={SEED} replays it)")
    rng = random.Random(f"{SEED}-{backend}")
    ledger = Ledger()
    started = time.monotonic()
    plan = PLANS[backend]
    kinds = rng.sample(plan.kills, len(plan.kills))
    with fleet_of(test_database.url, tmp_path / "servers", plan.servers, plan.workers) as fleet:
        setting = set_up(runtime, fleet.urls, ledger)
        try:
            run = crash_loop(fleet, setting, ledger, rng, kinds)
        finally:
            for agent in setting.agents:
                agent.client.close()

    found = Findings()
    check_writes(test_database.database, setting, ledger, found)
    check_current_attempts(test_database.database, setting, found)
    check_event_logs(runtime, test_database.database, setting, ledger, found)
    if plan.servers > 1:
        # The rest kept serving: writes were answered while a server was down (by the
        # other server), or one of its workers (by its other worker, or the other server).
        for outage in run.outages:
            served = [
                w
                for w in ledger.writes()
                if (outage.kind == "worker" or w.answered_by != outage.server)
                and outage.killed_at < (w.answered_at or 0) < outage.back_at
            ]
            if not served:
                found.broken.append(f"nothing answered while {outage} was down")

    # And hub's own invariants hold after the kills (`hub maintenance check`, thorough:
    # SQLite's integrity check included).
    report = check(runtime, thorough=True)
    found.broken.extend(breach.line() for breach in report.breaches)

    figures = summary(backend, run, setting, ledger, found)
    print(f"crash safety ({backend}): {figures}, {time.monotonic() - started:.0f}s")
    assert len(run.outages) >= 5
    assert any(w.in_doubt for w in ledger.writes()), "no kill caught a write: nothing proved"
    assert not found.lost, found.lost
    assert not found.duplicated, found.duplicated
    assert not found.broken, found.broken
    internal = [w for w in ledger.writes() if any(r.endswith(MASKED) for r in w.unanswered)]
    assert not internal, internal
