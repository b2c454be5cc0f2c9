"""The HTTP + GraphQL stack alone: how many mutations per second can it serve here?

A minimal Strawberry schema (one mutation that takes an input object and returns a
union payload, as hub's do, and touches no database) on Starlette, served by uvicorn in
its own process like `bench/claims.py`'s server, driven by N client threads with
`httpx` exactly as `bench/claims.py` drives hub. Strawberry's parser and validation
caches are on. What it prints is an upper bound for any service on this stack on this
machine: every hub mutation does this work and then its own.

    .venv/bin/python bench/stack_floor.py --clients 32 --seconds 10

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import httpx
import strawberry
from claims import Server, free_port
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


@contextmanager
def floor_served() -> Iterator[Server]:
    """The stack-floor app in its own uvicorn process, as `claims.served` runs hub's."""
    port = free_port()
    here = os.path.dirname(os.path.abspath(__file__))
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "stack_floor:app", "--factory", "--host",
         "127.0.0.1", "--port", str(port), "--log-level", "warning", "--no-access-log"],
        cwd=here, start_new_session=True,
    )  # fmt: skip
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


def drive(base_url: str, clients: int, seconds: float) -> dict[str, Any]:
    latencies: list[list[float]] = [[] for _ in range(clients)]
    start = time.perf_counter() + 1.0  # a second of warm-up
    stop = start + seconds

    def client(index: int) -> None:
        body = {
            "query": MUTATION,
            "variables": {"input": {"id": f"t{index}", "generation": 1, "idempotencyKey": "k"}},
        }
        with httpx.Client(base_url=base_url, timeout=30) as http:
            while time.perf_counter() < stop:
                sent = time.perf_counter()
                answer = http.post("/graphql", json=body).json()
                assert answer["data"]["touch"]["__typename"] == "TouchPayload", answer
                if sent >= start:
                    latencies[index].append(time.perf_counter() - sent)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    merged = [value for values in latencies for value in values]
    return {"requests": len(merged), "latencies": merged}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args(argv)

    with floor_served() as server:
        figures = drive(server.url, args.clients, args.seconds)
    latencies = figures["latencies"]
    result = {
        "clients": args.clients,
        "seconds": args.seconds,
        "mutations_per_s": round(figures["requests"] / args.seconds, 1),
        "p50_ms": ms(percentile(latencies, 50)),
        "p99_ms": ms(percentile(latencies, 99)),
    }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
