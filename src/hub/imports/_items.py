"""Import items: read from the wire (a JSON object, field by field), checked with
createTask's limits, and fingerprinted.

`read_item` never raises: an item whose shape is wrong (an unknown key, a number where
text belongs) carries its `problem`, so that a partial import reports it INVALID and an
all-or-nothing one refuses the whole import naming it. `check_item` cleans the content
the way `createTask` does (the work module's `clean_fields`, `clean_labels`) and fills
the defaults. `fingerprint` is a digest of an item's content as sent: an import state
keeps the one last imported, so a re-import tells an unchanged item by it alone, without
checking it again or reading its task's fields.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from sys import intern
from typing import Any

from hub.errors import ValidationFailed
from hub.inputs import clean_choice, clean_label, clean_text
from hub.work import service as work
from hub.work.vocabulary import CloseReason, TaskKind

MAX_SOURCE_SYSTEM = 100
MAX_SOURCE_ID = 200
MAX_PREREQUISITES = 500
# Kinds an import makes: review and integration tasks are opened by submissions only.
IMPORTED_KINDS = (TaskKind.IMPLEMENTATION, TaskKind.GENERAL, TaskKind.OBJECTIVE)
# The wire's field names (docs/imports.md, "The item"); any other key is refused, so a
# misspelt field is never silently dropped.
ITEM_KEYS = frozenset({
    "sourceSystem", "sourceId", "title", "outcome", "acceptanceCriteria", "kind", "priority",
    "parent", "prerequisites", "labels", "closed",
})  # fmt: skip
CLOSED_KEYS = frozenset({"reason", "note", "reopenCondition", "relatedTo"})
# Changing what a fingerprint covers makes every item look changed once: say so here.
_FINGERPRINT_VERSION = 1


@dataclass(frozen=True, slots=True)
class ImportClosure:
    """An item that is closed at its source: `closeTask`'s reason, note, reopen condition,
    and the source id of the related item."""

    reason: str
    note: str = ""
    reopen_condition: str | None = None
    related_to: str | None = None


@dataclass(frozen=True, slots=True)
class ImportItem:
    """One item as sent; `number` is its 1-based position (a file's line). `problem`: why
    its shape was refused, if it was."""

    number: int
    source_system: str
    source_id: str
    title: str
    outcome: str = ""
    acceptance_criteria: tuple[str, ...] = ()
    kind: str | None = None
    priority: int = 0
    parent: str | None = None
    prerequisites: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    closed: ImportClosure | None = None
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class CheckedItem:
    """An item's content cleaned and completed, as it would be stored."""

    fields: work.TaskFields
    labels: tuple[str, ...]
    parent: str | None
    prerequisites: tuple[str, ...]
    closed: work.Closure | None  # `related` is the related item's source id here


def read_item(number: int, raw: object) -> ImportItem:
    """The wire's JSON object as an item, or an item carrying why its shape is refused."""
    if not isinstance(raw, Mapping):
        return _refused(number, {}, "must be a JSON object")
    if not raw.keys() <= ITEM_KEYS:
        unknown = sorted(str(key) for key in raw if key not in ITEM_KEYS)
        known = ", ".join(sorted(ITEM_KEYS))
        return _refused(number, raw, f"{unknown[0]}: is not a field of an item (they are {known})")
    try:
        closed = _closure(raw.get("closed"))
        # A source system, a kind and labels repeat from item to item: one string each,
        # not one per item (100,000 items are held at once).
        labels = _texts(raw, "labels")
        kind = _text(raw, "kind")
        return ImportItem(
            number=number,
            source_system=intern(_required(raw, "sourceSystem")),
            source_id=_required(raw, "sourceId"),
            title=_required(raw, "title"),
            outcome=_text(raw, "outcome") or "",
            acceptance_criteria=_texts(raw, "acceptanceCriteria"),
            kind=None if kind is None else intern(kind),
            priority=_integer(raw, "priority"),
            parent=_text(raw, "parent"),
            prerequisites=_texts(raw, "prerequisites"),
            labels=tuple(map(intern, labels)),
            closed=closed,
        )
    except ValidationFailed as refused:
        return _refused(number, raw, refused.message)


def _refused(number: int, raw: Mapping[Any, Any], problem: str) -> ImportItem:
    def given(key: str) -> str:
        value = raw.get(key)
        return value if isinstance(value, str) else ""

    return ImportItem(
        number, given("sourceSystem"), given("sourceId"), given("title"), problem=problem
    )


def _required(raw: Mapping[str, Any], key: str) -> str:
    value = _text(raw, key)
    if value is None:
        raise ValidationFailed(key, "is required")
    return value


def _text(raw: Mapping[str, Any], key: str) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationFailed(key, "must be a string")
    return value


def _texts(raw: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = raw.get(key)
    if value is None:
        return ()
    # Exact types: what JSON and the GraphQL input make (and the quickest check).
    if type(value) is not list or not all(type(entry) is str for entry in value):
        raise ValidationFailed(key, "must be a list of strings")
    return tuple(value)


def _integer(raw: Mapping[str, Any], key: str) -> int:
    value = raw.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationFailed(key, "must be an integer")
    return value


def _closure(value: object) -> ImportClosure | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValidationFailed("closed", "must be an object with a reason, or null")
    unknown = sorted(str(key) for key in value if key not in CLOSED_KEYS)
    if unknown:
        known = ", ".join(sorted(CLOSED_KEYS))
        raise ValidationFailed(
            f"closed.{unknown[0]}", f"is not a field of closed (they are {known})"
        )
    return ImportClosure(
        reason=_required(value, "reason"),
        note=_text(value, "note") or "",
        reopen_condition=_text(value, "reopenCondition"),
        related_to=_text(value, "relatedTo"),
    )


def source_key(field: str, value: str) -> str:
    """A source id (or system) as stored: one line, bounded."""
    limit = MAX_SOURCE_SYSTEM if field == "sourceSystem" else MAX_SOURCE_ID
    return clean_label(field, value, limit)


def check_item(item: ImportItem, *, is_parent: bool) -> CheckedItem:
    """The item's content cleaned with createTask's limits and completed with the
    defaults (docs/imports.md, "The item"); a refusal names the field. `is_parent`: other
    items of the import name it as their parent (its kind then defaults to OBJECTIVE)."""
    if item.problem is not None:
        raise ValidationFailed("item", item.problem)
    kind = item.kind or (TaskKind.OBJECTIVE if is_parent else TaskKind.IMPLEMENTATION)
    if kind not in IMPORTED_KINDS:
        raise ValidationFailed(
            "kind", f"an import makes {', '.join(IMPORTED_KINDS)} tasks, not {kind}"
        )
    title = item.title
    # Every kind an import makes is judged against criteria: an item without any is
    # judged against what it says it is for.
    fallback = item.outcome.strip() or title.strip()
    criteria = item.acceptance_criteria or ((fallback,) if fallback else ())
    fields = work.clean_fields(kind, title, item.outcome, criteria, item.priority)
    labels = work.clean_labels("labels", item.labels)
    if len(item.prerequisites) > MAX_PREREQUISITES:
        raise ValidationFailed("prerequisites", f"must have at most {MAX_PREREQUISITES} items")
    own = item.source_id
    try:
        needed = sorted({source_key("prerequisites", p) for p in item.prerequisites})
    except ValidationFailed:
        needed = sorted(
            {source_key(f"prerequisites[{i}]", p) for i, p in enumerate(item.prerequisites)}
        )
    prerequisites = _same(item.prerequisites, needed)
    if own in prerequisites:
        raise ValidationFailed("prerequisites", "an item cannot be its own prerequisite")
    parent = None if item.parent is None else source_key("parent", item.parent)
    if parent == own:
        raise ValidationFailed("parent", "an item cannot be its own parent")
    closed = None if item.closed is None else _checked_closure(item.closed, own)
    if is_parent and fields.kind != TaskKind.OBJECTIVE:
        raise ValidationFailed(
            "kind",
            f"other items name it as their parent: it must be an OBJECTIVE, not {fields.kind}",
        )
    return CheckedItem(fields, labels, parent, prerequisites, closed)


def _same(given: tuple[str, ...], cleaned: list[str]) -> tuple[str, ...]:
    """`cleaned` as a tuple: `given` itself when cleaning changed nothing (100,000 items
    are held at once; a copy each would be memory for nothing)."""
    if len(given) == len(cleaned) and all(a is b for a, b in zip(given, cleaned, strict=True)):
        return given
    return tuple(cleaned)


def _checked_closure(closure: ImportClosure, own: str) -> work.Closure:
    reason = clean_choice("closed.reason", closure.reason, CloseReason)
    note = clean_text("closed.note", closure.note, work.MAX_CLOSE_NOTE, required=False)
    reopen = (
        clean_text(
            "closed.reopenCondition", closure.reopen_condition or "", work.MAX_REOPEN_CONDITION,
            required=False,
        )
        or None
    )  # fmt: skip
    if reason == CloseReason.DEFERRED and reopen is None:
        raise ValidationFailed("closed.reopenCondition", "a deferred item needs a reopen condition")
    related = (
        None if closure.related_to is None else source_key("closed.relatedTo", closure.related_to)
    )
    # A SUPERSEDED or DUPLICATE item may come without the item that replaces it: that one
    # can live in another tracker, or in another source system of the same export
    # (docs/imports.md). The task is closed with the reason, and linked only when named.
    if related == own:
        raise ValidationFailed("closed.relatedTo", "an item cannot be related to itself")
    return work.Closure(reason, note, reopen, related)


def fingerprint(item: ImportItem) -> str:
    """A digest of the item's content as sent (its source key aside): the same item
    sent again has the same one, so a re-import knows it unchanged without checking or
    reading anything else of it."""
    closed = item.closed
    content = (
        _FINGERPRINT_VERSION, item.kind, item.title, item.outcome, item.acceptance_criteria,
        item.priority, item.parent, item.prerequisites, item.labels,
        None if closed is None
        else (closed.reason, closed.note, closed.reopen_condition, closed.related_to),
    )  # fmt: skip
    return hashlib.blake2b(repr(content).encode(), digest_size=16).hexdigest()


def batch_digest(items: Sequence[ImportItem], fingerprints: Sequence[str]) -> str:
    """A digest of the items as sent, in order (their `fingerprint`s given): what a keyed
    retry must repeat."""
    digest = hashlib.sha256()
    for item, printed in zip(items, fingerprints, strict=True):
        digest.update(repr((item.number, item.source_system, item.source_id, printed)).encode())
    return digest.hexdigest()
