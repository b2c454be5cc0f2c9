"""What a file's first bytes say it is, what it is served as, and what its name becomes:
the rules of `hub.artifacts._media` and `_names`, without a server."""

from __future__ import annotations

import pytest

from hub.artifacts._media import clean_media_type, disagrees, served_media_type, sniff
from hub.artifacts._names import clean_display_name, download_name
from hub.errors import ValidationFailed


@pytest.mark.parametrize(
    ("head", "sniffed"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00", "image/png"),
        (b"\xff\xd8\xff\xe0JFIF", "image/jpeg"),
        (b"GIF89a\x01\x00", "image/gif"),
        (b"%PDF-1.7\n", "application/pdf"),
        (b"PK\x03\x04\x14\x00", "application/zip"),
        (b"\x1f\x8b\x08\x00", "application/gzip"),
        (b"\xef\xbb\xbf  <!DOCTYPE html><p>", "text/html"),
        (b"<HTML>", "text/html"),
        (b"\n<script>alert(1)</script>", "text/html"),
        (b"<!-- a comment -->", "text/html"),
        (b"<svg xmlns='http://www.w3.org/2000/svg'>", "image/svg+xml"),
        (b"<?xml version='1.0'?>\n<svg>", "image/svg+xml"),
        (b'  {"passed": true}', "application/json"),
        (b"[1, 2]", "application/json"),
        (b"collected 12 items\n\x1b[32mPASSED\x1b[0m\n", "text/plain"),
        ("caf\u00e9 na\u00efve\n".encode(), "text/plain"),
        (b"", "text/plain"),
        (b"<bogus>", "text/plain"),
        (b"\x00\x01\x02binary", "application/octet-stream"),
        (b"\xc3\x28 invalid utf-8", "application/octet-stream"),
    ],
)
def test_the_first_bytes_say_what_a_file_is(head: bytes, sniffed: str) -> None:
    assert sniff(head, complete=True) == sniffed


def test_a_character_cut_at_the_end_of_the_sniffed_prefix_is_still_text() -> None:
    cut = "é".encode()[:1]
    assert sniff(b"abc" + cut, complete=False) == "text/plain"
    assert sniff(b"abc" + cut, complete=True) == "application/octet-stream"


@pytest.mark.parametrize(
    ("declared", "sniffed", "mismatch"),
    [
        ("text/plain", "text/plain", False),
        ("text/x-log", "text/plain", False),
        ("application/json", "text/plain", False),
        ("text/plain", "application/json", False),
        ("text/html", "text/plain", True),
        ("text/plain", "text/html", True),
        ("image/png", "image/jpeg", True),
        ("image/png", "application/octet-stream", True),
        ("text/plain", "application/octet-stream", True),
        ("application/x-tar", "application/octet-stream", False),
        ("application/octet-stream", "image/png", True),
    ],
)
def test_a_mismatch_is_a_contradiction_the_bytes_can_show(
    declared: str, sniffed: str, mismatch: bool
) -> None:
    assert disagrees(declared, sniffed) is mismatch


@pytest.mark.parametrize(
    ("declared", "sniffed", "served"),
    [
        ("text/plain", "text/plain", "text/plain; charset=utf-8"),
        ("text/markdown", "text/plain", "text/markdown; charset=utf-8"),
        ("application/json", "application/json", "application/json"),
        ("text/html", "text/html", "application/octet-stream"),
        ("text/plain", "text/html", "application/octet-stream"),
        ("text/plain", "image/svg+xml", "application/octet-stream"),
        ("text/x-log", "text/plain", "application/octet-stream"),
        ("image/png", "image/png", "application/octet-stream"),
    ],
)
def test_only_plain_text_of_an_allowed_type_is_served_as_that_type(
    declared: str, sniffed: str, served: str
) -> None:
    assert served_media_type(declared, sniffed) == served


def test_a_declared_media_type_is_its_essence_or_refused() -> None:
    assert clean_media_type("mediaType", " Text/Plain; charset=latin-1") == "text/plain"
    assert clean_media_type("mediaType", None) == "application/octet-stream"
    for bad in ("text", "text/plain/x", "<script>/x", "a b/c"):
        with pytest.raises(ValidationFailed):
            clean_media_type("mediaType", bad)


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("../../etc/passwd", "../../etc/passwd"),
        ("a\x00b\x07c.txt", "abc.txt"),
        ("evil\u202etxt.exe", "eviltxt.exe"),
        ("  two\t\nlines  ", "two lines"),
        ("\x00\x01", "unnamed"),
        ("x" * 300, "x" * 254 + "…"),
        ("x" * 300 + ".tar.gz", "x" * 251 + "….gz"),
    ],
)
def test_a_display_name_is_cleaned_and_bounded(given: str, shown: str) -> None:
    assert clean_display_name(given) == shown
    assert len(clean_display_name(given)) <= 255


@pytest.mark.parametrize(
    ("name", "saved_as"),
    [("../../etc/passwd", "passwd"), ("C:\\logs\\run.log", "run.log"), (".env", "env"),
     ("dir/", "art_1"), ("report.txt", "report.txt")],
)
def test_a_download_suggests_the_names_last_part(name: str, saved_as: str) -> None:
    assert download_name(name, "art_1") == saved_as
