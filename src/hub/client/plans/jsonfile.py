"""JSON and JSON Lines, read a value at a time.

`array_values` walks a top-level JSON array without reading the file whole: it keeps a
window of text, decodes one element with the standard library's `raw_decode`, and drops
what it has read. Memory is one element (at most `MAX_ITEM_CHARS`) plus a read-ahead,
whatever the file's size, and a refusal names the element and its line. No JSON
streaming library is needed for that: the elements of a plan are small objects, and the
standard decoder stays the one that judges them.

`line_values` reads JSON Lines, a line at a time (blank lines skipped).

`hub_items` checks hub's own wire items (`items.check_wire_item`). JSON Lines is the
form hub writes (`hub export --format jsonl`) and the one to prefer: a file that is
appended to, streamed and diffed a line at a time. A JSON array of the same items is
read the same way, for tools that only write JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from hub.client.plans.items import Located, PlanFileError, check_wire_item

# How much text is read at a time, and the longest one element may be: past it the
# element is refused rather than the whole file held to find its end.
READ_CHARS = 64 * 1024
MAX_ITEM_CHARS = 4 * 1024 * 1024

_DECODER = json.JSONDecoder()
_SPACE = " \t\n\r"


def line_values(path: Path) -> Iterator[tuple[int, Any]]:
    """Each non-blank line's JSON value, with its line number."""
    with _open(path) as text:
        for number, line in enumerate(text, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                raise PlanFileError(
                    path, f"line {number}", f"not JSON ({exc.msg} at column {exc.colno})"
                ) from None


def array_values(path: Path) -> Iterator[tuple[int, Any]]:
    """Each element of the top-level JSON array in `path`, with the line it starts on."""
    with _open(path) as text:
        yield from _Window(path, text).elements()


def hub_items(
    path: Path, values: Iterator[tuple[int, Any]], default_system: str
) -> Iterator[Located]:
    """Hub's own wire items; an item without `sourceSystem` gets the file's default."""
    for line, value in values:
        item = check_wire_item(path, line, value)
        item.setdefault("sourceSystem", default_system)
        yield Located(line, item)


def first_value(path: Path, *, array: bool) -> Any:
    """The file's first element (or line), or None: enough to recognise what wrote it."""
    try:
        for _, value in array_values(path) if array else line_values(path):
            return value
    except PlanFileError:
        return None
    return None


def _open(path: Path) -> IO[str]:
    try:
        # utf-8-sig: a byte order mark, as some Windows tools write, is not an error.
        return path.open(encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise PlanFileError(path, "", f"cannot be read ({exc.strerror or exc})") from exc


class _Window:
    """A window over the text: `buffer[pos:]` is read but not yet decoded, and `line` is
    the line `pos` is on."""

    def __init__(self, path: Path, text: IO[str]) -> None:
        self.path = path
        self.text = text
        self.buffer = ""
        self.pos = 0
        self.line = 1
        self.eof = False

    def elements(self) -> Iterator[tuple[int, Any]]:
        if self._next_char() != "[":
            raise PlanFileError(self.path, f"line {self.line}", self._expected("'['"))
        self._advance(1)
        index = 0
        if self._next_char() == "]":
            self._advance(1)
        else:
            while True:
                index += 1
                if self._next_char() == "":
                    raise PlanFileError(
                        self.path, f"line {self.line}", "the array does not end (no ']')"
                    )
                line = self.line
                yield line, self._decode(index)
                separator = self._next_char()
                if separator == "]":
                    self._advance(1)
                    break
                if separator != ",":
                    raise PlanFileError(
                        self.path,
                        f"item {index} (line {line})",
                        self._expected("',' or ']' after it"),
                    )
                self._advance(1)
        if self._next_char() != "":
            raise PlanFileError(self.path, f"line {self.line}", "text after the end of the array")

    def _decode(self, index: int) -> Any:
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buffer, self.pos)
            except json.JSONDecodeError as exc:
                if self.eof:
                    line = self.line + self.buffer.count("\n", self.pos, exc.pos)
                    raise PlanFileError(
                        self.path, f"item {index} (line {line})", f"not JSON ({exc.msg})"
                    ) from None
                if len(self.buffer) - self.pos > MAX_ITEM_CHARS:
                    raise PlanFileError(
                        self.path,
                        f"item {index} (line {self.line})",
                        f"not JSON, or longer than {MAX_ITEM_CHARS // (1024 * 1024)} MiB",
                    ) from None
                # Probably cut off by the window: read as much again (never less than a
                # piece), so a long element is decoded a bounded number of times.
                self._read(max(READ_CHARS, len(self.buffer) - self.pos))
                continue
            if end == len(self.buffer) and not self.eof:
                # A number or literal may go on past the window: decode it again whole.
                self._read(READ_CHARS)
                continue
            self._advance(end - self.pos)
            return value

    def _next_char(self) -> str:
        """The next character that is not white space ('' at the end), not consumed."""
        while True:
            while self.pos < len(self.buffer) and self.buffer[self.pos] in _SPACE:
                self._advance(1)
            if self.pos < len(self.buffer):
                return self.buffer[self.pos]
            if self.eof:
                return ""
            self._read(READ_CHARS)

    def _advance(self, count: int) -> None:
        self.line += self.buffer.count("\n", self.pos, self.pos + count)
        self.pos += count

    def _read(self, count: int) -> None:
        piece = self.text.read(count)
        if not piece:
            self.eof = True
        # What was decoded is dropped: the window holds only what is still to come.
        self.buffer = self.buffer[self.pos :] + piece
        self.pos = 0

    def _expected(self, what: str) -> str:
        found = self._next_char()
        return f"expected {what}, found {repr(found) if found else 'the end of the file'}"
