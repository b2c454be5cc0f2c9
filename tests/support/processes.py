"""Real `hub serve` processes on a test database, each on its own port of 127.0.0.1.

Unlike `tests.support.server` (a uvicorn thread sharing the test's runtime), these are
separate operating-system processes: what holds between them holds only through the
database (row locks, the event log, LISTEN/NOTIFY).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

import hub

# The `hub` script of this interpreter's environment.
HUB = str(Path(sys.executable).with_name("hub"))
# The source tree under test, wherever the installed package points.
SOURCE = str(Path(hub.__file__).resolve().parents[1])
BOOT_SECONDS = 90.0  # booting is slow on a busy machine


def wait_until(condition: Callable[[], bool], timeout: float = 15.0) -> bool:
    """Wait for a state change (not for time to pass), with a deadline."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass(frozen=True)
class ServerProcess:
    process: subprocess.Popen[bytes]
    base_url: str
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def ready(self) -> bool:
        try:
            return httpx.get(f"{self.base_url}/readyz", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    def lost_its_port(self) -> bool:
        """Exited at boot because another process bound the port first (between
        `free_port` choosing it and the server binding it)."""
        return self.process.poll() is not None and "address already in use" in self.log()


def server_environment(database_url: str, workdir: Path, *, poll_seconds: float) -> dict[str, str]:
    """The environment of a `hub serve` process of the tests, its files under `workdir`."""
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [SOURCE, os.environ.get("PYTHONPATH")])),
        "HUB_DATABASE_URL": database_url,
        "HUB_EVENT_POLL_SECONDS": str(poll_seconds),
        "HUB_VAR_DIR": str(workdir / "var"),
        "HUB_ARTIFACT_DIR": str(workdir / "artifacts"),
        "HUB_SECRET_KEY": "test-secret-key-0123456789",
        # The checks the in-process test server runs with (tests/conftest.py).
        "HUB_STRICT_CLOCK": "true",
        "HUB_STRICT_PROBLEMS": "true",
    }


def start_server(
    env: dict[str, str], workdir: Path, *, name: str, port: int | None = None, workers: int = 1
) -> ServerProcess:
    """One `hub serve` process, started (not yet ready), on `port` or a free one. With one
    worker the process is the server itself (uvicorn runs in it): its pid is the one to
    kill to crash it."""
    port = port or free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    log_path = workdir / f"server-{name}-{port}.log"
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [HUB, "serve", "--host", "127.0.0.1", "--workers", str(workers), "--port", str(port)],
            cwd=workdir,  # so no developer's .env leaks into the test
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            # Its own process group: a server that ignores SIGTERM is killed with its
            # workers, not leaving them behind.
            start_new_session=True,
        )
    return ServerProcess(process, f"http://127.0.0.1:{port}", log_path)


def stop_server(server: ServerProcess) -> None:
    """Terminate, then kill the group if it does not end."""
    server.process.terminate()
    try:
        server.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(server.process.pid, 9)
        server.process.wait(timeout=15)


@contextmanager
def hub_servers(
    count: int,
    database_url: str,
    workdir: Path,
    *,
    poll_seconds: float,
    workers: int = 1,
    settings: dict[str, str] | None = None,
) -> Iterator[list[ServerProcess]]:
    """`count` processes of `hub serve --workers {workers}`, started together and all
    ready before the block runs. `poll_seconds` is the followers' backstop poll: far
    beyond a test's deadlines, only LISTEN/NOTIFY can deliver across processes.
    `settings` adds `HUB_*` environment variables."""
    env = {
        **server_environment(database_url, workdir, poll_seconds=poll_seconds),
        **(settings or {}),
    }

    def start(index: int) -> ServerProcess:
        return start_server(env, workdir, name=str(index), workers=workers)

    started: list[ServerProcess] = []
    try:
        started.extend(start(index) for index in range(count))
        deadline = time.monotonic() + BOOT_SECONDS
        restarts = 0
        while not all(server.ready() for server in started):
            for index, server in enumerate(started):
                if server.lost_its_port() and restarts < 3:
                    restarts += 1
                    started[index] = start(index)
                else:
                    assert server.process.poll() is None, server.log()
            assert time.monotonic() < deadline, [server.log() for server in started]
            time.sleep(0.05)
        yield started
    finally:
        for server in started:
            server.process.terminate()
        for server in started:
            try:
                server.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(server.process.pid, 9)
                server.process.wait(timeout=15)
