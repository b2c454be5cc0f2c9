"""Job observations through the API while subscribers listen: throughput and fan-out.

J jobs (default 200), each owned by its own agent session's attempt, report `observeJob`
(RUNNING) every `--interval` seconds over real HTTP, in a closed schedule (each job's
loop keeps its own period; a late response delays only that job). S subscribers
(default 50) each hold a graphql-transport-ws connection with one `jobObservations`
subscription to one job. Fan-out latency is subscriber receipt time minus the event's
`occurredAt` (coordinator time sampled at commit, same machine clock), so it covers
commit, the wake (in-process signal, or LISTEN/NOTIFY from another process), the
follower's read and the WebSocket hop.

SQLite: one server process. PostgreSQL: `--servers 2` separate uvicorn processes on the
same database; observers post to one, subscribers listen on the other, so every
delivery crosses processes through LISTEN/NOTIFY.

Before that, hub's servers up and idle, the same number of the same clients drive the
stack floor's no-op mutation (`bench/stack_floor.py`, one process, as the observers post
to one): back to back (`stack_mutations_per_s`, the most these clients get from the
stack), then at the observers' offered rate (`stack_p99_ms`, beside `fanout_p99_ms`).

`--ramp` replaces the one window by steps: the offered rate starts at `--ramp-start`
(100/s, after 5 s of unmeasured warm-up at that rate) and grows by `--ramp-factor` (1.5)
a step of `--ramp-seconds` (8 s) until a step is not sustained (achieved below 95 % of
offered, or observe p99 over 250 ms; if the first one is not, the rate goes down by the
same factor to the first that is); `max_sustained_observations_per_s` is the highest
sustained step's achieved rate and `obs_ratio` that over `stack_mutations_per_s`.

    .venv/bin/python bench/observations.py --backend sqlite
    .venv/bin/python bench/observations.py --backend postgresql --servers 2
    .venv/bin/python bench/observations.py --backend sqlite --ramp

The last line printed is one JSON object with the figures (observations_per_s,
fanout_p99_ms, ...).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx
import websockets
from claims import graphql, served, start_sessions
from scratch import ms, percentile, scratch_database
from stack_floor import floor_served, touch_body
from websockets.typing import Subprotocol

from hub.identity import service as identity
from hub.projects import service as projects
from hub.runtime import Runtime
from hub.storage.unit_of_work import UnitOfWork

PROBLEM = "... on Problem { code message }"
CREATE_TASK = f"""mutation($input: CreateTaskInput!) {{ createTask(input: $input) {{ __typename
  ... on CreateTaskPayload {{ task {{ id }} }} {PROBLEM} }} }}"""
CLAIM = f"""mutation($input: ClaimTaskInput!) {{ claimTask(input: $input) {{ __typename
  ... on ClaimPayload {{ attempt {{ id generation }} }} {PROBLEM} }} }}"""
REGISTER = f"""mutation($input: RegisterJobInput!) {{ registerJob(input: $input) {{ __typename
  ... on JobPayload {{ job {{ id }} }} {PROBLEM} }} }}"""
OBSERVE = f"""mutation($input: ObserveJobInput!) {{ observeJob(input: $input) {{ __typename
  ... on JobPayload {{ serverTime }} {PROBLEM} }} }}"""
SUBSCRIBE = """subscription($p: ID!, $j: ID!, $after: Int!) {
  jobObservations(projectId: $p, jobId: $j, after: $after) { sequence kind occurredAt } }"""


def prepare(runtime: Runtime, projects_count: int) -> tuple[str, str, list[str]]:
    """An operator token, an agent token, and projects (written directly: setup only)."""

    def write(uow: UnitOfWork) -> tuple[str, str, list[str]]:
        operator = identity.create_principal(
            uow, name="bench-operator", kind="human", operator=True
        )
        agent = identity.create_principal(uow, name="bench-agent", kind="agent")
        op_token = identity.create_token(uow, principal=operator.id).plaintext
        agent_token = identity.create_token(uow, principal=agent.id).plaintext
        actor = identity.authenticate(uow, op_token)
        made = [
            projects.create_project(uow, actor, name=f"bench-{i}").id for i in range(projects_count)
        ]
        return op_token, agent_token, made

    return runtime.write(write)


def create_jobs(
    base_url: str, operator_token: str, sessions: list[str], project_ids: list[str]
) -> list[tuple[str, str, str]]:
    """One task, claim and job per session: (session token, project id, job id)."""
    made = []
    with httpx.Client(
        base_url=base_url, timeout=60, headers={"Authorization": f"Bearer {operator_token}"}
    ) as operator:
        for index, session in enumerate(sessions):
            project_id = project_ids[index % len(project_ids)]
            task = graphql(
                operator,
                CREATE_TASK,
                "createTask",
                {
                    "projectId": project_id,
                    "kind": "GENERAL",
                    "title": f"job {index}",
                    "acceptanceCriteria": ["runs"],
                },
            )
            with httpx.Client(
                base_url=base_url, timeout=60, headers={"Authorization": f"Bearer {session}"}
            ) as agent:
                claim = graphql(
                    agent,
                    CLAIM,
                    "claimTask",
                    {
                        "projectId": project_id,
                        "taskId": task["task"]["id"],
                        "idempotencyKey": uuid.uuid4().hex,
                    },
                )
                attempt = claim["attempt"]
                job = graphql(
                    agent,
                    REGISTER,
                    "registerJob",
                    {
                        "attemptId": attempt["id"],
                        "generation": attempt["generation"],
                        "jobId": f"bench-{index}",
                        "producer": "bench",
                        "runnerHost": "bench",
                        "checkout": "/bench",
                        "operation": "test",
                        "invocation": "bench",
                        "freshnessSeconds": 60,
                        "idempotencyKey": uuid.uuid4().hex,
                    },
                )
            if job["__typename"] != "JobPayload":
                raise SystemExit(f"registerJob: {job}")
            made.append((session, project_id, job["job"]["id"]))
    return made


# --- subscribers (their own process, so their clock readings are not delayed by observers)


def subscribers_main(
    base_url: str,
    token: str,
    targets: list[tuple[str, str]],
    start_at: float,
    ready: Any,
    stop: Any,
    results: Any,
) -> None:
    results.put(asyncio.run(_subscribers(base_url, token, targets, start_at, ready, stop)))


async def _subscribers(
    base_url: str,
    token: str,
    targets: list[tuple[str, str]],
    start_at: float,
    ready: Any,
    stop: Any,
) -> dict[str, Any]:
    """Every observation heard at or after `start_at` until `stop` is set, as
    (occurredAt, latency) pairs: the caller cuts them into its windows."""
    url = base_url.replace("http://", "ws://") + "/graphql"
    heard: list[tuple[float, float]] = []
    connected = 0

    async def listen(project_id: str, job_id: str) -> None:
        nonlocal connected
        async with websockets.connect(
            url, subprotocols=[Subprotocol("graphql-transport-ws")], max_queue=None
        ) as ws:
            await ws.send(
                json.dumps(
                    {"type": "connection_init", "payload": {"Authorization": f"Bearer {token}"}}
                )
            )
            assert json.loads(await ws.recv())["type"] == "connection_ack"
            await ws.send(
                json.dumps(
                    {
                        "id": "1",
                        "type": "subscribe",
                        "payload": {
                            "query": SUBSCRIBE,
                            "variables": {"p": project_id, "j": job_id, "after": 0},
                        },
                    }
                )
            )
            connected += 1
            while not stop.is_set():
                try:
                    raw = await asyncio.wait_for(ws.recv(), 0.5)
                except TimeoutError:
                    continue
                now = time.time()
                message = json.loads(raw)
                if message["type"] == "ping":
                    await ws.send(json.dumps({"type": "pong"}))
                    continue
                if message["type"] != "next":
                    raise RuntimeError(f"subscription: {message}")
                item = message["payload"]["data"]["jobObservations"]
                occurred = datetime.fromisoformat(item["occurredAt"]).timestamp()
                if item["kind"] == "job.observed" and start_at <= occurred:
                    heard.append((occurred, now - occurred))

    tasks = [asyncio.create_task(listen(p, j)) for p, j in targets]
    while connected < len(targets):
        await asyncio.sleep(0.05)
        for task in tasks:
            if task.done() and task.exception():
                raise task.exception()  # type: ignore[misc]
    ready.set()
    await asyncio.gather(*tasks)
    return {"heard": heard}


def fanout(heard: list[tuple[float, float]], start_at: float, stop_at: float) -> list[float]:
    """The latencies of the observations that occurred inside the window."""
    return [latency for occurred, latency in heard if start_at <= occurred < stop_at]


# --- observers, and the same clients against the stack floor ------------------------------

Request = tuple[dict[str, str], dict[str, Any]]  # headers, body


@asynccontextmanager
async def http_clients(base_url: str, count: int) -> AsyncIterator[list[httpx.AsyncClient]]:
    # One client (one kept-alive connection) per job, as separate observers would be: a
    # single client with a pool of hundreds spends more CPU finding a connection per
    # request than the server spends answering it.
    async with AsyncExitStack() as stack:
        yield [
            await stack.enter_async_context(httpx.AsyncClient(base_url=base_url, timeout=60))
            for _ in range(count)
        ]


async def pace(
    clients: list[httpx.AsyncClient],
    requests: list[Request],
    field: str,
    ok: str,
    interval: float,
    start_at: float,
    stop_at: float,
    lead: float = 1.0,
) -> dict[str, Any]:
    """Client i posts request i every `interval` seconds (0: back to back) from `lead`
    seconds before `start_at` to `stop_at`, each in a closed schedule (a late response delays only
    that client); the answers whose `field` is an `ok` sent inside the window, timed."""
    latencies: list[float] = []
    problems: dict[str, int] = {}
    done = 0

    async def post(index: int, client: httpx.AsyncClient, request: Request) -> None:
        nonlocal done
        headers, body = request
        # Phases spread evenly, so the load is a steady rate, not bursts.
        tick = start_at - lead + interval * index / len(requests)
        while tick < stop_at:
            await asyncio.sleep(max(0.0, tick - time.time()))
            sent = time.time()
            try:
                response = await client.post("/graphql", json=body, headers=headers)
            except httpx.TransportError as exc:
                # A kept-alive connection the server closed: count it, go on.
                name = type(exc).__name__
                problems[name] = problems.get(name, 0) + 1
                tick = max(tick + interval, time.time())
                continue
            answer = response.json()["data"][field]
            if start_at <= sent < stop_at:
                if answer["__typename"] == ok:
                    done += 1
                    latencies.append(time.time() - sent)
                else:
                    problems[answer["__typename"]] = problems.get(answer["__typename"], 0) + 1
            tick = max(tick + interval, time.time())

    await asyncio.gather(
        *(post(i, c, r) for i, (c, r) in enumerate(zip(clients, requests, strict=True)))
    )
    return {"done": done, "latencies": latencies, "problems": problems}


def observe_requests(jobs: list[tuple[str, str, str]]) -> list[Request]:
    return [
        (
            {"Authorization": f"Bearer {session}"},
            {"query": OBSERVE, "variables": {"input": {"jobId": job_id, "status": "RUNNING"}}},
        )
        for session, _, job_id in jobs
    ]


async def observe_window(
    base_url: str,
    jobs: list[tuple[str, str, str]],
    interval: float,
    start_at: float,
    seconds: float,
) -> dict[str, Any]:
    async with http_clients(base_url, len(jobs)) as clients:
        return await pace(
            clients,
            observe_requests(jobs),
            "observeJob",
            "JobPayload",
            interval,
            start_at,
            start_at + seconds,
        )


@dataclass
class Step:
    offered_per_s: float
    start_at: float
    stop_at: float
    observed: dict[str, Any]

    @property
    def achieved_per_s(self) -> float:
        return self.observed["done"] / (self.stop_at - self.start_at)

    @property
    def p99(self) -> float:
        return percentile(self.observed["latencies"], 99)

    def sustained(self, p99_limit: float) -> bool:
        return self.achieved_per_s >= 0.95 * self.offered_per_s and self.p99 <= p99_limit


async def ramp(
    base_url: str, jobs: list[tuple[str, str, str]], args: argparse.Namespace
) -> list[Step]:
    """Offered rates from `--ramp-start` up by `--ramp-factor` a step, each held for
    `--ramp-seconds` after a second of warm-up (`--ramp-warmup` seconds at the first
    rate before the first step), until a step is not sustained (its rate not achieved
    within 5 %, or observe p99 over `--ramp-p99-ms`) or `--ramp-steps` ran. If the first
    step is not sustained, the rate goes down by the same factor instead, to the first
    sustained step (not below 10/s)."""
    steps: list[Step] = []
    rate = args.ramp_start
    going_down = False
    limit = args.ramp_p99_ms / 1000
    async with http_clients(base_url, len(jobs)) as clients:
        requests = observe_requests(jobs)
        while len(steps) < args.ramp_steps:
            lead = args.ramp_warmup if not steps else 1.0
            start_at = time.time() + lead
            stop_at = start_at + args.ramp_seconds
            observed = await pace(
                clients, requests, "observeJob", "JobPayload", len(jobs) / rate, start_at,
                stop_at, lead,
            )  # fmt: skip
            step = Step(rate, start_at, stop_at, observed)
            steps.append(step)
            _say(
                f"ramp: offered {rate:.0f}/s, achieved {step.achieved_per_s:.1f}/s, observe p99 "
                f"{ms(step.p99)} ms"
            )
            going_down = going_down or (len(steps) == 1 and not step.sustained(limit))
            if going_down:
                if step.sustained(limit) or rate / args.ramp_factor < 10:
                    break
                rate /= args.ramp_factor
            else:
                if not step.sustained(limit):
                    break
                rate *= args.ramp_factor
    return steps


TOUCH, OK = "touch", "TouchPayload"  # the stack floor's mutation and its answer


async def stack_phases(
    base_url: str, count: int, interval: float, seconds: float
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The observers' clients, as many, against the stack floor's no-op mutation: back to
    back (its ceiling with these clients), then at the observers' offered rate."""
    requests = [({"Authorization": "Bearer stack-floor"}, touch_body(i)) for i in range(count)]
    async with http_clients(base_url, count) as clients:
        start_at = time.time() + 1.0
        closed = await pace(clients, requests, TOUCH, OK, 0.0, start_at, start_at + seconds)
        start_at = time.time() + 1.0
        paced = await pace(clients, requests, TOUCH, OK, interval, start_at, start_at + seconds)
    return closed, paced


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--servers", type=int, default=0, help="default 1 SQLite, 2 PostgreSQL")
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--subscribers", type=int, default=50)
    parser.add_argument("--projects", type=int, default=10)
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between reports")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured window")
    parser.add_argument(
        "--stack-seconds", type=float, default=8.0, help="each stack-floor window (two)"
    )
    parser.add_argument("--ramp", action="store_true", help="raise the offered rate in steps")
    parser.add_argument("--ramp-start", type=float, default=100.0, help="first offered rate")
    parser.add_argument("--ramp-factor", type=float, default=1.5)
    parser.add_argument("--ramp-seconds", type=float, default=8.0, help="each step's window")
    parser.add_argument("--ramp-steps", type=int, default=10, help="at most")
    parser.add_argument(
        "--ramp-warmup", type=float, default=5.0, help="unmeasured seconds before the first step"
    )
    parser.add_argument("--ramp-p99-ms", type=float, default=250.0, help="observe p99 limit")
    parser.add_argument("--database-url", help="SQLite file, or a hub_bench* PostgreSQL db")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument(
        "--server-wrapper", default="", help="command prefix for the server, e.g. a profiler"
    )
    args = parser.parse_args(argv)
    servers = args.servers or (1 if args.backend == "sqlite" else 2)
    if args.backend == "sqlite" and servers != 1:
        parser.error("SQLite runs as one server process")

    with scratch_database(args.backend, args.database_url, keep=args.keep) as scratch:
        runtime = scratch.runtime()
        operator_token, agent_token, project_ids = prepare(runtime, args.projects)
        runtime.close()
        with ExitStack() as stack:
            urls = [
                stack.enter_context(
                    served(
                        scratch,
                        workers=1,
                        synchronous="FULL",
                        pool_size=20,
                        wrapper=args.server_wrapper,
                    )
                ).url
                for _ in range(servers)
            ]
            observe_url, listen_url = urls[0], urls[-1]
            sessions = start_sessions(observe_url, [agent_token] * args.jobs)
            jobs = create_jobs(observe_url, operator_token, sessions, project_ids)
            step = max(1, len(jobs) // args.subscribers)
            targets = [(p, j) for _, p, j in jobs[::step][: args.subscribers]]
            # The stack floor first, hub's servers up and idle: the same clients, as many
            # as the observers, in one process like theirs, at the same offered rate.
            with floor_served() as floor:
                stack_closed, stack_paced = asyncio.run(
                    stack_phases(floor.url, len(jobs), args.interval, args.stack_seconds)
                )
            start_at = time.time() + 5.0
            context = multiprocessing.get_context("spawn")
            ready, stop, results = context.Event(), context.Event(), context.Queue()
            listener = context.Process(
                target=subscribers_main,
                args=(listen_url, operator_token, targets, start_at, ready, stop, results),
            )
            listener.start()
            if not ready.wait(60):
                raise SystemExit("subscribers did not connect")
            time.sleep(max(0.0, start_at - 1.0 - time.time()))
            if args.ramp:
                steps = asyncio.run(ramp(observe_url, jobs, args))
            else:
                observed = asyncio.run(
                    observe_window(observe_url, jobs, args.interval, start_at, args.seconds)
                )
            time.sleep(2.0)  # the last observations' deliveries
            stop.set()
            heard = results.get(timeout=120)["heard"]
            listener.join(30)

    stack_mutations_per_s = round(stack_closed["done"] / args.stack_seconds, 1)
    stack_figures = {
        "stack_mutations_per_s": stack_mutations_per_s,
        "stack_saturated_p99_ms": ms(percentile(stack_closed["latencies"], 99)),
        "stack_paced_per_s": round(stack_paced["done"] / args.stack_seconds, 1),
        "stack_p99_ms": ms(percentile(stack_paced["latencies"], 99)),
    }
    common = {
        "backend": args.backend,
        "servers": servers,
        "jobs": len(jobs),
        "subscribers": len(targets),
    }
    if args.ramp:
        figures = {**common, **ramp_figures(steps, heard, targets, jobs, args)}
        best = figures["max_sustained_observations_per_s"]
        figures["obs_ratio"] = (
            round(best / stack_mutations_per_s, 3) if stack_mutations_per_s else None
        )
        figures.update(stack_figures)
    else:
        delays = fanout(heard, start_at, start_at + args.seconds)
        # Each subscriber follows one job: it should hear every observation of that job.
        expected = round(observed["done"] * len(targets) / len(jobs))
        figures = {
            **common,
            "interval_s": args.interval,
            "offered_per_s": round(len(jobs) / args.interval, 1),
            "seconds": args.seconds,
            "observations": observed["done"],
            "observations_per_s": round(observed["done"] / args.seconds, 1),
            "observe_p50_ms": ms(percentile(observed["latencies"], 50)),
            "observe_p99_ms": ms(percentile(observed["latencies"], 99)),
            "problems": observed["problems"],
            "fanout_received": len(delays),
            "fanout_expected_about": expected,
            "fanout_p50_ms": ms(percentile(delays, 50)),
            "fanout_p99_ms": ms(percentile(delays, 99)),
            "fanout_max_ms": ms(max(delays, default=0.0)),
            **stack_figures,
        }
    figures["load_1min"] = round(os.getloadavg()[0], 1)
    print(json.dumps(figures), flush=True)


def ramp_figures(
    steps: list[Step],
    heard: list[tuple[float, float]],
    targets: list[tuple[str, str]],
    jobs: list[tuple[str, str, str]],
    args: argparse.Namespace,
) -> dict[str, Any]:
    """Each step's rates, observe p99 and fan-out p99; the last sustained step's."""
    rows = []
    for step in steps:
        delays = fanout(heard, step.start_at, step.stop_at)
        rows.append(
            {
                "offered_per_s": round(step.offered_per_s, 1),
                "observations_per_s": round(step.achieved_per_s, 1),
                "observe_p99_ms": ms(step.p99),
                "fanout_p99_ms": ms(percentile(delays, 99)),
                "fanout_received": len(delays),
                "fanout_expected_about": round(step.observed["done"] * len(targets) / len(jobs)),
                "problems": step.observed["problems"],
            }
        )
    sustained = [
        row
        for step, row in zip(steps, rows, strict=True)
        if step.sustained(args.ramp_p99_ms / 1000)
    ]
    best = max(sustained, key=lambda row: row["offered_per_s"], default=None)
    return {
        "ramp_seconds": args.ramp_seconds,
        "ramp_p99_limit_ms": args.ramp_p99_ms,
        "steps": rows,
        "max_sustained_observations_per_s": best["observations_per_s"] if best else 0.0,
        "max_sustained_offered_per_s": best["offered_per_s"] if best else 0.0,
        "fanout_p99_ms_at_max": best["fanout_p99_ms"] if best else None,
    }


def _say(message: str) -> None:
    print(message, flush=True)


if __name__ == "__main__":
    main()
