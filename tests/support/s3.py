"""A real S3-compatible server for the S3 store's tests, and the `store` fixtures.

The suite starts moto's standalone server (`python -m moto.server`, from the dev extra)
as a subprocess on 127.0.0.1 and a free port, the first time a test asks for it, and
stops it at the end of the run; each test gets its own bucket. `HUB_TEST_S3=mandatory`
(CI sets it) makes a server that cannot be started a failure; otherwise the S3 half
skips, saying why. Registered by tests/conftest.py (`pytest_plugins`).

Fixtures:
- `s3_server` (session): the running server (`S3Server`: endpoint and credentials);
- `s3_bucket`: a new, empty bucket's name;
- `artifact_store`: "filesystem" or "s3", one run each (the S3 half is marked `s3`);
- `store_settings`: the `Settings` fields that select that store (empty for the
  filesystem; endpoint, bucket, prefix `hub` and credentials for S3), to pass to
  `runtime_settings(..., **store_settings)`;
- `store`: the `Store` those settings make (`store_for`), files under `tmp_path`;
- `both_stores`: a mark that runs a test on both stores, where a conftest makes the
  filesystem the default (tests/artifacts/conftest.py).
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from hub.artifacts._store import Store, store_for
from hub.settings import Settings

S3_MANDATORY = os.environ.get("HUB_TEST_S3") == "mandatory"
STARTUP_SECONDS = 60


@dataclass(frozen=True)
class S3Server:
    endpoint_url: str
    region: str = "us-east-1"
    # moto accepts any credentials; these prove that configured ones reach the client.
    access_key_id: str = "hub-test-key"
    secret_access_key: str = "hub-test-secret"

    def create_bucket(self) -> str:
        name = f"hub-test-{uuid.uuid4().hex[:16]}"
        httpx.put(f"{self.endpoint_url}/{name}", timeout=10).raise_for_status()
        return name

    def settings(self, bucket: str, prefix: str = "hub") -> dict[str, Any]:
        """The `Settings` fields that point hub at `bucket` on this server."""
        return {
            "artifact_store": "s3",
            "s3_endpoint_url": self.endpoint_url,
            "s3_bucket": bucket,
            "s3_region": self.region,
            "s3_prefix": prefix,
            "s3_access_key_id": self.access_key_id,
            "s3_secret_access_key": self.secret_access_key,
        }


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(url: str) -> bool:
    try:
        httpx.get(url, timeout=2)
    except httpx.HTTPError:
        return False
    return True


def _start_moto(logs: Path) -> tuple[subprocess.Popen[bytes], S3Server] | str:
    """A running server, or why there is none."""
    if importlib.util.find_spec("moto") is None:
        return "moto is not installed (pip install -e '.[dev]')"
    reason = ""
    # The free port is only free when asked; another process may take it before moto
    # binds it, so a server that dies at once is tried again on another port.
    for _ in range(3):
        port = _free_port()
        log = logs / f"moto-{port}.log"
        with log.open("wb") as output:
            process = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                stdout=output,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        server = S3Server(f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + STARTUP_SECONDS
        while process.poll() is None and time.monotonic() < deadline:
            if _answers(server.endpoint_url):
                return process, server
            time.sleep(0.1)
        exited = process.poll() is not None
        _stop(process)
        tail = " | ".join(log.read_text(errors="replace").strip().splitlines()[-3:])
        reason = (
            f"moto's server {'exited' if exited else 'did not answer'} on port {port}"
            f" ({log}): {tail or 'no output'}"
        )
    return reason


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def pytest_report_header() -> str:
    state = "mandatory (HUB_TEST_S3)" if S3_MANDATORY else "optional"
    return f"hub: S3 half {state}, moto's server started on demand"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("artifact_store") == "s3":
            item.add_marker(pytest.mark.s3)


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    started = _start_moto(tmp_path_factory.mktemp("s3"))
    if isinstance(started, str):
        # Raised once; pytest gives every later test that asks the same outcome.
        if S3_MANDATORY:
            pytest.fail(f"the S3 server is mandatory here (HUB_TEST_S3) but {started}")
        pytest.skip(f"S3 half skipped: {started} (HUB_TEST_S3=mandatory makes this a failure)")
    process, server = started
    try:
        yield server
    finally:
        _stop(process)


@pytest.fixture
def s3_bucket(s3_server: S3Server) -> str:
    return s3_server.create_bucket()


both_stores = pytest.mark.parametrize("artifact_store", ["filesystem", "s3"], indirect=True)


@pytest.fixture(params=["filesystem", "s3"])
def artifact_store(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store_settings(artifact_store: str, request: pytest.FixtureRequest) -> dict[str, Any]:
    if artifact_store == "filesystem":
        return {}
    server: S3Server = request.getfixturevalue("s3_server")
    return server.settings(request.getfixturevalue("s3_bucket"))


@pytest.fixture
def store(store_settings: dict[str, Any], tmp_path: Path) -> Store:
    settings = Settings(
        artifact_dir=tmp_path / "artifacts",
        _env_file=None,  # type: ignore[call-arg]
        **store_settings,
    )
    return store_for(settings)
