"""Artifacts over HTTP, as tests use them: uploads with httpx, and a raw HTTP/1.1 client
for what httpx will not send (a body cut off, a Content-Length that lies, a response
read while the body is still being sent)."""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
import pytest

from hub.artifacts.service import STAGING_DIR, Store
from hub.settings import Settings
from hub.storage.database import Database
from tests.support import jobs, work
from tests.support.cli import HubCli, hub_cli
from tests.support.client import Api
from tests.support.sql import fetch_value
from tests.support.work import key

ARTIFACT = """
  id projectId kind state taskId attemptId jobId evidenceId reviewId name mediaType
  sniffedMediaType mediaTypeMismatch servedMediaType sizeBytes sha256 url accessibility
  retention authorId sessionId createdAt availableAt expiresAt goneAt goneReason goneBy
  downloadPath previewPath
"""
# What evidence and reviews answer of the artifacts they cite.
CITED = "artifacts { id name state retention expiresAt goneReason }"
EVIDENCE = f"... on EvidencePayload {{ evidence {{ id {CITED} }} }}" \
    " ... on NotFound { what } ... on ValidationFailed { field }"


def link(api: Api, project: str, name: str = "CI run", **fields: Any) -> dict[str, Any]:
    """A link kept as an artifact (`linkExternalArtifact`), which must succeed."""
    made = api.mutate(
        "linkExternalArtifact",
        {"projectId": project, "name": name, "url": "https://ci.example.com/runs/1",
         "accessibility": "SHARED", "idempotencyKey": work.key(), **fields},
        f"... on ArtifactPayload {{ artifact {{ {ARTIFACT} }} }}",
    )
    assert made["__typename"] == "ArtifactPayload", made
    artifact: dict[str, Any] = made["artifact"]
    return artifact


def evidence(api: Api, attempt: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """`recordEvidence` of a passing run for `attempt`, answering its artifacts."""
    data = {
        "attemptId": attempt["id"], "generation": attempt["generation"],
        "revision": "a" * 40, "checkDefinitionRevision": "ci.yml@3",
        "configFingerprint": "py3.11", "environmentIdentity": "ws-1/linux",
        "startedAt": "2026-01-01T11:00:00+00:00", "endedAt": "2026-01-01T11:30:00+00:00",
        "inputsStable": True, "requiredChecks": ["unit"],
        "checks": [{"name": "unit", "outcome": "PASS"}], "artifactAccess": "SHARED",
        **fields,
    }
    return api.mutate("recordEvidence", data, EVIDENCE)


def upload(
    base_url: str,
    token: str | None,
    content: bytes | Iterable[bytes],
    *,
    idempotency_key: str | None = "fresh",
    headers: dict[str, str] | None = None,
    **params: str,
) -> httpx.Response:
    """`POST /api/artifacts`; `content` as bytes (with a Content-Length) or an iterable
    (chunked, no length). A fresh key unless one is given (None: no key)."""
    sent = dict(headers or {})
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    if idempotency_key is not None:
        sent["Idempotency-Key"] = key() if idempotency_key == "fresh" else idempotency_key
    params.setdefault("name", "report.txt")
    with httpx.Client(base_url=base_url, timeout=30) as client:
        return client.post("/api/artifacts", params=params, content=content, headers=sent)


def uploaded(base_url: str, token: str, content: bytes, **params: str) -> dict[str, Any]:
    """The artifact of an upload that must succeed."""
    response = upload(base_url, token, content, **params)
    assert response.status_code == 201, response.text
    artifact: dict[str, Any] = response.json()["artifact"]
    return artifact


def download(
    base_url: str, token: str | None, artifact_id: str, **headers: str
) -> httpx.Response:
    sent = {name.replace("_", "-"): value for name, value in headers.items()}
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    with httpx.Client(base_url=base_url, timeout=30) as client:
        return client.get(f"/artifacts/{artifact_id}", headers=sent)


def error_of(response: httpx.Response) -> dict[str, Any]:
    """A refusal's `error` object (never a stack trace, always JSON)."""
    assert response.headers["content-type"].startswith("application/json"), response.text
    error: dict[str, Any] = response.json()["error"]
    return error


# What a test's store keeps now (the `in_store` fixture of tests/artifacts/conftest.py).
InStore = Callable[[], list[str]]


def kept(store: Store, artifact_dir: Path) -> list[str]:
    """Everything kept of artifacts: the store's objects by key, and the staging files
    under the artifact directory (`.staging/…`), whichever the store."""
    staging = artifact_dir / STAGING_DIR
    staged = [f"{STAGING_DIR}/{path.name}" for path in staging.iterdir()] \
        if staging.is_dir() else []
    return sorted([stored.key for stored in store.objects()] + staged)


def assert_nothing_left(database: Database, in_store: InStore) -> None:
    """No artifact record, and nothing kept, staged or stored."""
    assert fetch_value(database, "SELECT count(*) FROM artifacts") == 0
    assert in_store() == []


def working_job(operator: Api, worker: Api, project: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A job registered by `worker` under its claim of a new task: (attempt, job)."""
    attempt: dict[str, Any] = work.claimed(worker, project, work.new_task(operator, project))[
        "attempt"
    ]
    return attempt, jobs.registered_job(worker, attempt)


def at_once(count: int, send: Callable[[int], httpx.Response]) -> list[httpx.Response]:
    """`send(0)` … `send(count - 1)` on as many threads, released together."""
    start = threading.Barrier(count)
    answers: list[httpx.Response | BaseException | None] = [None] * count

    def run(index: int) -> None:
        try:
            start.wait(timeout=30)
            answers[index] = send(index)
        except BaseException as exc:  # reported by the assertion below
            answers[index] = exc

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a request hung"
    done = [answer for answer in answers if isinstance(answer, httpx.Response)]
    assert len(done) == count, answers
    return done


def wait_until(condition: Callable[[], bool], what: str, seconds: float = 15) -> None:
    """Wait for the server to finish something it does concurrently (not for time to
    pass: the clock is injected)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.02)


def cli_for(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    settings: Settings,
    store_settings: dict[str, Any],
) -> HubCli:
    """`hub …` configured like the test's server: its database, artifact directory and
    store, in the environment."""
    cli = hub_cli(monkeypatch, tmp_path, settings.database_url)
    monkeypatch.setenv("HUB_ARTIFACT_DIR", str(settings.artifact_dir))
    for name, value in store_settings.items():
        monkeypatch.setenv(f"HUB_{name.upper()}", str(value))
    return cli


_STATE = "query($id: ID!) { artifact(id: $id) { state goneAt goneReason goneBy expiresAt } }"


def state_of(api: Api, artifact_id: str) -> dict[str, Any]:
    """Where an artifact stands, as the API reports it."""
    found: dict[str, Any] = api(_STATE, id=artifact_id)["artifact"]
    return found


class HeldStore:
    """The runtime's store, whose removals wait until the test lets them go (or fail)."""

    def __init__(self, inner: Store, *, fail: bool = False) -> None:
        self.inner = inner
        self.fail = fail
        self.entered = threading.Event()
        self.released = threading.Event()

    def delete(self, key: str) -> None:
        self.entered.set()
        self.released.wait(timeout=30)
        if self.fail:
            raise OSError("the store refused the removal")
        self.inner.delete(key)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


# --- a raw HTTP/1.1 client ----------------------------------------------------------------


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


@dataclass
class RawUpload:
    """One upload over a socket of its own, sent piece by piece."""

    base_url: str
    token: str
    params: dict[str, str]
    content_length: int | None = None  # None: chunked
    headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        address = urlsplit(self.base_url)
        self.sock = socket.create_connection((address.hostname, address.port), timeout=30)
        framing = (
            f"Content-Length: {self.content_length}"
            if self.content_length is not None
            else "Transfer-Encoding: chunked"
        )
        lines = [
            f"POST /api/artifacts?{urlencode(self.params)} HTTP/1.1",
            f"Host: {address.netloc}",
            f"Authorization: Bearer {self.token}",
            f"Idempotency-Key: {key()}",
            framing,
            *(f"{name}: {value}" for name, value in self.headers.items()),
        ]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())

    def send(self, data: bytes) -> None:
        if self.content_length is None:
            data = f"{len(data):x}\r\n".encode() + data + b"\r\n"
        self.sock.sendall(data)

    def end(self) -> None:
        """The end of a chunked body."""
        self.sock.sendall(b"0\r\n\r\n")

    def answered(self, seconds: float = 0.0) -> bool:
        """Whether the server has started answering (waiting up to `seconds`)."""
        readable, _, _ = select.select([self.sock], [], [], seconds)
        return bool(readable)

    def answer(self) -> Answer:
        reader = self.sock.makefile("rb")
        status_line = reader.readline().decode()
        headers: dict[str, str] = {}
        while (line := reader.readline().decode().strip()):
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        body = reader.read(int(headers.get("content-length", "0")))
        return Answer(int(status_line.split()[1]), headers, body)

    def half_close(self) -> None:
        """No more bytes from this side (the server sees the body end early)."""
        self.sock.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.sock.close()
