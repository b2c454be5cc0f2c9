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

    .venv/bin/python bench/observations.py --backend sqlite
    .venv/bin/python bench/observations.py --backend postgresql --servers 2

The last line printed is one JSON object with the figures (observations_per_s,
fanout_p99_ms, ...).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import time
import uuid
from contextlib import AsyncExitStack, ExitStack
from datetime import datetime
from typing import Any

import httpx
import websockets
from claims import graphql, served, start_sessions
from scratch import ms, percentile, scratch_database
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
    stop_at: float,
    ready: Any,
    results: Any,
) -> None:
    results.put(asyncio.run(_subscribers(base_url, token, targets, start_at, stop_at, ready)))


async def _subscribers(
    base_url: str,
    token: str,
    targets: list[tuple[str, str]],
    start_at: float,
    stop_at: float,
    ready: Any,
) -> dict[str, Any]:
    url = base_url.replace("http://", "ws://") + "/graphql"
    latencies: list[float] = []
    received = 0
    connected = 0

    async def listen(project_id: str, job_id: str) -> None:
        nonlocal received, connected
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
            while time.time() < stop_at + 2:
                try:
                    raw = await asyncio.wait_for(ws.recv(), max(0.1, stop_at + 2 - time.time()))
                except TimeoutError:
                    break
                now = time.time()
                message = json.loads(raw)
                if message["type"] == "ping":
                    await ws.send(json.dumps({"type": "pong"}))
                    continue
                if message["type"] != "next":
                    raise RuntimeError(f"subscription: {message}")
                item = message["payload"]["data"]["jobObservations"]
                occurred = datetime.fromisoformat(item["occurredAt"]).timestamp()
                if item["kind"] == "job.observed" and start_at <= occurred < stop_at:
                    received += 1
                    latencies.append(now - occurred)

    tasks = [asyncio.create_task(listen(p, j)) for p, j in targets]
    while connected < len(targets):
        await asyncio.sleep(0.05)
        for task in tasks:
            if task.done() and task.exception():
                raise task.exception()  # type: ignore[misc]
    ready.set()
    await asyncio.gather(*tasks)
    return {"received": received, "latencies": latencies}


# --- observers -------------------------------------------------------------------------


async def observe_all(
    base_url: str,
    jobs: list[tuple[str, str, str]],
    interval: float,
    start_at: float,
    stop_at: float,
) -> dict[str, Any]:
    latencies: list[float] = []
    problems: dict[str, int] = {}
    done = 0
    # One client (one kept-alive connection) per job, as separate observers would be: a
    # single client with a pool of hundreds spends more CPU finding a connection per
    # request than the server spends answering it.
    async with AsyncExitStack() as clients:

        async def observe(index: int, session: str, job_id: str) -> None:
            nonlocal done
            client = await clients.enter_async_context(
                httpx.AsyncClient(base_url=base_url, timeout=60)
            )
            headers = {"Authorization": f"Bearer {session}"}
            body = {
                "query": OBSERVE,
                "variables": {"input": {"jobId": job_id, "status": "RUNNING"}},
            }
            # Phases spread evenly, so the load is a steady rate, not bursts.
            tick = start_at - 1.0 + interval * index / len(jobs)
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
                answer = response.json()["data"]["observeJob"]
                if start_at <= sent < stop_at:
                    if answer["__typename"] == "JobPayload":
                        done += 1
                        latencies.append(time.time() - sent)
                    else:
                        problems[answer["__typename"]] = problems.get(answer["__typename"], 0) + 1
                tick = max(tick + interval, time.time())

        await asyncio.gather(*(observe(i, s, j) for i, (s, _, j) in enumerate(jobs)))
    return {"done": done, "latencies": latencies, "problems": problems}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--servers", type=int, default=0, help="default 1 SQLite, 2 PostgreSQL")
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--subscribers", type=int, default=50)
    parser.add_argument("--projects", type=int, default=10)
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between reports")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured window")
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
            start_at = time.time() + 5.0
            stop_at = start_at + args.seconds
            context = multiprocessing.get_context("spawn")
            ready, results = context.Event(), context.Queue()
            listener = context.Process(
                target=subscribers_main,
                args=(listen_url, operator_token, targets, start_at, stop_at, ready, results),
            )
            listener.start()
            if not ready.wait(60):
                raise SystemExit("subscribers did not connect")
            observed = asyncio.run(observe_all(observe_url, jobs, args.interval, start_at, stop_at))
            heard = results.get(timeout=120)
            listener.join(30)
    # Each subscriber follows one job: it should hear every observation of that job.
    expected = round(observed["done"] * len(targets) / len(jobs))
    figures = {
        "backend": args.backend,
        "servers": servers,
        "jobs": len(jobs),
        "subscribers": len(targets),
        "interval_s": args.interval,
        "seconds": args.seconds,
        "observations": observed["done"],
        "observations_per_s": round(observed["done"] / args.seconds, 1),
        "observe_p50_ms": ms(percentile(observed["latencies"], 50)),
        "observe_p99_ms": ms(percentile(observed["latencies"], 99)),
        "problems": observed["problems"],
        "fanout_received": heard["received"],
        "fanout_expected_about": expected,
        "fanout_p50_ms": ms(percentile(heard["latencies"], 50)),
        "fanout_p99_ms": ms(percentile(heard["latencies"], 99)),
        "fanout_max_ms": ms(max(heard["latencies"], default=0.0)),
    }
    print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
