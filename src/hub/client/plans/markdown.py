"""A Markdown checklist (docs/import-formats.md, "Markdown checklist").

    ## Sign-in                                   headings only end a list
    - [ ] Sign in with a token {#auth}           an item; {#id} or <!-- id: … --> is its id
      People and agents sign in with a token.    text under an item: its outcome
      - [x] Parse the header {#auth-header}      a sub-item: a child (its parent: OBJECTIVE)
        - the header is read once                a plain bullet: an acceptance criterion
        - a missing header is 401

`- [ ]` is an open item, `- [x]` one closed as COMPLETED (done outside hub). Nesting by
indentation is parent and child; an item with children is an OBJECTIVE. Without an id
an item's id is its title as a slug, after its parent's id (`auth/parse-the-header`):
renaming it, or its parent, then makes it another item, so the reader warns once.

The file is read a line at a time. An item is yielded when its text and criteria have
been read, or as soon as its first child appears (a parent before its children): text
or criteria written after an item's children are ignored, with a warning. What is held
is the open items along one path of the tree, and the ids seen (a duplicate is refused
naming both lines).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from hub.client.plans.items import Item, Located, PlanFileError, Warn, slug

_CHECKBOX = re.compile(
    r"(?P<indent> *)(?:[-*+]|\d{1,9}[.)]) +\[(?P<mark>[ xX])\](?: +(?P<text>.*))?$"
)
_BULLET = re.compile(r"(?P<indent> *)(?:[-*+]|\d{1,9}[.)]) +(?P<text>.*\S.*)$")
_HEADING = re.compile(r" {0,3}#{1,6}(?: |$)")
_FENCE = re.compile(r" *(```+|~~~+)")
_COMMENT_ID = re.compile(r"<!--\s*id:\s*(?P<id>[^\s>]+)\s*-->")
_SUFFIX_ID = re.compile(r"\s*\{#(?P<id>[^\s{}]+)\}\s*$")


@dataclass
class _Open:
    """An item being read: its line, indentation, what it has gathered so far."""

    line: int
    indent: int
    source_id: str
    title: str
    done: bool
    parent: str | None
    paragraphs: list[list[str]] = field(default_factory=lambda: [[]])
    criteria: list[str] = field(default_factory=list)
    has_children: bool = False
    yielded: bool = False
    ignored: int = 0  # lines after its children, warned about once

    def item(self, system: str) -> Item:
        item: Item = {"sourceSystem": system, "sourceId": self.source_id, "title": self.title}
        outcome = "\n\n".join("\n".join(p) for p in self.paragraphs if p)
        if outcome:
            item["outcome"] = outcome
        if self.criteria:
            item["acceptanceCriteria"] = list(self.criteria)
        if self.has_children:
            item["kind"] = "OBJECTIVE"
        if self.parent is not None:
            item["parent"] = self.parent
        if self.done:
            item["closed"] = {"reason": "COMPLETED"}
        return item


def read_markdown(path: Path, system: str, warn: Warn) -> Iterator[Located]:
    try:
        text = path.open(encoding="utf-8-sig")
    except OSError as exc:
        raise PlanFileError(path, "", f"cannot be read ({exc.strerror or exc})") from exc
    with text:
        yield from _Reader(path, system, warn).read(text)


class _Reader:
    def __init__(self, path: Path, system: str, warn: Warn) -> None:
        self.path = path
        self.system = system
        self.warn = warn
        self.open: list[_Open] = []  # the path from a top-level item to the newest
        self.seen: dict[str, int] = {}  # id -> the line that gave it
        self.without_id: list[tuple[int, str]] = []  # the first few, for the warning
        self.without_id_count = 0
        # The criterion a wrapped line continues: its item and indentation.
        self.criterion: tuple[_Open, int] | None = None

    def read(self, text: Iterator[str]) -> Iterator[Located]:
        fence: str | None = None
        for number, raw in enumerate(text, start=1):
            line = raw.rstrip("\r\n").expandtabs(4)
            if fence is not None:
                if line.strip().startswith(fence):
                    fence = None
                continue
            if opened := _FENCE.match(line):
                fence = opened.group(1)[:3]
                self.criterion = None
                continue
            if _HEADING.match(line):
                yield from self._close(0)
                continue
            if box := _CHECKBOX.match(line):
                yield from self._item(number, box)
                continue
            if not line.strip():
                self._blank()
                continue
            indent = len(line) - len(line.lstrip(" "))
            if bullet := _BULLET.match(line):
                yield from self._criterion(number, len(bullet["indent"]), bullet["text"].strip())
                continue
            yield from self._text(number, indent, line.strip())
        yield from self._close(0)
        self._warn_without_id()

    # --- what a line is ------------------------------------------------------------

    def _item(self, number: int, box: re.Match[str]) -> Iterator[Located]:
        indent = len(box["indent"])
        yield from self._close(indent)
        parent = self.open[-1] if self.open else None
        if parent is not None and not parent.yielded:
            parent.has_children = True
            yield self._yield(parent)
        title, source_id = self._identity(number, (box["text"] or "").strip(), parent)
        self.open.append(
            _Open(
                line=number,
                indent=indent,
                source_id=source_id,
                title=title,
                done=box["mark"] in "xX",
                parent=parent.source_id if parent else None,
            )
        )
        self.criterion = None

    def _criterion(self, number: int, indent: int, text: str) -> Iterator[Located]:
        owner = self._owner(indent)
        self.criterion = None
        if owner is None:
            # A plain bullet at the margin is prose: it ends the checklist.
            yield from self._close(0)
        elif owner.yielded:
            self._ignore(number, owner)
        else:
            owner.criteria.append(text)
            self.criterion = (owner, indent)

    def _text(self, number: int, indent: int, text: str) -> Iterator[Located]:
        owner = self._owner(indent)
        if owner is None:
            # Text at the margin ends the list, as it does in Markdown.
            yield from self._close(0)
            return
        if owner.yielded:
            self._ignore(number, owner)
        elif (
            self.criterion is not None
            and self.criterion[0] is owner
            and (indent > self.criterion[1])
        ):
            owner.criteria[-1] += " " + text  # a criterion wrapped onto the next line
        else:
            owner.paragraphs[-1].append(text)

    def _blank(self) -> None:
        self.criterion = None
        if self.open and self.open[-1].paragraphs[-1]:
            self.open[-1].paragraphs.append([])

    # --- the open items ------------------------------------------------------------

    def _owner(self, indent: int) -> _Open | None:
        """The item a line indented so belongs to: the deepest one it is indented under."""
        for candidate in reversed(self.open):
            if indent > candidate.indent:
                return candidate
        return None

    def _close(self, indent: int) -> Iterator[Located]:
        """Close the items a line at `indent` ends (those indented as deep or deeper)."""
        while self.open and self.open[-1].indent >= indent:
            closing = self.open.pop()
            if not closing.yielded:
                yield self._yield(closing)
        self.criterion = None

    def _yield(self, item: _Open) -> Located:
        item.yielded = True
        return Located(item.line, item.item(self.system))

    def _ignore(self, number: int, owner: _Open) -> None:
        owner.ignored += 1
        if owner.ignored == 1:
            self.warn(
                f"{self.path}, line {number}: text after the sub-items of {owner.title!r} "
                f"(line {owner.line}) is ignored: write an item's description and criteria "
                "right under it, before its sub-items"
            )

    def _identity(self, number: int, text: str, parent: _Open | None) -> tuple[str, str]:
        """The title and the source id of an item's line."""
        given: str | None = None
        if found := _COMMENT_ID.search(text):
            given = found["id"]
            text = (text[: found.start()] + text[found.end() :]).strip()
        if found := _SUFFIX_ID.search(text):
            if given is not None and given != found["id"]:
                raise PlanFileError(
                    self.path,
                    f"line {number}",
                    f"two ids, {given!r} and {found['id']!r}: give an item one",
                )
            given = found["id"]
            text = text[: found.start()].strip()
        if not text:
            raise PlanFileError(self.path, f"line {number}", "an item without a title")
        if given is None:
            made = slug(text)
            if not made:
                raise PlanFileError(
                    self.path,
                    f"line {number}",
                    f"cannot make an id from the title {text!r}: give it one with {{#id}}",
                )
            given = f"{parent.source_id}/{made}" if parent is not None else made
            self.without_id_count += 1
            if len(self.without_id) < 3:
                self.without_id.append((number, text))
        if given in self.seen:
            raise PlanFileError(
                self.path,
                f"line {number}",
                f"the id {given!r} is also line {self.seen[given]}'s: give one of them "
                "its own id with {#id}",
            )
        self.seen[given] = number
        return text, given

    def _warn_without_id(self) -> None:
        if not self.without_id_count:
            return
        lines = ", ".join(f"line {n} {title!r}" for n, title in self.without_id)
        more = self.without_id_count - len(self.without_id)
        self.warn(
            f"{self.path}: {self.without_id_count} item(s) have no id ({lines}"
            f"{f' and {more} more' if more > 0 else ''}): each is identified by its title "
            "and its parent's, so renaming one makes it a new task on the next import. "
            "Give each a stable id: `- [ ] Title {#some-id}`"
        )
