"""Downloads: one byte range at a time, the served type by the allow-list, and a
dashboard sign-in as good as an API token."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.support import work
from tests.support.artifacts import download, error_of, uploaded
from tests.support.s3 import both_stores
from tests.web.conftest import Dashboard

CONTENT = bytes(range(256)) * 4  # 1,024 bytes


@pytest.fixture
def stored(server: str, operator: Any, agent: Callable[..., Any]) -> tuple[str, str]:
    """An uploaded binary file: (its id, a token that may download it)."""
    project = work.create_project(operator.api)
    uploader = agent()
    artifact = uploaded(server, uploader.token, CONTENT, projectId=project, name="data.bin")
    return artifact["id"], uploader.token


@pytest.mark.parametrize(
    ("asked", "start", "end"),
    [("bytes=0-99", 0, 100), ("bytes=1000-", 1000, 1024), ("bytes=-24", 1000, 1024),
     ("bytes=1000-5000", 1000, 1024), ("bytes=7-7", 7, 8)],
)
@both_stores
def test_one_range_is_answered_206_with_its_bytes(
    server: str, stored: tuple[str, str], asked: str, start: int, end: int
) -> None:
    artifact_id, token = stored
    fetched = download(server, token, artifact_id, Range=asked)
    assert fetched.status_code == 206
    assert fetched.content == CONTENT[start:end]
    assert fetched.headers["content-range"] == f"bytes {start}-{end - 1}/1024"
    assert fetched.headers["content-length"] == str(end - start)
    assert fetched.headers["content-disposition"].startswith("attachment;")


@pytest.mark.parametrize("asked", ["bytes=1024-", "bytes=5000-6000", "bytes=-0"])
@both_stores
def test_a_range_past_the_end_is_416(server: str, stored: tuple[str, str], asked: str) -> None:
    artifact_id, token = stored
    fetched = download(server, token, artifact_id, Range=asked)
    assert fetched.status_code == 416
    assert fetched.headers["content-range"] == "bytes */1024"
    assert error_of(fetched)["field"] == "Range"


@pytest.mark.parametrize("asked", ["bytes=0-1,5-6", "items=0-5", "bytes=9-2", "bytes=x-"])
def test_several_ranges_or_an_unreadable_one_get_the_whole_file(
    server: str, stored: tuple[str, str], asked: str
) -> None:
    artifact_id, token = stored
    fetched = download(server, token, artifact_id, Range=asked)
    assert (fetched.status_code, fetched.content) == (200, CONTENT)


def test_a_range_of_other_bytes_than_the_clients_copy_gets_the_whole_file(
    server: str, stored: tuple[str, str]
) -> None:
    artifact_id, token = stored
    whole = download(server, token, artifact_id)
    assert whole.headers["accept-ranges"] == "bytes"
    same = download(server, token, artifact_id, Range="bytes=0-9", If_Range=whole.headers["etag"])
    assert (same.status_code, same.content) == (206, CONTENT[:10])
    other = download(server, token, artifact_id, Range="bytes=0-9", If_Range='"elsewhere"')
    assert (other.status_code, other.content) == (200, CONTENT)


@pytest.mark.parametrize(
    ("declared", "content", "served"),
    [
        ("text/plain", b"a plain log\n", "text/plain; charset=utf-8"),
        ("text/csv", b"a,b\n1,2\n", "text/csv; charset=utf-8"),
        ("application/json", b'{"passed": true}', "application/json"),
        ("text/plain", b"<html><body>hi</body></html>", "application/octet-stream"),
        ("text/plain", b"\x89PNG\r\n\x1a\n....", "application/octet-stream"),
        ("text/html", b"<p>hi</p>", "application/octet-stream"),
        ("image/svg+xml", b"<svg xmlns='http://www.w3.org/2000/svg'/>", "application/octet-stream"),
        ("application/x-tar", b"plain text after all", "application/octet-stream"),
    ],
)
def test_only_plain_text_of_an_allowed_type_is_served_as_itself(
    server: str,
    operator: Any,
    agent: Callable[..., Any],
    declared: str,
    content: bytes,
    served: str,
) -> None:
    project = work.create_project(operator.api)
    uploader = agent()
    artifact = uploaded(server, uploader.token, content, projectId=project, mediaType=declared)
    assert artifact["servedMediaType"] == served
    fetched = download(server, uploader.token, artifact["id"])
    assert fetched.headers["content-type"] == served
    assert fetched.headers["x-content-type-options"] == "nosniff"
    assert fetched.headers["content-security-policy"] == "sandbox"


def test_a_mismatch_between_the_declared_and_the_sniffed_type_is_recorded(
    server: str, operator: Any, agent: Callable[..., Any]
) -> None:
    project = work.create_project(operator.api)
    token = agent().token
    png = uploaded(server, token, b"\x89PNG\r\n\x1a\nrest", projectId=project,
                   mediaType="image/jpeg")
    assert (png["sniffedMediaType"], png["mediaTypeMismatch"]) == ("image/png", True)
    log = uploaded(server, token, b"ok\n", projectId=project, mediaType="text/x-log")
    assert (log["sniffedMediaType"], log["mediaTypeMismatch"]) == ("text/plain", False)


def test_a_dashboard_sign_in_downloads_and_a_signed_out_browser_is_sent_to_sign_in(
    server: str, stored: tuple[str, str]
) -> None:
    artifact_id, _ = stored
    browser = Dashboard(server)
    try:
        signed_out = browser.get(f"/artifacts/{artifact_id}", headers={"Accept": "text/html"})
        assert signed_out.status_code == 303
        assert signed_out.headers["location"] == f"/login?next=%2Fartifacts%2F{artifact_id}"
        assert browser.login().status_code == 303
        fetched = browser.get(f"/artifacts/{artifact_id}", headers={"Range": "bytes=0-3"})
    finally:
        browser.close()
    assert (fetched.status_code, fetched.content) == (206, CONTENT[:4])
