"""Bad input to the artifact routes: odd names, empty files, lengths that lie, keys reused
for other bytes, records that are gone or never were, no credential, another project's
ids. Each is refused (or kept) in JSON with the API's problem codes, and never leaves a
file or a record behind."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from hub.app import create_app
from hub.runtime import Runtime
from hub.storage.database import Database
from tests.support import jobs, work
from tests.support.artifacts import (
    InStore,
    RawUpload,
    assert_nothing_left,
    at_once,
    download,
    error_of,
    upload,
    uploaded,
    wait_until,
    working_job,
)
from tests.support.s3 import both_stores
from tests.support.sql import fetch_value
from tests.support.workflow import claim_review, deliver, review


def test_a_nul_byte_and_control_characters_are_cleaned_out_of_a_name(
    server: str, operator: Any, agent: Callable[..., Any]
) -> None:
    project = work.create_project(operator.api)
    artifact = uploaded(
        server, agent().token, b"x", projectId=project, name="re\x00po\x1brt\u202e.txt\n"
    )
    assert artifact["name"] == "report.txt"


def test_a_ten_thousand_character_name_is_bounded_and_keeps_its_suffix(
    server: str, operator: Any, agent: Callable[..., Any]
) -> None:
    project = work.create_project(operator.api)
    artifact = uploaded(server, agent().token, b"x", projectId=project, name="n" * 10_000 + ".log")
    assert len(artifact["name"]) == 255
    assert artifact["name"].endswith("n….log")


@both_stores
def test_a_zero_byte_file_is_an_artifact(
    server: str, operator: Any, agent: Callable[..., Any]
) -> None:
    project = work.create_project(operator.api)
    uploader = agent()
    artifact = uploaded(server, uploader.token, b"", projectId=project, name="empty.log")
    assert (artifact["sizeBytes"], artifact["sha256"]) == (
        0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    )
    fetched = download(server, uploader.token, artifact["id"])
    assert (fetched.status_code, fetched.content) == (200, b"")
    # No byte to give: any range of it is unsatisfiable.
    assert download(server, uploader.token, artifact["id"], Range="bytes=0-").status_code == 416


# --- lengths that lie ----------------------------------------------------------------------


def _asgi_upload(
    runtime: Runtime, token: str, params: str, length: int, pieces: list[bytes]
) -> tuple[int, dict[str, Any]]:
    """The application called in process, its body delivered as `pieces` whatever the
    declared `length` (a server that frames bodies by something else than their
    Content-Length would hand it such a body)."""
    app = create_app(runtime)
    events = [
        {"type": "http.request", "body": piece, "more_body": index < len(pieces) - 1}
        for index, piece in enumerate(pieces)
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return events.pop(0) if events else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/api/artifacts", "raw_path": b"/api/artifacts",
        "query_string": params.encode(), "root_path": "",
        "headers": [
            (b"authorization", f"Bearer {token}".encode()),
            (b"idempotency-key", work.key().encode()),
            (b"content-length", str(length).encode()),
        ],
        "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80),
    }
    asyncio.run(app(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, json.loads(body)


@pytest.mark.parametrize(
    ("declared", "pieces", "said"),
    [(10, [b"x" * 6, b"x" * 6], "carried more"), (10, [b"x" * 4, b"x" * 3], "carried 7")],
    ids=["longer", "shorter"],
)
def test_a_body_that_is_not_the_length_it_declared_is_refused(
    runtime: Runtime,
    server: str,
    operator: Any,
    agent: Callable[..., Any],
    database: Database,
    in_store: InStore,
    declared: int,
    pieces: list[bytes],
    said: str,
) -> None:
    project = work.create_project(operator.api)
    status, body = _asgi_upload(runtime, agent().token, f"projectId={project}&name=a", declared,
                                pieces)
    assert status == 400
    assert body["error"]["code"] == "VALIDATION_FAILED"
    assert body["error"]["field"] == "Content-Length"
    assert said in body["error"]["message"]
    assert_nothing_left(database, in_store)


@both_stores
def test_over_http_a_body_shorter_than_declared_never_becomes_an_artifact(
    server: str, operator: Any, agent: Callable[..., Any], database: Database, in_store: InStore
) -> None:
    project = work.create_project(operator.api)
    sender = RawUpload(server, agent().token, {"projectId": project, "name": "short.log"},
                       content_length=1000)
    try:
        sender.send(b"s" * 100)
        wait_until(lambda: fetch_value(database, "SELECT count(*) FROM artifacts") == 1,
                   "the upload is staged")
        sender.half_close()  # the body ends 900 bytes short
        wait_until(lambda: fetch_value(database, "SELECT count(*) FROM artifacts") == 0,
                   "the short upload is forgotten")
    finally:
        sender.close()
    wait_until(lambda: in_store() == [], "its staging file is removed")


def test_over_http_bytes_past_the_declared_length_are_refused_and_never_stored(
    server: str, operator: Any, agent: Callable[..., Any], database: Database
) -> None:
    """HTTP frames a body by its Content-Length: what follows it is not this body but the
    start of a next request, which does not parse, and the server refuses the connection.
    Whatever became of the upload, no byte past the declared length is in a file."""
    project = work.create_project(operator.api)
    uploader = agent()
    sender = RawUpload(server, uploader.token, {"projectId": project, "name": "long.log"},
                       content_length=10)
    try:
        sender.send(b"0123456789" + b"GARBAGE" * 100)
        answer = sender.answer()
    finally:
        sender.close()
    assert answer.status == 400
    wait_until(
        lambda: fetch_value(database, "SELECT count(*) FROM artifacts WHERE state = 'STAGED'")
        == 0,
        "the upload is settled",
    )
    sizes = fetch_value(database, "SELECT count(*) FROM artifacts WHERE size_bytes <> 10")
    assert sizes == 0


# --- keys ------------------------------------------------------------------------------------


@both_stores
def test_the_same_key_with_the_same_bytes_replays_and_stores_nothing_twice(
    server: str, operator: Any, agent: Callable[..., Any], database: Database, in_store: InStore
) -> None:
    project = work.create_project(operator.api)
    uploader = agent()
    key = work.key()
    first = upload(server, uploader.token, b"same", idempotency_key=key, projectId=project)
    again = upload(server, uploader.token, b"same", idempotency_key=key, projectId=project)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["replay"] is True
    assert again.json()["artifact"] == first.json()["artifact"]
    assert fetch_value(database, "SELECT count(*) FROM artifacts") == 1
    assert in_store() == [f"{project}/{first.json()['artifact']['id']}"]


def _twins(server: str, token: str, project: str, key: str) -> list[httpx.Response]:
    return at_once(2, lambda _: upload(
        server, token, b"twin" * 1000, idempotency_key=key, projectId=project
    ))


@both_stores
def test_two_identical_uploads_sent_at_once_make_one_artifact(
    server: str, operator: Any, agent: Callable[..., Any], database: Database, in_store: InStore
) -> None:
    """A client that retries while its first upload still streams sends a twin: both
    stream, the second to commit is a replay of the first, and its copy is removed."""
    project = work.create_project(operator.api)
    uploader = agent()
    for _ in range(3):
        answers = _twins(server, uploader.token, project, work.key())
        first, second = answers
        assert sorted([first.status_code, second.status_code]) == [200, 201], answers
        assert first.json()["artifact"] == second.json()["artifact"]
        assert sorted([first.json()["replay"], second.json()["replay"]]) == [False, True]
    assert fetch_value(database, "SELECT count(*) FROM artifacts") == 3
    wait_until(lambda: len(in_store()) == 3, "the twins' copies are removed")


@pytest.mark.parametrize("changed", ["bytes", "metadata"])
def test_the_same_key_with_other_bytes_or_metadata_is_an_idempotency_conflict(
    server: str,
    operator: Any,
    agent: Callable[..., Any],
    database: Database,
    in_store: InStore,
    changed: str,
) -> None:
    project = work.create_project(operator.api)
    uploader = agent()
    key = work.key()
    assert upload(server, uploader.token, b"first", idempotency_key=key, projectId=project,
                  name="a.log").status_code == 201
    second = upload(
        server, uploader.token, b"second" if changed == "bytes" else b"first",
        idempotency_key=key, projectId=project, name="a.log" if changed == "bytes" else "b.log",
    )
    assert second.status_code == 409
    assert error_of(second)["code"] == "IDEMPOTENCY_CONFLICT"
    assert fetch_value(database, "SELECT count(*) FROM artifacts") == 1
    assert len(in_store()) == 1


def test_an_agent_session_must_key_its_uploads(
    server: str, operator: Any, agent: Callable[..., Any], database: Database
) -> None:
    project = work.create_project(operator.api)
    refused = upload(server, agent().token, b"x", idempotency_key=None, projectId=project)
    assert refused.status_code == 400
    assert error_of(refused)["field"] == "idempotencyKey"
    # A person's own token may upload without one.
    assert upload(server, operator.token, b"x", idempotency_key=None,
                  projectId=project).status_code == 201
    assert fetch_value(database, "SELECT count(*) FROM artifacts") == 1


# --- gone, unknown, unauthenticated --------------------------------------------------------


@both_stores
def test_a_deleted_artifact_is_gone_with_its_reason(
    server: str, operator: Any, agent: Callable[..., Any], in_store: InStore
) -> None:
    project = work.create_project(operator.api)
    uploader = agent()
    artifact = uploaded(server, uploader.token, b"secret log", projectId=project)
    deleted = uploader.api.mutate(
        "deleteArtifact", {"artifactId": artifact["id"], "reason": "it held a password"},
        "... on DeleteArtifactPayload { artifact { state goneReason goneBy } }",
    )
    assert deleted["artifact"] == {
        "state": "DELETED", "goneReason": "it held a password", "goneBy": uploader.principal.id,
    }
    wait_until(lambda: in_store() == [], "the bytes leave the store")
    gone = download(server, uploader.token, artifact["id"])
    assert gone.status_code == 410
    error = error_of(gone)
    assert (error["state"], error["reason"]) == ("DELETED", "it held a password")
    assert "it held a password" in error["message"]


@pytest.mark.parametrize(
    "artifact_id", ["art_01jb6dc0a10000000000000000", "not an id", "x" * 300]
)
def test_an_unknown_or_malformed_id_is_not_found(
    server: str, agent: Callable[..., Any], artifact_id: str
) -> None:
    fetched = download(server, agent().token, artifact_id)
    assert fetched.status_code == 404
    assert error_of(fetched)["code"] == "NOT_FOUND"


def test_a_link_has_no_bytes_to_download(
    server: str, operator: Any, agent: Callable[..., Any]
) -> None:
    project = work.create_project(operator.api)
    linker = agent()
    linked = linker.api.mutate(
        "linkExternalArtifact",
        {"projectId": project, "name": "CI run", "url": "https://ci.example.com/runs/7",
         "accessibility": "SHARED", "idempotencyKey": work.key()},
        "... on ArtifactPayload { artifact { id downloadPath } }",
    )
    assert linked["artifact"]["downloadPath"] is None
    assert download(server, linker.token, linked["artifact"]["id"]).status_code == 404


def test_no_token_is_unauthenticated_before_anything_is_read(
    server: str, operator: Any, database: Database
) -> None:
    project = work.create_project(operator.api)
    refused = upload(server, None, b"x", projectId=project)
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == "Bearer"
    assert error_of(refused)["code"] == "UNAUTHENTICATED"
    assert download(server, None, "art_01jb6dc0a10000000000000000").status_code == 401
    assert fetch_value(database, "SELECT count(*) FROM artifacts") == 0


# --- what an upload names --------------------------------------------------------------------


@pytest.mark.parametrize("field", ["taskId", "attemptId", "jobId", "evidenceId"])
def test_another_projects_ids_are_refused_in_every_association(
    server: str, operator: Any, agent: Callable[..., Any], database: Database, field: str
) -> None:
    ours = work.create_project(operator.api, "ours")
    theirs = work.create_project(operator.api, "theirs")
    worker = agent()
    attempt, job = working_job(operator.api, worker.api, theirs)
    evidence = jobs.record_evidence(worker.api, attempt, jobId=job["id"])["evidence"]
    ids = {"taskId": job["taskId"], "attemptId": attempt["id"], "jobId": job["id"],
           "evidenceId": evidence["id"]}
    refused = upload(server, worker.token, b"x", projectId=ours, **{field: ids[field]})
    assert refused.status_code == 400
    error = error_of(refused)
    assert error["code"] == "VALIDATION_FAILED"
    assert error["field"] == field
    assert "belongs to another project" in error["message"]
    assert fetch_value(database, "SELECT count(*) FROM artifacts") == 0


def test_a_review_of_the_project_is_an_association_and_another_projects_is_refused(
    server: str, operator: Any, agent: Callable[..., Any]
) -> None:
    ours = work.create_project(operator.api, "ours")
    theirs = work.create_project(operator.api, "theirs")
    reviewer = agent()
    reviews = {}
    for project in (ours, theirs):
        delivery = deliver(operator.api, agent().api, project=project)
        claimed = claim_review(reviewer.api, project)["attempt"]
        made = review(reviewer.api, claimed, delivery.submission)
        reviews[project] = made["review"]["id"]
    artifact = uploaded(server, reviewer.token, b"notes", projectId=ours, reviewId=reviews[ours])
    assert artifact["reviewId"] == reviews[ours]
    refused = upload(server, reviewer.token, b"notes", projectId=ours, reviewId=reviews[theirs])
    assert refused.status_code == 400
    assert error_of(refused)["field"] == "reviewId"


def test_a_job_fills_in_its_attempt_and_task_and_must_agree_with_them(
    server: str, operator: Any, agent: Callable[..., Any]
) -> None:
    project = work.create_project(operator.api)
    worker = agent()
    attempt, job = working_job(operator.api, worker.api, project)
    artifact = uploaded(server, worker.token, b"log", projectId=project, jobId=job["id"])
    assert (artifact["taskId"], artifact["attemptId"]) == (job["taskId"], attempt["id"])
    other_task = work.new_task(operator.api, project)
    refused = upload(server, worker.token, b"log", projectId=project, jobId=job["id"],
                     taskId=other_task)
    assert refused.status_code == 400
    assert error_of(refused)["field"] == "jobId"


def test_an_unknown_association_is_not_found_and_a_bad_query_is_refused(
    server: str, operator: Any, agent: Callable[..., Any]
) -> None:
    project = work.create_project(operator.api)
    token = agent().token
    missing = upload(server, token, b"x", projectId=project, jobId="job_01jb6dc0a10000000000000000")
    assert missing.status_code == 404
    assert error_of(missing)["what"] == "job"
    typo = upload(server, token, b"x", projectId=project, jobid="job_1")
    assert (typo.status_code, error_of(typo)["field"]) == (400, "jobid")
    no_project = upload(server, token, b"x")
    assert (no_project.status_code, error_of(no_project)["field"]) == (400, "projectId")
    bad_type = upload(server, token, b"x", projectId=project, mediaType="not a type")
    assert (bad_type.status_code, error_of(bad_type)["field"]) == (400, "mediaType")
    kept_how = upload(server, token, b"x", projectId=project, retention="FOREVER")
    assert (kept_how.status_code, error_of(kept_how)["field"]) == (400, "retention")
    form = upload(server, token, b"x", projectId=project,
                  headers={"Content-Type": "multipart/form-data; boundary=x"})
    assert (form.status_code, error_of(form)["field"]) == (400, "Content-Type")
