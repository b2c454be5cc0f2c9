"""The caller's local instruction files (AGENTS.md, CLAUDE.md…), read for what they say
about the topics and paths a project's rules address, and the conflicts between the two.

The files are text the client sends; the server never opens a file. A line speaks to a
key in one of two ways, and nothing else in a file is read as addressed to anything:

- a key line: `migrations: never edit a merged migration`, optionally a list item and
  with the key in bold or backticks (`- **migrations**: …`, ``- `src/api/**`: …``);
- a heading: `## Migrations` (or `## src/api/`) puts the lines under it, up to the next
  heading, on that key.

A key with a `/` or `*` in it is a path (relative to the repository, a glob or a
directory); any other is a topic, compared with rule topics as they are written
(lower-case, spaces as `-`: `## Commit messages` is `commit-messages`). Text inside
fenced code blocks is never a key.

A local instruction conflicts with a current rule when it addresses the rule's topic, or
a path in the rule's scope (one path matching the other's glob, or one inside the
other's directory), and says something else: their texts differ once case, spacing and
Markdown decoration (list markers, emphasis, backticks) are set aside. Conflicts are
shown side by side, the local instruction as written; neither is dropped, and nothing
here decides which one holds (docs/design.md, "Knowledge").
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from hub.knowledge.views import InstructionConflict, LocalInstructionFile, RuleView
from hub.knowledge.vocabulary import ConflictBasis

_FENCE = re.compile(r"\s*(```|~~~)")
_HEADING = re.compile(r"(#{1,6})\s+(?P<key>.+?)\s*#*\s*")
# `- key: text`, `1. **key**: text`, `` `key`: text ``, `**key:** text`.
_KEY_LINE = re.compile(
    r"\s*(?:[-*+]\s+|\d+[.)]\s+)?"
    r"(?:(?P<mark>\*\*|__|`)(?P<marked>[^:`]{1,80}?)(?:(?P=mark)\s*:|:(?P=mark))"
    r"|(?P<key>[^:\s`][^:]{0,79}?)\s*:)"
    r"\s+(?P<text>\S.*)"
)
_WRAPPING = ("**", "__", "`")
_TOPIC_WORDS = re.compile(r"[a-z0-9][a-z0-9._-]*(?:\s+[a-z0-9._-]+)*")
_DECORATION = re.compile(r"^\s*(?:[-*+>]\s+|\d+[.)]\s+)|\*\*|__|`", re.M)


@dataclass(frozen=True)
class Directive:
    """What a local file says to one key: a topic or a path."""

    file: str
    line: int  # where the key is (1 for the first line)
    basis: ConflictBasis
    key: str
    text: str


def conflicts(
    rules: Sequence[RuleView], files: Sequence[LocalInstructionFile]
) -> list[InstructionConflict]:
    """Every local directive that addresses a current rule's topic or paths with other
    words, in the files' order; one per directive and rule."""
    found: list[InstructionConflict] = []
    for file in files:
        for directive in directives(file):
            for rule in rules:
                if rule.retired or not _addresses(directive, rule):
                    continue
                if _plain(directive.text) != _plain(rule.text):
                    found.append(
                        InstructionConflict(
                            rule=rule,
                            basis=directive.basis,
                            key=directive.key,
                            file=directive.file,
                            line=directive.line,
                            local_text=directive.text,
                        )
                    )
    return found


def directives(file: LocalInstructionFile) -> Iterator[Directive]:
    """The file's key lines and keyed sections, in order."""
    section: tuple[int, str] | None = None  # the open heading: its line and key
    body: list[str] = []
    fenced = False
    for number, line in enumerate(file.text.splitlines(), start=1):
        if _FENCE.match(line):
            fenced = not fenced
        if fenced or _FENCE.match(line):
            body.append(line)
            continue
        heading = _HEADING.fullmatch(line)
        if heading:
            yield from _section(file, section, body)
            section, body = (number, heading["key"]), []
            continue
        body.append(line)
        keyed = _KEY_LINE.fullmatch(line)
        if keyed:
            key = keyed["marked"] or keyed["key"]
            yield from _directive(file, number, key, keyed["text"])
    yield from _section(file, section, body)


def _section(
    file: LocalInstructionFile, section: tuple[int, str] | None, body: list[str]
) -> Iterator[Directive]:
    text = "\n".join(body).strip()
    if section is not None and text:
        yield from _directive(file, section[0], section[1], text)


def _directive(file: LocalInstructionFile, line: int, key: str, text: str) -> Iterator[Directive]:
    written = _unwrapped(key.strip())
    if "/" in written or "*" in written:
        yield Directive(file.path, line, ConflictBasis.PATH, _path(written), text.strip())
        return
    topic = written.lower()
    if _TOPIC_WORDS.fullmatch(topic):
        yield Directive(file.path, line, ConflictBasis.TOPIC, "-".join(topic.split()), text)


def _unwrapped(key: str) -> str:
    """A heading's key without the emphasis or backticks around all of it."""
    for mark in _WRAPPING:
        if len(key) > 2 * len(mark) and key.startswith(mark) and key.endswith(mark):
            return key[len(mark) : -len(mark)].strip()
    return key


def _addresses(directive: Directive, rule: RuleView) -> bool:
    if directive.basis == ConflictBasis.TOPIC:
        return directive.key == rule.topic
    return any(_overlap(directive.key, _path(path)) for path in rule.paths)


def _overlap(first: str, second: str) -> bool:
    """One path (or glob) matches the other, or one lies in the other's directory."""
    if fnmatchcase(first, second) or fnmatchcase(second, first):
        return True
    roots = _root(first), _root(second)
    return all(roots) and (_within(*roots) or _within(*reversed(roots)))


def _root(path: str) -> str:
    """The directory a path or glob names before its first wildcard ("" if none)."""
    parts: list[str] = []
    for part in path.split("/"):
        if any(ch in part for ch in "*?["):
            break
        parts.append(part)
    return "/".join(parts)


def _within(inner: str, outer: str) -> bool:
    return inner == outer or inner.startswith(f"{outer}/")


def _path(written: str) -> str:
    return written.removeprefix("./").rstrip("/")


def _plain(text: str) -> str:
    """Text as compared: without Markdown decoration, case and spacing."""
    return " ".join(_DECORATION.sub("", text).lower().split()).rstrip(".")
