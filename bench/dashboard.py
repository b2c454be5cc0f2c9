"""The dashboard's project board and home page through a real server, with concurrent viewers.

Made up from a fixed seed: `--projects` projects (default 50) for the home page; one of
them, the big board, holds `--tasks` tasks (default 10,000) of which `--in-progress`
(default 200) are claimed by agents, and another, the small board, 100 tasks in the same
proportions (two in progress). Tasks are created through the work module's bulk
operation (`work.create_tasks`, as an import creates them: criteria, labels, a tenth
blocked by a prerequisite, a few closed), claimed over the API (`claimTask`, ten agent
sessions), and the finished share (58 %) is set DONE in the database directly, its
`updated_at` spread over sixty days, so that some are "done recently" and most are
older (no review or integration is needed to draw a board of them); on PostgreSQL the
table is then vacuumed and analysed, as autovacuum would soon do.

Timed against one uvicorn server (`bench/claims.py`'s `served`), `--viewers` signed-in
viewers (default 10) at once, each asking in turn, `--rounds` times (default 20):

- `board_p95_ms`: `/projects/{big}/tasks`;
- `board_small_p95_ms`: `/projects/{small}/tasks`, in the same rounds: the floor the big
  board is judged against (its cost must not grow with the project);
- `home_p95_ms`: `/`, the projects overview;
- `healthz_p95_ms`: `/healthz`, the server's bare round trip under the same load;

and before that the same with one viewer and no other load (`board_alone_p95_ms`,
`board_small_alone_p95_ms`, `healthz_alone_p95_ms`);

then `--claim-agents` agents (default 32; 0 leaves this phase and its figures out), each
its own principal and session, run bench/claims.py's claim cycle in a closed loop
(claimTask, renewLease, recordAcceptance, submitAttempt) on a third project of ready
tasks, so the big board stays as it is: for `--claim-seconds` (default 8, after a
second's warm-up) alone, then as long again while `--claim-viewers` supervisors (default
1: someone with the board open, reloading it as fast as it comes) ask for the big board:

- `board_under_claims_p95_ms`: `/projects/{big}/tasks` in the second window
  (`board_under_claims_requests` of them); `board_under_claims_ratio` is it over
  `board_alone_p95_ms` (the same board, same viewer count, nothing else running);
- `claims_p95_ms`, `claims_cycles_per_s`: the claimTask requests answered in the second
  window (the one request of the cycle bench/claims.py times for its `p50_ms`/`p99_ms`,
  not the whole cycle), and the cycles a second (claims.py's `claims_per_s`);
  `claims_alone_p95_ms`, `claims_alone_cycles_per_s` the same in the first window, and
  `claims_slowdown` the p95 with the board over the p95 without it: what watching the
  board costs the agents;
- `double_owned`: claims.py's check of the database once the server has stopped: tasks
  with more than one active attempt, or whose current attempt is not their active one
  (must be 0);

then, with no viewer asking, `--streams` open boards (default 50: the board's live
stream, `/projects/{big}/tasks/live`) while `--changes` tasks (default 10) are claimed
over the API one after another: `sse_p99_ms` is the time from sending a claim to each
stream receiving that task's `task-changed` event, over every stream and change.

    .venv/bin/python bench/dashboard.py --backend sqlite
    .venv/bin/python bench/dashboard.py --backend postgresql
    .venv/bin/python bench/dashboard.py --tasks 1000 --rounds 5       # a quick look

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import sqlite3
import sys
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import psycopg
from claims import (
    Server,
    check,
    create_agents,
    insert_tasks,
    run_agents,
    served,
    start_sessions,
)
from scratch import Scratch, ms, percentile, scratch_database

from hub.identity import service as identity
from hub.projects import service as projects
from hub.runtime import Runtime
from hub.work import service as work
from hub.work.vocabulary import CloseReason, TaskKind

SEED = 15
SMALL_TASKS = 100
PASSWORD = "bench-viewer-password"
DONE_SHARE = 0.58
CLOSED_SHARE = 0.03
BLOCKED_SHARE = 0.10
AGENTS = 10
CLAIM_WARMUP = 1.0
# Ready tasks for the claim cycles: several times what 32 agents finish a second on a
# 2-core machine with nothing else asking (about 40), so they never run out in the window.
CLAIM_TASKS_PER_SECOND = 250
WORDS = (
    "parser", "cache", "lexer", "index", "upload", "review", "merge", "deploy", "schema",
    "token", "session", "lease", "config", "board", "search", "queue", "report", "import",
    "export", "worker", "retry",
)  # fmt: skip
KINDS = (TaskKind.IMPLEMENTATION, TaskKind.GENERAL, TaskKind.IMPLEMENTATION, TaskKind.OBJECTIVE)
_CSRF = re.compile(r'name="csrftoken" value="([^"]+)"')


def _say(text: str) -> None:
    print(text, flush=True)


def plan(count: int, rng: random.Random) -> list[work.PlannedTask]:
    """`count` tasks: a tenth waiting on the one before it, a few closed."""
    planned = []
    for index in range(count):
        title = " ".join(rng.sample(WORDS, 4))
        fields = work.clean_fields(
            rng.choice(KINDS).value, f"{title} {index}", f"make the {title} work",
            [f"the {title} passes its tests"], rng.randint(-5, 5),
        )
        blocked = index > 0 and rng.random() < BLOCKED_SHARE
        closed = rng.random() < CLOSED_SHARE
        planned.append(work.PlannedTask(
            fields=fields,
            labels=(rng.choice(("auth", "web", "storage", "api")),),
            prerequisites=(index - 1,) if blocked and not closed else (),
            closed=work.Closure(CloseReason.DEFERRED, reopen_condition="later") if closed else None,
        ))  # fmt: skip
    return planned


def prepare(runtime: Runtime, args: argparse.Namespace) -> dict[str, Any]:
    """The operator (a password for the dashboard, a token for the API), the agents'
    principal, the projects, and the two boards' tasks."""
    rng = random.Random(SEED)

    def people(uow: Any) -> dict[str, Any]:
        operator = identity.create_principal(
            uow, name="bench-operator", kind="human", operator=True, password=PASSWORD
        )
        token = identity.create_token(uow, principal=operator.id, label="bench").plaintext
        agent = identity.create_principal(uow, name="bench-agent", kind="agent")
        agent_token = identity.create_token(uow, principal=agent.id, label="bench").plaintext
        actor = identity.authenticate(uow, token)
        made = [projects.create_project(uow, actor, name=f"project {n:02d}").id
                for n in range(args.projects)]
        return {"token": token, "agent_token": agent_token, "big": made[0], "small": made[1],
                "claims": made[2], "claim_tokens": create_agents(uow, args.claim_agents),
                "operator": operator.id}

    made = runtime.write(people)
    if args.claim_agents:
        # Two windows: the agents alone, then beside the board's viewers.
        count = int(CLAIM_TASKS_PER_SECOND * 2 * (CLAIM_WARMUP + args.claim_seconds))
        insert_tasks(runtime, made["claims"], made["operator"], count)
    for project, count in ((made["big"], args.tasks), (made["small"], SMALL_TASKS)):
        planned = plan(count, rng)

        def create(uow: Any, project: str = project, planned: list[Any] = planned) -> list[str]:
            actor = identity.authenticate(uow, made["token"])
            return work.create_tasks(uow, actor, project, planned)

        made[project] = runtime.write(create)
    return made


def finish_some(scratch: Scratch, project: str, task_ids: list[str], now: datetime) -> None:
    """Set the finished share DONE directly, last changed over the past sixty days."""
    rng = random.Random(SEED + 1)
    chosen = rng.sample(task_ids, int(len(task_ids) * DONE_SHARE))
    rows = [("DONE", now - timedelta(days=rng.uniform(0, 60)), task_id) for task_id in chosen]
    statement = ("UPDATE tasks SET state = {0}, updated_at = {0} WHERE id = {0} "
                 "AND state = 'OPEN' AND blocked_count = 0")
    if scratch.backend == "sqlite":
        with sqlite3.connect(scratch.sqlite_path) as connection:
            connection.executemany(statement.format("?"), [
                (state, moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f"), task_id)
                for state, moment, task_id in rows
            ])
        return
    with psycopg.connect(scratch.libpq_url) as connection, connection.cursor() as cursor:
        cursor.executemany(statement.format("%s"), rows)
    # Autovacuum would soon do the same after so many changed rows: without it, counts
    # that read an index alone visit every changed row's page as well.
    with psycopg.connect(scratch.libpq_url, autocommit=True) as connection:
        connection.execute("VACUUM ANALYZE tasks")


class Api:
    def __init__(self, base_url: str, token: str) -> None:
        self.http = httpx.Client(base_url=base_url, timeout=60,
                                 headers={"authorization": f"Bearer {token}"})

    def mutate(self, name: str, data: dict[str, Any], selection: str) -> dict[str, Any]:
        query = (f"mutation($input: {name[0].upper()}{name[1:]}Input!) {{ {name}(input: $input)"
                 f" {{ __typename ... on Problem {{ code message }} {selection} }} }}")
        answer = self.http.post("/graphql", json={"query": query, "variables": {"input": data}})
        answer.raise_for_status()
        body = answer.json()
        if body.get("errors"):
            raise SystemExit(f"{name} failed: {body['errors']}")
        result: dict[str, Any] = body["data"][name]
        return result


def agent_sessions(base_url: str, token: str) -> list[Api]:
    api = Api(base_url, token)
    sessions = []
    for number in range(AGENTS):
        started = api.mutate("startSession", {
            "workstation": f"bench-{number}", "harness": "bench",
            "harnessInstance": uuid.uuid4().hex[:8],
        }, "... on StartSessionPayload { token }")
        sessions.append(Api(base_url, started["token"]))
    return sessions


def claim(session: Api, project: str, task_id: str) -> None:
    claimed = session.mutate("claimTask", {
        "projectId": project, "taskId": task_id, "idempotencyKey": uuid.uuid4().hex,
    }, "... on ClaimPayload { attempt { id } }")
    if claimed["__typename"] != "ClaimPayload":
        raise SystemExit(f"claim refused: {claimed}")


def viewer(base_url: str) -> httpx.Client:
    """A signed-in dashboard client (the login form with its CSRF token)."""
    client = httpx.Client(base_url=base_url, timeout=60)
    login = client.get("/login")
    token = _CSRF.search(login.text)
    assert token, "no CSRF field on /login"
    _keep_cookies(client, login)
    answer = client.post("/login", data={
        "csrftoken": token.group(1), "name": "bench-operator", "password": PASSWORD,
    })
    if answer.status_code != 303:
        raise SystemExit(f"login refused: {answer.status_code} {answer.text[:300]}")
    _keep_cookies(client, answer)
    return client


def _keep_cookies(client: httpx.Client, response: httpx.Response) -> None:
    # A production server marks its cookies Secure; the bench speaks plain HTTP to
    # localhost, so it keeps them itself (a browser behind TLS would).
    for name, value in response.cookies.items():
        client.cookies.set(name, value)


def timed_pages(
    clients: list[httpx.Client], paths: dict[str, str], rounds: int = 0,
    window: tuple[float, float] | None = None,
) -> dict[str, list[float]]:
    """Every client asks for every path in turn, all clients at once: `rounds` times, or,
    given a window (its opening and close by `time.perf_counter`), until it closes,
    timing only the requests made wholly inside it."""
    timings: dict[str, list[float]] = {name: [] for name in paths}
    lock = threading.Lock()
    measure_from, stop_at = window or (-math.inf, math.inf)
    asks = rounds * len(paths) if window is None else sys.maxsize

    def run(client: httpx.Client, offset: int) -> None:
        names = list(paths)
        for number in range(asks):
            name = names[(number + offset) % len(names)]
            started = time.perf_counter()
            if started >= stop_at:
                return
            answer = client.get(paths[name])
            ended = time.perf_counter()
            if answer.status_code != 200:
                raise SystemExit(f"{paths[name]}: {answer.status_code} {answer.text[:300]}")
            if started >= measure_from and ended <= stop_at:
                with lock:
                    timings[name].append(ended - started)

    with ThreadPoolExecutor(len(clients)) as pool:
        for done in [pool.submit(run, client, n) for n, client in enumerate(clients)]:
            done.result()
    return timings


def under_claims(
    server: Server, clients: list[httpx.Client], paths: dict[str, str],
    tokens: list[str], project: str, seconds: float,
) -> tuple[dict[str, list[float]], list[float]]:
    """The pages' timings and the claimTask requests' over one window of `seconds`: an
    agent per session token runs bench/claims.py's claim cycle on `project` while the
    viewers (if any) ask for `paths` in turn; both measure from `CLAIM_WARMUP` seconds
    after the agents start."""
    start = time.perf_counter()
    window = (start + CLAIM_WARMUP, start + CLAIM_WARMUP + seconds)
    with ThreadPoolExecutor(1) as pool:
        agents = pool.submit(run_agents, server, tokens, project, warmup=CLAIM_WARMUP,
                             seconds=seconds, start=start)  # fmt: skip
        timings = timed_pages(clients, paths, window=window) if clients else {}
        tally = agents.result()
    if tally.failure:  # a dead agent leaves the server less loaded than the figure says
        raise SystemExit(f"a claiming agent stopped early: {tally.failure}")
    if tally.exhausted:
        raise SystemExit("the claims project ran out of ready tasks: raise CLAIM_TASKS_PER_SECOND")
    claimed = tally.latencies["claim"]
    _say(f"claims beside {len(clients)} viewers: {len(claimed)} cycles, claimTask p50 "
         f"{ms(percentile(claimed, 50))} ms, p95 {ms(percentile(claimed, 95))} ms; "
         f"problems returned {dict(tally.problems)}")
    return timings, claimed


def claims_figures(
    scratch: Scratch, board: list[float], claimed: list[float], claimed_alone: list[float],
    board_alone: float, seconds: float,
) -> dict[str, Any]:
    """The claims phase's figures, and the claims bench's ownership check of the database
    once the server has stopped."""
    runtime = scratch.runtime()
    double_owned, _ = check(runtime)
    runtime.close()
    under = percentile(board, 95)
    claims, claims_alone = percentile(claimed, 95), percentile(claimed_alone, 95)
    return {
        "board_under_claims_p95_ms": ms(under),
        "board_under_claims_requests": len(board),
        "board_under_claims_ratio": round(under / board_alone, 2) if board_alone else None,
        "claims_p95_ms": ms(claims),
        "claims_cycles_per_s": round(len(claimed) / seconds, 1),
        "claims_alone_p95_ms": ms(claims_alone),
        "claims_alone_cycles_per_s": round(len(claimed_alone) / seconds, 1),
        "claims_slowdown": round(claims / claims_alone, 2) if claims_alone else None,
        "double_owned": double_owned,
    }


def sse_delivery(
    base_url: str, project: str, streams: int, changes: list[tuple[str, Callable[[], None]]]
) -> list[float]:
    """Seconds from each change sent to each open board receiving its task's event."""
    clients = [viewer(base_url) for _ in range(max(streams // 10, 1))]
    board = clients[0].get(f"/projects/{project}/tasks").text
    after = re.search(r'data-live="[^"]*after=(\d+)"', board)
    assert after, "no live stream on the board"
    sent: dict[str, float] = {}
    received: list[float] = []
    lock = threading.Lock()
    ready = threading.Barrier(streams + 1)
    expected = {task_id for task_id, _ in changes}

    def follow(client: httpx.Client) -> None:
        seen: set[str] = set()
        url = f"/projects/{project}/tasks/live?after={after.group(1)}"
        with client.stream("GET", url, headers={"accept": "text/event-stream"},
                           timeout=httpx.Timeout(60.0)) as response:
            ready.wait()
            for line in response.iter_lines():
                if not line.startswith("data: "):
                    continue
                task_id = line.removeprefix("data: ")
                now = time.perf_counter()
                if task_id in expected and task_id not in seen:
                    seen.add(task_id)
                    with lock:
                        received.append(now - sent[task_id])
                if seen == expected:
                    return

    with ThreadPoolExecutor(streams) as pool:
        futures = [pool.submit(follow, clients[n % len(clients)]) for n in range(streams)]
        ready.wait()
        time.sleep(0.5)  # every stream has reached the follow loop
        for task_id, change in changes:
            sent[task_id] = time.perf_counter()
            change()
            time.sleep(0.2)
        for future in futures:
            future.result(timeout=120)
    for client in clients:
        client.close()
    return received


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--in-progress", type=int, default=200)
    parser.add_argument("--projects", type=int, default=50)
    parser.add_argument("--viewers", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--streams", type=int, default=50)
    parser.add_argument("--changes", type=int, default=10)
    parser.add_argument("--claim-agents", type=int, default=32, help="0: no claims phase")
    parser.add_argument("--claim-seconds", type=float, default=8.0, help="each window")
    parser.add_argument("--claim-viewers", type=int, default=1,
                        help="viewers reloading the board beside the claims")
    parser.add_argument("--database-url", help="SQLite file, or a hub_bench* PostgreSQL db")
    parser.add_argument("--server-wrapper", default="",
                        help="command the server runs under, e.g. 'py-spy record -o d.svg --'")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args(argv)
    if args.tasks < SMALL_TASKS or args.projects < 3:
        parser.error(f"--tasks must be at least {SMALL_TASKS} and --projects at least 3")

    with scratch_database(args.backend, args.database_url, keep=args.keep) as scratch:
        started = time.perf_counter()
        runtime = scratch.runtime()
        made = prepare(runtime, args)
        now = runtime.clock.now()
        runtime.close()
        big, small = made["big"], made["small"]
        for project in (big, small):
            finish_some(scratch, project, made[project], now)
        _say(f"{args.backend}: {args.projects} projects, {args.tasks} + {SMALL_TASKS} tasks in "
             f"{time.perf_counter() - started:.1f} s; scratch {scratch.folder}")
        # The claims bench's pool for one server process when agents claim beside the viewers.
        pool_size = max(args.viewers, min(args.claim_agents, 20))
        with served(scratch, workers=1, synchronous="NORMAL", pool_size=pool_size,
                    wrapper=args.server_wrapper) as server:  # fmt: skip
            operator = Api(server.url, made["token"])
            for project in (big, small):
                operator.mutate("setProjectPolicy", {
                    "projectId": project, "maxActiveAttemptsPerSession": 100,
                    "leaseSeconds": 3600,
                }, "... on SetProjectPolicyPayload { policy { revision } }")
            sessions = agent_sessions(server.url, made["agent_token"])
            claimable = _open_tasks(scratch, big)
            small_open = _open_tasks(scratch, small)
            for number, task_id in enumerate(claimable[: args.in_progress]):
                claim(sessions[number % AGENTS], big, task_id)
            for number, task_id in enumerate(small_open[: max(args.in_progress // 100, 1)]):
                claim(sessions[number % AGENTS], small, task_id)
            _say(f"claimed {args.in_progress} tasks in {time.perf_counter() - started:.1f} s")
            clients = [viewer(server.url) for _ in range(args.viewers)]
            paths = {"board": f"/projects/{big}/tasks", "home": "/", "healthz": "/healthz",
                     "board_small": f"/projects/{small}/tasks"}
            timed_pages(clients, paths, 2)  # warm-up
            alone = timed_pages(clients[:1], paths, args.rounds)
            timings = timed_pages(clients, paths, args.rounds)
            measured = {"alone": alone, f"{args.viewers} viewers": timings}
            if args.claim_agents:
                tokens = start_sessions(server.url, made["claim_tokens"])
                _, claimed_alone = under_claims(server, [], {}, tokens, made["claims"],
                                                args.claim_seconds)  # fmt: skip
                supervisors = clients[: args.claim_viewers]
                beside, claimed = under_claims(server, supervisors, {"board": paths["board"]},
                                               tokens, made["claims"], args.claim_seconds)
                label = f"{len(supervisors)} viewers, {args.claim_agents} agents claiming"
                measured[label] = beside
            for client in clients:
                client.close()
            for label, values_by_name in measured.items():
                for name, values in values_by_name.items():
                    _say(f"{name} ({label}): p50 {ms(percentile(values, 50))} ms, "
                         f"p95 {ms(percentile(values, 95))} ms over {len(values)}")
            rest = claimable[args.in_progress: args.in_progress + args.changes]
            changes = [(task_id, lambda t=task_id, s=sessions[n % AGENTS]: claim(s, big, t))
                       for n, task_id in enumerate(rest)]
            delivered = sse_delivery(server.url, big, args.streams, changes)
            _say(f"sse: {len(delivered)} deliveries, p50 {ms(percentile(delivered, 50))} ms, "
                 f"p99 {ms(percentile(delivered, 99))} ms")

        board_alone = percentile(alone["board"], 95)
        beside_claims = {}
        if args.claim_agents:
            beside_claims = claims_figures(scratch, beside["board"], claimed, claimed_alone,
                                           board_alone, args.claim_seconds)  # fmt: skip

    board = percentile(timings["board"], 95)
    board_small = percentile(timings["board_small"], 95)
    print(json.dumps({
        "backend": args.backend,
        "tasks": args.tasks,
        "in_progress": args.in_progress,
        "projects": args.projects,
        "viewers": args.viewers,
        "board_p95_ms": ms(board),
        "board_small_p95_ms": ms(board_small),
        "board_ratio": round(board / board_small, 2) if board_small else None,
        "home_p95_ms": ms(percentile(timings["home"], 95)),
        "healthz_p95_ms": ms(percentile(timings["healthz"], 95)),
        "board_alone_p95_ms": ms(board_alone),
        "board_small_alone_p95_ms": ms(percentile(alone["board_small"], 95)),
        "healthz_alone_p95_ms": ms(percentile(alone["healthz"], 95)),
        "streams": args.streams,
        "deliveries": len(delivered),
        "sse_p99_ms": ms(percentile(delivered, 99)),
        "claim_agents": args.claim_agents,
        **beside_claims,
        "seconds": round(time.perf_counter() - started, 1),
    }))


def _open_tasks(scratch: Scratch, project: str) -> list[str]:
    """The project's ready tasks (open, unblocked), oldest first, read from the database."""
    statement = ("SELECT id FROM tasks WHERE project_id = {0} AND state = 'OPEN' "
                 "AND blocked_count = 0 ORDER BY id")
    if scratch.backend == "sqlite":
        with sqlite3.connect(scratch.sqlite_path) as connection:
            return [row[0] for row in connection.execute(statement.format("?"), (project,))]
    with psycopg.connect(scratch.libpq_url) as connection:
        return [row[0] for row in connection.execute(statement.format("%s"), (project,))]


if __name__ == "__main__":
    main()
