"""The HTTP + GraphQL stack alone: how many mutations per second can it serve here?

A minimal Strawberry schema (one mutation that takes an input object and returns a
union payload, as hub's do, and touches no database) on Starlette, served by uvicorn in
its own process like `bench/claims.py`'s server, driven by N client threads with
`httpx` exactly as `bench/claims.py` drives hub. Strawberry's parser and validation
caches are on. What it prints is an upper bound for any service on this stack on this
machine: every hub mutation does this work and then its own.

    .venv/bin/python bench/stack_floor.py --clients 32 --seconds 10

The last line printed is one JSON object with the figures.

Other benches import it: `floor_served` and `drive` run the same floor inside their own
invocation (`bench/claims.py`, `bench/observations.py`), and `free_port` and `Server`
are the server plumbing every bench shares.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import strawberry
from scratch import ms, percentile
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from strawberry.asgi import GraphQL
from strawberry.extensions import ParserCache, ValidationCache

MUTATION = """mutation($input: TouchInput!) { touch(input: $input) { __typename
  ... on TouchPayload { id generation serverTime } ... on Problem { code message } } }"""


@strawberry.input
class TouchInput:
    id: strawberry.ID
    generation: int
    idempotency_key: str


@strawberry.type
class TouchPayload:
    id: strawberry.ID
    generation: int
    server_time: datetime


@strawberry.type
class Problem:
    code: str
    message: str


@strawberry.type
class Query:
    @strawberry.field
    def ok(self) -> bool:
        return True


@strawberry.type
class Mutation:
    @strawberry.mutation
    def touch(self, input: TouchInput) -> TouchPayload | Problem:
        return TouchPayload(
            id=input.id, generation=input.generation + 1, server_time=datetime.now(UTC)
        )


async def body(request: Request) -> JSONResponse:
    """A request body read to its end and dropped: the floor of any upload on this stack
    (`bench/artifacts.py`)."""
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
    return JSONResponse({"sizeBytes": size}, status_code=201)


def app() -> Starlette:
    """The server side (uvicorn's factory in the server process)."""
    schema = strawberry.Schema(
        query=Query,
        mutation=Mutation,
        extensions=[ParserCache(maxsize=100), ValidationCache(maxsize=100)],
    )
    return Starlette(
        routes=[
            Route("/graphql", GraphQL(schema), methods=["POST"]),
            Route("/body", body, methods=["POST"]),
        ]
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class Server:
    url: str
    pid: int

    def cpu_seconds(self) -> float:
        """CPU time (user + system) of the server's live processes, workers included."""
        return _tree_cpu_seconds(self.pid)


def _tree_cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:  # gone, or not Linux
        return 0.0
    return total + sum(_tree_cpu_seconds(int(child)) for child in children)


@contextmanager
def floor_served(workers: int = 1) -> Iterator[Server]:
    """The stack-floor app in its own uvicorn process (`workers` of them under one
    parent, as `claims.served` runs hub's)."""
    port = free_port()
    here = os.path.dirname(os.path.abspath(__file__))
    command = [
        sys.executable, "-m", "uvicorn", "stack_floor:app", "--factory", "--host",
        "127.0.0.1", "--port", str(port), "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip
    if workers > 1:
        command += ["--workers", str(workers)]
    server = subprocess.Popen(command, cwd=here, start_new_session=True)
    base_url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.post(f"{base_url}/graphql", json={"query": "{ ok }"}, timeout=2)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("the stack-floor server did not start") from None
                time.sleep(0.2)
        yield Server(base_url, server.pid)
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGINT)
            server.wait(timeout=30)


def touch_body(index: int) -> dict[str, Any]:
    """The no-op mutation's request body for client `index`."""
    return {
        "query": MUTATION,
        "variables": {"input": {"id": f"t{index}", "generation": 1, "idempotencyKey": "k"}},
    }


def drive(server: Server, clients: int, seconds: float, warmup: float = 1.0) -> dict[str, Any]:
    """`clients` threads, each its own keep-alive `httpx` client posting the no-op
    mutation back to back (as `claims.py`'s agents post theirs), for `warmup` unmeasured
    seconds and then `seconds` measured: the requests and their latencies in the window,
    and the server's CPU seconds in it."""
    latencies: list[list[float]] = [[] for _ in range(clients)]
    start = time.perf_counter() + warmup
    stop = start + seconds

    def client(index: int) -> None:
        body = touch_body(index)
        headers = {"Authorization": "Bearer stack-floor"}  # as many bytes as hub's requests
        with httpx.Client(base_url=server.url, headers=headers, timeout=60) as http:
            while time.perf_counter() < stop:
                sent = time.perf_counter()
                response = http.post("/graphql", json=body)
                response.raise_for_status()
                answer = response.json()
                ended = time.perf_counter()
                assert answer["data"]["touch"]["__typename"] == "TouchPayload", answer
                if sent >= start and ended <= stop:
                    latencies[index].append(ended - sent)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    time.sleep(max(0.0, start - time.perf_counter()))
    cpu = server.cpu_seconds()
    time.sleep(max(0.0, stop - time.perf_counter()))
    cpu = server.cpu_seconds() - cpu
    for thread in threads:
        thread.join()
    merged = [value for values in latencies for value in values]
    return {"requests": len(merged), "latencies": merged, "server_cpu": cpu, "seconds": seconds}


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """`drive`'s runs merged (e.g. the halves before and after another bench's run):
    mutations a second over their windows, p50 and p99, server CPU per mutation."""
    latencies = [value for run in runs for value in run["latencies"]]
    requests = sum(run["requests"] for run in runs)
    seconds = sum(run["seconds"] for run in runs)
    return {
        "mutations_per_s": round(requests / seconds, 1) if seconds else 0.0,
        "p50_ms": ms(percentile(latencies, 50)),
        "p99_ms": ms(percentile(latencies, 99)),
        "server_cpu_ms_per_mutation": ms(sum(run["server_cpu"] for run in runs) / max(1, requests)),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=1, help="server processes")
    args = parser.parse_args(argv)

    with floor_served(args.workers) as server:
        run = drive(server, args.clients, args.seconds)
    result = {"clients": args.clients, "seconds": args.seconds, **summarize([run])}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
