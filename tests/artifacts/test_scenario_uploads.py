"""Scenario 24, uploads (docs/scenarios.md): a file over the per-file quota is refused
while streaming; an interrupted upload is never downloadable; a client file name such as
`../../etc/passwd` is only a display name; an HTML upload previews as escaped text and
downloads as an attachment. Against a real server, on both databases and both
stores (the filesystem, and S3); the quotas are small (tests/artifacts/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from hub.storage.database import Database
from tests.artifacts.conftest import MAX_FILE
from tests.support import work
from tests.support.artifacts import (
    InStore,
    RawUpload,
    assert_nothing_left,
    download,
    error_of,
    upload,
    uploaded,
    wait_until,
)
from tests.support.s3 import both_stores
from tests.support.sql import fetch_all, fetch_value
from tests.web.conftest import Dashboard

# Scenario 24 holds on either store.
pytestmark = both_stores

PIECE = 64 * 1024


def test_a_file_declared_over_the_per_file_quota_is_refused_before_a_byte_is_read(
    server: str, operator: Any, agent: Callable[..., Any], database: Database, in_store: InStore
) -> None:
    project = work.create_project(operator.api)
    sender = RawUpload(
        server, agent().token, {"projectId": project, "name": "huge.log"},
        content_length=MAX_FILE + 1,
    )
    try:
        # Not one byte of the body is sent: the answer comes from the declared length.
        assert sender.answered(seconds=10), "no answer to the declared length"
        answer = sender.answer()
    finally:
        sender.close()
    assert answer.status == 413
    assert b'"QUOTA_EXCEEDED"' in answer.body
    assert_nothing_left(database, in_store)


def test_a_file_that_grows_past_the_per_file_quota_is_cut_off_while_streaming(
    server: str, operator: Any, agent: Callable[..., Any], database: Database, in_store: InStore
) -> None:
    project = work.create_project(operator.api)
    # No Content-Length (chunked): only the count of what arrives can stop it.
    sender = RawUpload(server, agent().token, {"projectId": project, "name": "huge.log"})
    try:
        sent = 0
        while sent <= MAX_FILE:
            sender.send(b"x" * PIECE)
            sent += PIECE
        # The body has not ended (no last chunk): only a cut-off can answer it now.
        assert sender.answered(seconds=10), "the server kept reading past the quota"
        answer = sender.answer()
    finally:
        sender.close()
    assert answer.status == 413, answer
    assert b'"QUOTA_EXCEEDED"' in answer.body
    assert_nothing_left(database, in_store)


def test_an_interrupted_upload_is_never_downloadable_and_leaves_nothing(
    server: str, operator: Any, agent: Callable[..., Any], database: Database, in_store: InStore
) -> None:
    project = work.create_project(operator.api)
    uploader = agent()
    sender = RawUpload(
        server, uploader.token, {"projectId": project, "name": "half.log"},
        content_length=MAX_FILE,
    )
    staged: list[dict[str, Any]] = []

    def streaming() -> bool:
        staged[:] = fetch_all(database, "SELECT id, state FROM artifacts")
        return bool(staged) and any(path.startswith(".staging/")
                                    for path in in_store())

    try:
        sender.send(b"y" * (4 * PIECE))
        wait_until(streaming, "the upload is staged and streaming")
        [row] = staged
        assert row["state"] == "STAGED"
        # A staged upload is not an artifact anyone can download.
        assert download(server, uploader.token, row["id"]).status_code == 404
    finally:
        sender.close()  # the client goes away mid-body

    wait_until(
        lambda: fetch_value(database, "SELECT count(*) FROM artifacts") == 0,
        "the interrupted upload is forgotten",
    )
    wait_until(lambda: in_store() == [], "its staging file is removed")
    gone = download(server, uploader.token, row["id"])
    assert gone.status_code == 404
    assert error_of(gone)["code"] == "NOT_FOUND"


def test_a_client_file_name_is_only_a_display_name(
    server: str, operator: Any, agent: Callable[..., Any], tmp_path: Path, in_store: InStore
) -> None:
    project = work.create_project(operator.api)
    uploader = agent()
    artifact = uploaded(
        server, uploader.token, b"root:x:0:0\n", projectId=project, name="../../etc/passwd",
        mediaType="text/plain",
    )
    assert artifact["name"] == "../../etc/passwd"
    # The bytes are where hub put them, under names it generated, and nowhere else.
    assert in_store() == [f"{project}/{artifact['id']}"]
    assert not [path for path in tmp_path.rglob("*passwd*")]
    fetched = download(server, uploader.token, artifact["id"])
    assert fetched.content == b"root:x:0:0\n"
    assert fetched.headers["content-disposition"] == (
        "attachment; filename=\"passwd\"; filename*=UTF-8''passwd"
    )


def test_an_html_upload_previews_as_escaped_text_and_downloads_as_an_attachment(
    server: str, operator: Any, agent: Callable[..., Any]
) -> None:
    project = work.create_project(operator.api)
    page = b"<!DOCTYPE html><html><body><script>alert('owned')</script></body></html>\n"
    artifact = uploaded(
        server, agent().token, page, projectId=project, name="report.html", mediaType="text/html"
    )
    assert (artifact["sniffedMediaType"], artifact["servedMediaType"]) == (
        "text/html", "application/octet-stream",
    )

    browser = Dashboard(server)
    try:
        assert browser.login().status_code == 303
        shown = browser.get(artifact["previewPath"])
        fetched = browser.get(artifact["downloadPath"])
    finally:
        browser.close()
    assert shown.status_code == 200
    assert "<script>alert" not in shown.text
    assert "&lt;script&gt;alert(&#39;owned&#39;)&lt;/script&gt;" in shown.text
    assert f'href="{artifact["downloadPath"]}"' in shown.text
    # The dashboard's own policy: no script but its own runs on the page.
    assert "script-src 'self'" in shown.headers["content-security-policy"]

    assert fetched.status_code == 200
    assert fetched.content == page
    assert fetched.headers["content-type"] == "application/octet-stream"
    assert fetched.headers["content-disposition"].startswith('attachment; filename="report.html"')
    assert fetched.headers["x-content-type-options"] == "nosniff"
    assert fetched.headers["content-security-policy"] == "sandbox"


def test_an_upload_refused_for_its_size_by_an_api_client_says_so_in_json(
    server: str, operator: Any, agent: Callable[..., Any]
) -> None:
    project = work.create_project(operator.api)
    refused = upload(server, agent().token, b"z" * (MAX_FILE + 1), projectId=project)
    assert refused.status_code == 413
    assert error_of(refused) == {
        "code": "QUOTA_EXCEEDED",
        "message": f"a file may hold at most 1.0 MiB ({MAX_FILE} bytes)",
    }
