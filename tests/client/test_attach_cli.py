"""`hub agent attach` against a real server (both databases): a file uploaded for a job
or a task comes back byte for byte; it streams with its length declared; a retry after a
lost answer reuses its key and stores the file once; a file over the quota is refused
cleanly, and so are other bytes under the same key; and evidence and reviews cite what
was attached (docs/agent-cli.md, "Artifacts")."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import pytest

from hub.cli.agent import artifacts as attach_cli
from hub.cli.agent import options as agent_cli_module
from hub.settings import Settings
from hub.storage.database import Database
from tests import conftest as shared
from tests.client.conftest import AgentCli
from tests.support.sql import fetch_value
from tests.support.workflow import deliver

KIB = 1024
MAX_FILE = 256 * KIB
CliAgent = Callable[[str], AgentCli]


@pytest.fixture
def settings(test_database: shared.TestDatabase, tmp_path: Path) -> Settings:
    """A small per-file limit, so that a file over it is a few hundred KiB."""
    return shared.runtime_settings(test_database.url, tmp_path).model_copy(
        update={"artifact_max_file_bytes": MAX_FILE}
    )


class UploadNetwork(httpx.BaseTransport):
    """Delivers every request to the real server and notes the uploads; loses the answer
    of the next `lose` uploads (the server stored them; only the client never hears)."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.lose = 0
        self.uploads: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.url.path == "/api/artifacts":
            self.uploads.append(request)
            if self.lose > 0:
                self.lose -= 1
                response.read()
                response.close()
                raise httpx.ReadTimeout("simulated: the answer was lost", request=request)
        return response

    def keys(self) -> list[str]:
        return [request.headers["idempotency-key"] for request in self.uploads]

    def close(self) -> None:
        """Each command's client closes its transport; this one outlives commands."""


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch) -> Iterator[UploadNetwork]:
    made = UploadNetwork()
    monkeypatch.setattr(agent_cli_module, "transport", made)
    yield made
    made.inner.close()


def download(server: str, cli: AgentCli, path: str) -> httpx.Response:
    token = cli.stored()["session"]["token"]
    return httpx.get(f"{server}{path}", headers={"Authorization": f"Bearer {token}"})


def a_file(tmp_path: Path, name: str, content: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content)
    return path


def test_an_attached_file_downloads_byte_for_byte(
    agent_cli: AgentCli, started: dict[str, Any], server: str, project: str,
    general_task: str, tmp_path: Path, network: UploadNetwork,
) -> None:
    agent_cli.json("claim", general_task, "--project", project)
    content = bytes(range(256)) * 700  # 175 KiB, in several pieces
    log = a_file(tmp_path, "run.bin", content)
    job = agent_cli.json("job", "register", "--operation", "test", "--invocation", "pytest")

    attached = agent_cli.json("attach", str(log), "--job", job["job"]["id"],
                              "--retention", "REPORT", "--name", "pytest run")
    # --json: the upload's answer as the server gave it.
    assert set(attached) == {"ok", "artifact", "replay", "serverTime"}
    artifact = attached["artifact"]
    assert attached["replay"] is False
    assert (artifact["name"], artifact["projectId"], artifact["jobId"], artifact["taskId"]) == (
        "pytest run", project, job["job"]["id"], general_task,
    )
    assert (artifact["sizeBytes"], artifact["sha256"]) == (
        len(content), hashlib.sha256(content).hexdigest(),
    )
    assert artifact["retention"] == "REPORT"
    assert agent_cli.stored()["pending"] == {}
    downloaded = download(server, agent_cli, artifact["downloadPath"])
    assert downloaded.status_code == 200
    assert downloaded.content == content
    # Streamed from the file with its length declared, never read whole or chunked.
    (sent,) = network.uploads
    assert sent.headers["content-length"] == str(len(content))
    assert "transfer-encoding" not in sent.headers
    assert not isinstance(sent.stream, httpx.ByteStream)

    notes = a_file(tmp_path, "notes.txt", b"looked fine\n")
    said = agent_cli("attach", str(notes), "--task", general_task).stdout
    assert "attached art_" in said and "notes.txt to task" in said
    assert "12 bytes, text/plain, LOG" in said
    assert f"download: {server}/artifacts/art_" in said


def test_a_retry_after_a_lost_answer_reuses_its_key_and_stores_once(
    agent_cli: AgentCli, started: dict[str, Any], server: str, project: str,
    general_task: str, tmp_path: Path, network: UploadNetwork, database: Database,
    settings: Settings,
) -> None:
    report = a_file(tmp_path, "report.html", b"<h1>all green</h1>\n" * 100)
    attach = ("attach", str(report), "--task", general_task, "--retention", "REPORT")
    network.lose = 1

    lost = agent_cli.json(*attach, exit_code=3)
    assert lost["error"]["uncertain"] is True
    assert "hub agent attach" in lost["error"]["message"]
    pending = agent_cli.stored()["pending"]["uploadArtifact"]
    assert pending["key"] == network.keys()[0]
    assert pending["arguments"]["file"] == str(report.resolve())
    other = a_file(tmp_path, "other.txt", b"x")
    refused = agent_cli.json("attach", str(other), "--task", general_task, exit_code=2)
    assert refused["error"]["code"] == "PENDING_OPERATION"

    retried = agent_cli.json(*attach)
    assert retried["replay"] is True
    first, again = network.keys()[0], network.keys()[-1]
    assert first == again
    assert agent_cli.stored()["pending"] == {}
    assert fetch_value(database, "SELECT count(*) FROM artifacts") == 1
    stored = [p for p in settings.artifact_dir.rglob("*") if p.is_file()]
    assert len(stored) == 1  # the retry's bytes were only hashed
    assert download(server, agent_cli, retried["artifact"]["downloadPath"]).content == (
        report.read_bytes()
    )
    # The next attach is a new request, under a new key.
    agent_cli.json(*attach)
    assert network.keys()[-1] != first


def test_other_bytes_under_a_pending_key_are_an_idempotency_conflict(
    agent_cli: AgentCli, started: dict[str, Any], general_task: str, tmp_path: Path,
    network: UploadNetwork, database: Database,
) -> None:
    log = a_file(tmp_path, "build.log", b"first build\n")
    attach = ("attach", str(log), "--task", general_task)
    network.lose = 1
    agent_cli.json(*attach, exit_code=3)
    log.write_bytes(b"second build, other bytes\n")

    conflict = agent_cli.json(*attach, exit_code=1)
    assert conflict["error"]["code"] == "IDEMPOTENCY_CONFLICT"
    assert conflict["error"]["problem"] == "IdempotencyConflict"
    assert agent_cli.stored()["pending"] == {}  # a definite answer settles the key
    printed = agent_cli(*attach).stdout  # a new key: the new bytes are stored
    assert "attached art_" in printed
    assert fetch_value(database, "SELECT count(*) FROM artifacts") == 2


def test_a_file_over_the_quota_is_refused_cleanly(
    agent_cli: AgentCli, started: dict[str, Any], general_task: str, tmp_path: Path,
    network: UploadNetwork, database: Database, settings: Settings,
) -> None:
    # Far past the limit: refused from its declared length while the client still sends.
    big = a_file(tmp_path, "core.dump", b"\0" * (MAX_FILE + 8 * 1024 * KIB))
    refused = agent_cli.json("attach", str(big), "--task", general_task, exit_code=1)
    assert refused["error"]["code"] == "QUOTA_EXCEEDED"
    assert refused["error"]["problem"] == "QuotaExceeded"
    assert "a file may hold at most 256.0 KiB" in refused["error"]["message"]
    assert agent_cli.stored()["pending"] == {}
    said = agent_cli("attach", str(big), "--task", general_task, exit_code=1).stderr
    assert "QUOTA_EXCEEDED" in said and "at most 256.0 KiB" in said
    assert fetch_value(database, "SELECT count(*) FROM artifacts") == 0
    assert not [p for p in settings.artifact_dir.rglob("*") if p.is_file()]


def test_what_attach_refuses_before_sending(
    agent_cli: AgentCli, started: dict[str, Any], general_task: str, tmp_path: Path,
    network: UploadNetwork,
) -> None:
    present = a_file(tmp_path, "a.txt", b"a")
    both = agent_cli.json("attach", str(present), "--task", general_task, "--job", "job_x",
                          exit_code=2)
    assert both["error"]["code"] == "USAGE"
    assert agent_cli.json("attach", str(present), exit_code=2)["error"]["code"] == "USAGE"
    missing = agent_cli.json("attach", str(tmp_path / "nope.txt"), "--task", general_task,
                             exit_code=2)
    assert "nope.txt" in missing["error"]["message"]
    unknown = agent_cli.json("attach", str(present), "--task", "tsk_01jb6dc0a10000000000000000",
                             exit_code=1)
    assert unknown["error"]["code"] == "NOT_FOUND"
    assert network.uploads == [] and agent_cli.stored()["pending"] == {}


def test_evidence_and_a_review_cite_what_was_attached(
    agent_cli: AgentCli, started: dict[str, Any], cli_agent: CliAgent, operator: Any,
    agent: Callable[..., Any], project: str, general_task: str, tmp_path: Path,
) -> None:
    agent_cli.json("claim", general_task, "--project", project)
    agent_cli.json("job", "register", "--operation", "test", "--invocation", "pytest")
    job_id = agent_cli.stored()["attempt"]["job_ids"][-1]
    log = agent_cli.json("attach", str(a_file(tmp_path, "pytest.log", b"1 passed\n")),
                         "--job", job_id, "--retention", "EVIDENCE")["artifact"]
    assert log["expiresAt"] is not None  # until evidence cites it
    recorded = agent_cli.json(
        "job", "evidence", "--required-check", "unit", "--check", "unit=PASS",
        "--check-definition-revision", "ci.yml@1", "--config-fingerprint", "py3.11",
        "--revision", "a" * 40, "--artifact", log["id"],
    )["evidence"]  # fmt: skip
    cited = operator.api(
        "query($e: ID!) { evidence(id: $e) { artifacts { id expiresAt } } }", e=recorded["id"]
    )["evidence"]["artifacts"]
    assert cited == [{"id": log["id"], "expiresAt": None}]

    # A reviewer attaches a screenshot to its review task and cites it.
    delivery = deliver(operator.api, agent().api, project=project)
    reviewer = cli_agent("reviewer")
    claimed = reviewer.json("review", "next", "--project", project)
    shot = reviewer.json("attach", str(a_file(tmp_path, "page.png", b"\x89PNG\r\n\x1a\n")),
                         "--task", claimed["task"]["id"])["artifact"]
    reviewed = reviewer.json("review", "approve", "--summary", "the page renders",
                             "--artifact", shot["id"])
    assert reviewed["review"]["submissionId"] == delivery.submission
    listed = operator.api(
        "query($s: ID!) { submission(id: $s) { reviews { artifacts { id mediaType } } } }",
        s=delivery.submission,
    )["submission"]["reviews"]
    assert listed == [{"artifacts": [{"id": shot["id"], "mediaType": "image/png"}]}]


def test_the_progress_bar_is_for_large_files_on_a_terminal_only() -> None:
    quiet = attach_cli.UploadBar("f", shown=False)
    quiet.advance(1, attach_cli.LARGE_FILE_BYTES)
    assert quiet.progress is None
    small = attach_cli.UploadBar("f", shown=True)
    small.advance(1, attach_cli.LARGE_FILE_BYTES - 1)
    assert small.progress is None
    with closing(attach_cli.UploadBar("f", shown=True)) as large:
        large.advance(1, attach_cli.LARGE_FILE_BYTES)
        assert large.progress is not None
        assert large.progress.tasks[0].completed == 1
