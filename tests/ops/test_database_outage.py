"""The database going away under a running server, and coming back (docs/ops/faults.md).

A real `hub serve` process, agents writing through it with idempotency keys, and then
the database stops serving: on PostgreSQL the server (a cluster of the test's own) is
stopped and started again; on SQLite the file and its write-ahead log are made
unwritable (`chattr +i`, which holds even for root) and writable again. While it is
away every request is answered, never with a 500 or the masked "Unexpected error.":
a write fails with the typed, retryable `UNAVAILABLE` (HTTP 503, `Retry-After`), and
`/readyz` says the database cannot serve. When it is back the same process serves
again without a restart, the writes that failed are retried with their keys, and every
acknowledged write is there exactly once.

Nothing waits for time to pass: the outage lasts until every agent has been refused a
few times and readiness has said so, the recovery until every agent has written again.
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import httpx
import pytest

from hub.runtime import Runtime
from hub.storage import migrations
from hub.storage.database import Database
from tests.conftest import issue_principal, runtime_settings
from tests.support.private_postgres import private_postgresql, unavailable_reason
from tests.support.processes import ServerProcess, hub_servers, wait_until

pytestmark = pytest.mark.slow

AGENTS = 3
REFUSALS_DURING = 3  # per agent, before the database comes back
WRITES_AFTER = 3  # per agent, after it is back
WAIT = 90.0  # only ever reached when something is broken
MAX_TRIES = 100  # per agent and phase: beyond it the outage or the recovery did not happen

CREATE = """
mutation ($input: CreateTaskInput!) {
  createTask(input: $input) {
    __typename
    ... on CreateTaskPayload { task { id } replay }
    ... on Problem { code message }
  }
}
"""
TASKS = """
query ($projectId: ID!, $after: String) {
  tasks(projectId: $projectId, first: 100, after: $after) {
    edges { node { id } } pageInfo { hasNextPage endCursor }
  }
}
"""


class Outage(Protocol):
    url: str
    unready: bool  # whether /readyz says so while it lasts

    def begin(self, server: ServerProcess) -> None: ...
    def end(self, server: ServerProcess) -> None: ...


@dataclass
class SQLiteMadeReadOnly:
    url: str
    path: Path
    unready: bool = True

    def _flag(self, flag: str) -> None:
        # Not the shared-memory index: SQLite maps it, and an immutable mapping faults.
        files = [self.path, self.path.with_name(self.path.name + "-wal")]
        subprocess.run(["chattr", flag, *[str(f) for f in files if f.exists()]], check=True)

    def begin(self, server: ServerProcess) -> None:
        self._flag("+i")

    def end(self, server: ServerProcess) -> None:
        self._flag("-i")


@dataclass
class PostgreSQLStopped:
    url: str
    stop: Callable[[], None]
    start: Callable[[], None]
    unready: bool = True

    def begin(self, server: ServerProcess) -> None:
        self.stop()

    def end(self, server: ServerProcess) -> None:
        self.start()


@dataclass
class DiskFull:
    """The server's disk fills up: no file of the process may grow (its file-size
    limit, which the kernel enforces like a full disk, set from outside). Reads go on,
    so the server stays ready."""

    url: str
    unready: bool = False

    def begin(self, server: ServerProcess) -> None:
        set_file_size_limit(server, 0)

    def end(self, server: ServerProcess) -> None:
        set_file_size_limit(server, resource.RLIM_INFINITY)


def set_file_size_limit(server: ServerProcess, limit: int) -> None:
    _, hard = resource.prlimit(server.process.pid, resource.RLIMIT_FSIZE)
    resource.prlimit(server.process.pid, resource.RLIMIT_FSIZE, (limit, hard))


def _chattr_reason(folder: Path) -> str | None:
    if shutil.which("chattr") is None:
        return "no chattr command"
    probe = folder / "chattr-probe"
    probe.touch()
    try:
        done = subprocess.run(["chattr", "+i", str(probe)], capture_output=True)
        if done.returncode != 0:
            return "chattr +i is not permitted here (it needs root on a file system with flags)"
        subprocess.run(["chattr", "-i", str(probe)], check=True)
        return None
    finally:
        probe.unlink()


@pytest.fixture
def outage(backend: str, fault: str, tmp_path: Path) -> Iterator[Outage]:
    if fault == "disk full":
        yield DiskFull(f"sqlite:///{tmp_path / 'hub.db'}")
        return
    if backend == "sqlite":
        reason = _chattr_reason(tmp_path)
        if reason is not None:
            pytest.skip(f"cannot make the SQLite file read-only under a server: {reason}")
        path = tmp_path / "hub.db"
        yield SQLiteMadeReadOnly(f"sqlite:///{path}", path)
        return
    reason = unavailable_reason()
    if reason is not None:
        # The PostgreSQL half is mandatory where the suite has a server (.ci/run).
        pytest.fail(f"cannot run a PostgreSQL server to stop: {reason}")
    with private_postgresql() as server:
        yield PostgreSQLStopped(server.url, server.stop, server.start)


@dataclass
class Ledger:
    """What each agent sent and what it was answered."""

    acknowledged: dict[str, str] = field(default_factory=dict)  # key -> task id
    refused: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> input
    wrong: list[str] = field(default_factory=list)  # answers that must never happen
    lock: threading.Lock = field(default_factory=threading.Lock)


def _is_unavailable(response: httpx.Response) -> bool:
    if response.status_code != 503 or not response.headers.get("retry-after"):
        return False
    errors = response.json().get("errors") or []
    return bool(errors) and all(
        (e.get("extensions") or {}).get("code") == "UNAVAILABLE"
        and (e.get("extensions") or {}).get("retryable") is True
        for e in errors
    )


def _create(client: httpx.Client, task_input: dict[str, Any]) -> httpx.Response:
    return client.post("/graphql", json={"query": CREATE, "variables": {"input": task_input}})


@contextmanager
def served(outage: Outage, tmp_path: Path) -> Iterator[tuple[ServerProcess, str, str]]:
    """A migrated database with an agent, its project, and a server on it."""
    database = Database(outage.url)
    migrations.upgrade_to_head(database)
    runtime = Runtime(runtime_settings(outage.url, tmp_path), database=database)
    try:
        _, token = issue_principal(runtime, "agent")
    finally:
        runtime.close()
    with hub_servers(1, outage.url, tmp_path / "server", poll_seconds=1.0) as (server,):
        with httpx.Client(
            base_url=server.base_url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        ) as client:
            created = client.post("/graphql", json={
                "query": "mutation ($i: CreateProjectInput!) { createProject(input: $i) "
                "{ ... on CreateProjectPayload { project { id } } } }",
                "variables": {"i": {"name": "Outage", "aliases": []}},
            }).json()
        yield server, token, created["data"]["createProject"]["project"]["id"]


# PostgreSQL's disk is its server's: a full one answers like a stopped server (its
# SQLSTATE class 53), so the stopped server stands for both there.
@pytest.mark.parametrize(
    ("backend", "fault"),
    [("sqlite", "away"), ("postgresql", "away"), ("sqlite", "disk full")],
    indirect=["backend"],
)
def test_writes_fail_typed_and_retryable_while_the_database_is_away_and_recover(
    outage: Outage, tmp_path: Path
) -> None:
    with served(outage, tmp_path) as (server, token, project_id):
        ledger = Ledger()
        # Each agent writes until it has what its phase needs, then waits for the next
        # phase: one acknowledged write before, REFUSALS_DURING refusals while the
        # database is away, WRITES_AFTER acknowledged writes once it is back.
        phases = {"before": threading.Event(), "away": threading.Event(),
                  "back": threading.Event()}
        phases["before"].set()
        finished = {name: threading.Semaphore(0) for name in phases}

        def agent(name: str) -> None:
            counts = {"before": 0, "away": 0, "back": 0}
            needed = {"before": 1, "away": REFUSALS_DURING, "back": WRITES_AFTER}
            with httpx.Client(
                base_url=server.base_url, headers={"Authorization": f"Bearer {token}"},
                timeout=30,
            ) as client:
                for phase in ("before", "away", "back"):
                    if not phases[phase].wait(WAIT):
                        return
                    for _ in range(MAX_TRIES):
                        if counts[phase] >= needed[phase]:
                            break
                        if not send(client, name, phase, counts):
                            return
                    else:
                        with ledger.lock:
                            ledger.wrong.append(f"{name}: {phase} not reached: {counts}")
                        return
                    finished[phase].release()

        def send(client: httpx.Client, name: str, phase: str, counts: dict[str, int]) -> bool:
            key = uuid.uuid4().hex
            task_input = {"projectId": project_id, "idempotencyKey": key, "kind": "GENERAL",
                          "title": f"{name} {key[:6]}", "acceptanceCriteria": ["it works"]}
            try:
                response = _create(client, task_input)
            except httpx.TransportError as exc:  # the server must stay up and answer
                with ledger.lock:
                    ledger.wrong.append(f"{name}: no answer ({exc!r})")
                return False
            with ledger.lock:
                if _is_unavailable(response):
                    ledger.refused[key] = task_input
                    counts[phase] += phase == "away"
                elif response.status_code == 200 and "errors" not in response.json():
                    payload = response.json()["data"]["createTask"]
                    if payload["__typename"] != "CreateTaskPayload":
                        ledger.wrong.append(f"{name}: {payload}")
                        return False
                    ledger.acknowledged[key] = payload["task"]["id"]
                    counts[phase] += phase != "away"
                else:
                    ledger.wrong.append(
                        f"{name}: HTTP {response.status_code} {response.text[:300]}"
                    )
                    return False
            return True

        def all_finished(phase: str) -> bool:
            return all(finished[phase].acquire(timeout=WAIT) for _ in range(AGENTS))

        def readiness() -> int:
            return httpx.get(f"{server.base_url}/readyz", timeout=10).status_code

        threads = [threading.Thread(target=agent, args=(f"agent-{n}",)) for n in range(AGENTS)]
        for thread in threads:
            thread.start()
        away = False
        try:
            assert all_finished("before"), ledger.wrong
            outage.begin(server)
            away = True
            phases["away"].set()
            assert all_finished("away"), ledger.wrong
            assert readiness() == (503 if outage.unready else 200)
            outage.end(server)
            away = False
            phases["back"].set()
            assert all_finished("back"), ledger.wrong
            assert wait_until(lambda: readiness() == 200, WAIT)
        finally:
            for event in phases.values():
                event.set()
            if away:
                outage.end(server)
            for thread in threads:
                thread.join(timeout=WAIT)
        assert not ledger.wrong, ledger.wrong

        # The refused writes, retried with their keys: each lands once, or replays the
        # one that landed after all (a broken commit may have).
        with httpx.Client(
            base_url=server.base_url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        ) as client:
            for key, task_input in ledger.refused.items():
                response = _create(client, task_input)
                assert response.status_code == 200, response.text
                payload = response.json()["data"]["createTask"]
                assert payload["__typename"] == "CreateTaskPayload", payload
                if key in ledger.acknowledged:
                    assert payload["replay"] and payload["task"]["id"] == ledger.acknowledged[key]
                ledger.acknowledged[key] = payload["task"]["id"]
            listed: list[str] = []
            after = None
            while True:
                page = client.post("/graphql", json={
                    "query": TASKS, "variables": {"projectId": project_id, "after": after},
                }).json()["data"]["tasks"]
                listed.extend(edge["node"]["id"] for edge in page["edges"])
                if not page["pageInfo"]["hasNextPage"]:
                    break
                after = page["pageInfo"]["endCursor"]
        assert len(listed) == len(set(listed)) == len(ledger.acknowledged)
        assert set(listed) == set(ledger.acknowledged.values())
        assert server.process.poll() is None
        log = server.log()
        assert "Traceback" not in log and "unexpected error" not in log, log[-3000:]
        print(  # the figures of the closing note
            f"outage {type(outage).__name__}: acknowledged "
            f"{len(ledger.acknowledged)}, refused then retried {len(ledger.refused)}, lost 0"
        )
