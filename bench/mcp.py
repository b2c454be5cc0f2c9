"""What `hub agent mcp` adds to the agent client: a tool call beside the same call made
in process, and its cold start beside the floor of a Python process and of the MCP SDK's
own minimal server.

One real server (`hub serve`'s app on uvicorn, as in `claims.py`) on a scratch database;
two agents, each its own principal, session and state file, and one GENERAL task per
agent per round, made in bulk up front:

- **the client**: `AgentClient` in this process claims its round's task by id, records a
  checkpoint and relinquishes the task (claim and checkpoint timed apart);
- **the tool calls**: one long-lived `hub agent mcp` process (the `hub` command beside
  this interpreter), driven by the MCP SDK's client over stdio, does the same with
  `claimTask` {projectId, taskId}, `recordCheckpoint` and `relinquishAttempt`.

Rounds alternate the two, and which goes first, so that machine noise hits both alike;
a few unmeasured rounds warm both up first. `mcp_over_client_ratio_*` is the median tool
call over the median client call (the goal: at most 1.2). `sdk_call_ms` is a tool call
on the SDK's minimal server that does nothing: the stdio round trip alone.

Cold start, `--starts` times each, interleaved: spawning `hub agent mcp` until its first
`tools/list` is answered (initialize, then list_tools), beside `python -c pass` (spawn to
exit) and the SDK's minimal stdio server (one dummy tool, `mcp.server.lowlevel.Server`)
to its first `tools/list`; medians (the goal: a cold start of at most 1 s).

    .venv/bin/python bench/mcp.py --backend sqlite
    .venv/bin/python bench/mcp.py --backend postgresql
    .venv/bin/python bench/mcp.py --rounds 5 --starts 2     # a quick look

The last line printed is one JSON object with the figures.
"""

# ruff: noqa: E402
from __future__ import annotations

# This file is named like the SDK's package: running it puts bench/ first on the path,
# where `import mcp` would find this file. bench/ goes last instead (for `scratch` and
# `claims`), before anything is imported from either.
import sys
from pathlib import Path

_BENCH = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _BENCH]
sys.path.append(str(_BENCH))

import argparse
import json
import os
import statistics
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from claims import create_agents, insert_tasks, served
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from scratch import Scratch, ms, percentile, scratch_database
from sqlalchemy import text

from hub.client.agent import AgentClient
from hub.client.state import StateFile
from hub.identity import service as identity
from hub.projects import service as projects
from hub.runtime import Runtime

DEFAULT_DATABASE = "postgresql://postgres@127.0.0.1:5432/hub_bench_mcp"
HUB = str(Path(sys.executable).with_name("hub"))

# The SDK's own minimal stdio server: one tool that does nothing.
SDK_SERVER = """
import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

NOOP = types.Tool(name="noop", description="Does nothing.",
                  input_schema={"type": "object", "properties": {}})

async def on_list_tools(_ctx, _params):
    return types.ListToolsResult(tools=[NOOP])

async def on_call_tool(_ctx, _params):
    return types.CallToolResult(content=[types.TextContent(type="text", text="{}")])

server = Server("floor", on_list_tools=on_list_tools, on_call_tool=on_call_tool)

async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

anyio.run(main)
"""


# --- the fixture: two agents, a project, its tasks ---------------------------------------


@dataclass(frozen=True)
class Fixture:
    project_id: str
    client_token: str
    mcp_token: str
    tasks: list[str]  # OPEN GENERAL tasks, two a round


def prepare(runtime: Runtime, tasks: int) -> Fixture:
    """Principals and tokens through the service layer; tasks in bulk (`claims.py`'s)."""

    def people(uow: Any) -> tuple[str, str, list[str]]:
        operator = identity.create_principal(
            uow, name="bench-operator", kind="human", operator=True
        )
        token = identity.create_token(uow, principal=operator.id, label="bench")
        return operator.id, token.plaintext, create_agents(uow, 2)

    operator_id, operator_token, (client_token, mcp_token) = runtime.write(people)
    project = runtime.write(
        lambda uow: projects.create_project(
            uow, identity.authenticate(uow, operator_token), name="mcp bench"
        )
    )
    insert_tasks(runtime, project.id, operator_id, tasks)
    with runtime.database.engine.connect() as connection:
        ids = connection.execute(
            text("SELECT id FROM tasks WHERE project_id = :p ORDER BY id"), {"p": project.id}
        ).scalars()
        return Fixture(project.id, client_token, mcp_token, list(ids))


# --- the MCP side --------------------------------------------------------------------------


def child_env(extra: dict[str, str]) -> dict[str, str]:
    """What a child process gets beyond the SDK's default environment: the hub this bench
    imports (PYTHONPATH), and `extra`."""
    passed = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}
    return {**passed, **extra}


def hub_mcp(server: str, token: str, state: Path, workdir: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=HUB,
        args=["agent", "mcp", "--harness", "bench"],
        env=child_env({"HUB_SERVER": server, "HUB_TOKEN": token, "HUB_AGENT_STATE": str(state)}),
        cwd=workdir,
    )


def sdk_server(workdir: Path) -> StdioServerParameters:
    # Started in the scratch folder: `python -c` puts its working directory on the path.
    return StdioServerParameters(
        command=sys.executable, args=["-c", SDK_SERVER], env=child_env({}), cwd=workdir
    )


@asynccontextmanager
async def session(params: StdioServerParameters) -> AsyncIterator[ClientSession]:
    async with stdio_client(params) as (read, write), ClientSession(read, write) as opened:
        await opened.initialize()
        yield opened


async def tool(opened: ClientSession, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await opened.call_tool(name, arguments)
    if result.is_error:
        said = "".join(c.text for c in result.content if isinstance(c, types.TextContent))
        raise SystemExit(f"{name}: {said[:1000]}")
    return result.structured_content or {}


# --- tool calls beside client calls ----------------------------------------------------------


@dataclass
class Rounds:
    client_claim: list[float] = field(default_factory=list)
    client_checkpoint: list[float] = field(default_factory=list)
    mcp_claim: list[float] = field(default_factory=list)
    mcp_checkpoint: list[float] = field(default_factory=list)
    sdk_call: list[float] = field(default_factory=list)


async def run_rounds(
    scratch: Scratch, server: str, fixture: Fixture, rounds: int, warmup: int
) -> Rounds:
    workdir = scratch.folder / "work"
    workdir.mkdir(exist_ok=True)
    client = AgentClient(StateFile(scratch.folder / "client-state.json"))
    client.start(
        server=server,
        token=fixture.client_token,
        workstation="bench-ws",
        harness="bench",
        instance=uuid.uuid4().hex[:12],
    )
    measured = Rounds()
    project = fixture.project_id
    params = hub_mcp(server, fixture.mcp_token, scratch.folder / "mcp-state.json", workdir)
    async with session(params) as hub, session(sdk_server(scratch.folder)) as sdk:
        await tool(hub, "startSession", {})

        # The client runs on the event loop's thread, blocking it: nothing is in flight
        # on the MCP session meanwhile, and the client's figure carries no thread hop.
        def by_client(task_id: str, keep: bool) -> None:
            claim = _timed(lambda: client.claim(project=project, task_id=task_id, workdir=workdir))
            checkpoint = _timed(lambda: client.checkpoint(summary="bench: halfway"))
            client.relinquish(reason="bench: round over")
            if keep:
                measured.client_claim.append(claim)
                measured.client_checkpoint.append(checkpoint)

        async def by_tools(task_id: str, keep: bool) -> None:
            started = time.perf_counter()
            claimed = await tool(hub, "claimTask", {"projectId": project, "taskId": task_id})
            claim = time.perf_counter() - started
            if claimed.get("task", {}).get("id") != task_id:
                raise SystemExit(f"claimTask answered {claimed}")
            started = time.perf_counter()
            await tool(hub, "recordCheckpoint", {"summary": "bench: halfway"})
            checkpoint = time.perf_counter() - started
            await tool(hub, "relinquishAttempt", {"reason": "bench: round over"})
            started = time.perf_counter()
            await tool(sdk, "noop", {})
            noop = time.perf_counter() - started
            if keep:
                measured.mcp_claim.append(claim)
                measured.mcp_checkpoint.append(checkpoint)
                measured.sdk_call.append(noop)

        for index in range(warmup + rounds):
            keep = index >= warmup
            mine, theirs = fixture.tasks[2 * index], fixture.tasks[2 * index + 1]
            if index % 2:
                by_client(mine, keep)
                await by_tools(theirs, keep)
            else:
                await by_tools(theirs, keep)
                by_client(mine, keep)
    return measured


def _timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


# --- cold start ------------------------------------------------------------------------------


@dataclass
class Starts:
    hub: list[float] = field(default_factory=list)
    python: list[float] = field(default_factory=list)
    sdk: list[float] = field(default_factory=list)
    tools: int = 0


async def first_tools_list(params: StdioServerParameters) -> tuple[float, int]:
    """Seconds from spawning the server to the answer of its first tools/list, and how
    many tools it listed (the process is stopped afterwards, untimed)."""
    started = time.perf_counter()
    async with session(params) as opened:
        listed = await opened.list_tools()
        took = time.perf_counter() - started
    return took, len(listed.tools)


def python_pass(workdir: Path) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], cwd=workdir, check=True)
    return time.perf_counter() - started


async def cold_starts(scratch: Scratch, server: str, token: str, starts: int) -> Starts:
    """Each kind in turn, once unmeasured first (the page cache warm for all three)."""
    measured = Starts()
    workdir = scratch.folder / "work"
    workdir.mkdir(exist_ok=True)
    for index in range(starts + 1):
        keep = index > 0
        # A new state file each time: a harness starting a new agent.
        state = scratch.folder / f"cold-{index}" / "agent-state.json"
        hub_took, measured.tools = await first_tools_list(hub_mcp(server, token, state, workdir))
        python_took = python_pass(scratch.folder)
        sdk_took, _ = await first_tools_list(sdk_server(scratch.folder))
        if keep:
            measured.hub.append(hub_took)
            measured.python.append(python_took)
            measured.sdk.append(sdk_took)
    return measured


# --- the run ---------------------------------------------------------------------------------


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def _ratio(over: float, under: float) -> float | None:
    return round(over / under, 2) if under else None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--rounds", type=int, default=60, help="measured rounds")
    parser.add_argument("--warmup", type=int, default=5, help="unmeasured rounds first")
    parser.add_argument("--starts", type=int, default=5, help="cold starts of each kind")
    parser.add_argument("--database-url", help=f"SQLite file, or a hub_bench* database "
                        f"(PostgreSQL default: {DEFAULT_DATABASE})")  # fmt: skip
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.starts < 1:
        parser.error("--rounds and --starts must be at least 1")
    url = args.database_url or (DEFAULT_DATABASE if args.backend == "postgresql" else None)

    started = time.perf_counter()
    with scratch_database(args.backend, url, keep=args.keep) as scratch:
        runtime = scratch.runtime()
        fixture = prepare(runtime, 2 * (args.warmup + args.rounds))
        runtime.close()
        print(f"{args.backend}: {len(fixture.tasks)} tasks ready in "
              f"{time.perf_counter() - started:.1f} s; scratch {scratch.folder}",
              flush=True)  # fmt: skip
        with served(scratch, workers=1, synchronous="FULL", pool_size=4, wrapper="") as server:
            rounds = anyio.run(run_rounds, scratch, server.url, fixture, args.rounds, args.warmup)
            starts = anyio.run(cold_starts, scratch, server.url, fixture.mcp_token, args.starts)

    def figures(name: str, values: list[float]) -> dict[str, float]:
        return {f"{name}_ms": ms(_median(values)), f"{name}_p95_ms": ms(percentile(values, 95))}

    for name, values in (
        ("client claim", rounds.client_claim), ("tool claim", rounds.mcp_claim),
        ("client checkpoint", rounds.client_checkpoint),
        ("tool checkpoint", rounds.mcp_checkpoint), ("sdk no-op call", rounds.sdk_call),
        ("hub agent mcp cold start", starts.hub), ("python -c pass", starts.python),
        ("sdk server cold start", starts.sdk),
    ):  # fmt: skip
        print(f"{name}: median {ms(_median(values))} ms, p95 {ms(percentile(values, 95))} ms, "
              f"min {ms(min(values))} ms, max {ms(max(values))} ms", flush=True)  # fmt: skip
    cold, sdk_floor = _median(starts.hub), _median(starts.sdk)
    print(json.dumps({
        "backend": args.backend,
        "rounds": args.rounds,
        "warmup": args.warmup,
        "starts": args.starts,
        **figures("client_claim", rounds.client_claim),
        **figures("mcp_claim", rounds.mcp_claim),
        **figures("client_checkpoint", rounds.client_checkpoint),
        **figures("mcp_checkpoint", rounds.mcp_checkpoint),
        **figures("sdk_call", rounds.sdk_call),
        "mcp_over_client_ratio_claim": _ratio(
            _median(rounds.mcp_claim), _median(rounds.client_claim)
        ),
        "mcp_over_client_ratio_checkpoint": _ratio(
            _median(rounds.mcp_checkpoint), _median(rounds.client_checkpoint)
        ),
        "cold_start_ms": ms(cold),
        "floor_python_ms": ms(_median(starts.python)),
        "floor_sdk_server_ms": ms(sdk_floor),
        "cold_start_over_sdk_floor": _ratio(cold, sdk_floor),
        "tools_listed": starts.tools,
        "total_s": round(time.perf_counter() - started, 1),
        "load_1min": round(os.getloadavg()[0], 1),
    }), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
