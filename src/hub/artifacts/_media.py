"""What an artifact's bytes are, and what they may be served as.

The client declares a media type; the server sniffs one from the first bytes (a small
table of signatures, then HTML, SVG, JSON and plain UTF-8 text) and records whether the
two disagree. Neither decides by itself how a download is served: only a declared type
on a short allow-list of text types, whose bytes sniff as plain text (never HTML or
SVG), is served as that type; everything else is `application/octet-stream`. With
`X-Content-Type-Options: nosniff`, `Content-Disposition: attachment` and a sandboxing
`Content-Security-Policy`, no upload can run as a page of the dashboard's origin.
"""

from __future__ import annotations

import re

from hub.errors import ValidationFailed

OCTET_STREAM = "application/octet-stream"
PLAIN_TEXT = "text/plain"
JSON = "application/json"
HTML = "text/html"
SVG = "image/svg+xml"
# How many first bytes the sniffer reads (a prefix of a longer body is sniffed as such).
SNIFF_BYTES = 4096

# The declared types served as themselves, when the bytes are plain text.
SERVED_AS_TEXT = (PLAIN_TEXT, "text/csv", "text/markdown", JSON)
# What the sniffer calls text: a preview shows these (HTML and SVG as their source).
TEXT_SNIFFS = (PLAIN_TEXT, JSON)
PREVIEWED_AS_TEXT = (*TEXT_SNIFFS, HTML, SVG)

_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
    (b"PK\x05\x06", "application/zip"),  # an empty archive
    (b"\x1f\x8b", "application/gzip"),
)
SIGNED_TYPES = frozenset(media for _, media in _SIGNATURES)
# The tags a browser would take a document for HTML by (the WHATWG sniffing table), each
# followed by a space or `>`; and a comment.
_HTML_TAGS = (
    b"<!doctype html", b"<html", b"<head", b"<script", b"<iframe", b"<h1", b"<div",
    b"<font", b"<table", b"<a", b"<style", b"<title", b"<b", b"<body", b"<br", b"<p",
)
_WHITESPACE = b" \t\r\n\x0c"
_BOM = b"\xef\xbb\xbf"
# Control characters a text file may hold: tab, newline, form feed, carriage return,
# and escape (the colours of a terminal log).
_TEXT_CONTROLS = frozenset(b"\t\n\x0c\r\x1b")
_MEDIA_TYPE = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}")


def clean_media_type(field: str, value: str | None) -> str:
    """A declared media type as `type/subtype`, lower case, its parameters dropped (a
    text type is served as UTF-8 whatever charset it names); none declared: bytes."""
    if value is None or not value.strip():
        return OCTET_STREAM
    essence = value.split(";", 1)[0].strip().lower()
    if not _MEDIA_TYPE.fullmatch(essence):
        raise ValidationFailed(field, "must be a media type such as text/plain")
    return essence


def sniff(head: bytes, *, complete: bool) -> str:
    """The media type the first bytes show; `complete`: they are the whole file (else a
    character cut at their end is not held against them)."""
    for signature, media in _SIGNATURES:
        if head.startswith(signature):
            return media
    start = head.removeprefix(_BOM).lstrip(_WHITESPACE)
    lowered = start[:512].lower()
    if _is_html(lowered):
        return HTML
    if lowered.startswith(b"<svg") or (lowered.startswith(b"<?xml") and b"<svg" in lowered):
        return SVG
    if not _is_text(head, complete=complete):
        return OCTET_STREAM
    return JSON if start[:1] in (b"{", b"[") else PLAIN_TEXT


def _is_html(lowered: bytes) -> bool:
    if lowered.startswith(b"<!--"):
        return True
    return any(
        lowered.startswith(tag) and lowered[len(tag) : len(tag) + 1] in (b" ", b">")
        for tag in _HTML_TAGS
    )


def _is_text(head: bytes, *, complete: bool) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as cut:
        # A character the sniffed prefix cuts in two is text all the same.
        if complete or cut.start < len(head) - 3 or cut.reason != "unexpected end of data":
            return False
    return not any(byte < 32 and byte not in _TEXT_CONTROLS for byte in head)


def disagrees(declared: str, sniffed: str) -> bool:
    """Whether the bytes contradict the declared type (recorded, never refused). Plain
    text is any textual type; unrecognised bytes contradict only a type that would have
    been recognised (a signature, HTML, SVG, text)."""
    if declared == sniffed:
        return False
    if sniffed in TEXT_SNIFFS:
        return not _textual(declared)
    if sniffed == OCTET_STREAM:
        return declared in SIGNED_TYPES or declared in (HTML, SVG) or _textual(declared)
    return True


def _textual(media: str) -> bool:
    if media in (HTML, SVG):
        return False
    return (
        media.startswith("text/")
        or media in (JSON, "application/xml", "application/x-ndjson", "application/yaml")
        or media.endswith(("+json", "+xml"))
    )


def served_media_type(declared: str, sniffed: str | None) -> str:
    """What a download is served as: a declared text type of the allow-list whose bytes
    are plain text, as that type (UTF-8); anything else as bytes."""
    if sniffed in TEXT_SNIFFS and declared in SERVED_AS_TEXT:
        return f"{declared}; charset=utf-8" if declared.startswith("text/") else declared
    return OCTET_STREAM
