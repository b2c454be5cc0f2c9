"""Input hygiene every module applies before touching state: trimmed, bounded text.

A refusal names the field in the API's spelling, so a client can tell what to fix.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import TypeVar

from hub.errors import ValidationFailed

E = TypeVar("E", bound=StrEnum)


def clean_choice(field: str, value: str, vocabulary: type[E]) -> E:
    """`value` as a name of `vocabulary` (a module's declared vocabulary), or refused
    with the names it may take."""
    try:
        return vocabulary(value)
    except ValueError:
        raise ValidationFailed(field, f"must be one of {', '.join(vocabulary)}") from None


def clean_text(field: str, value: str, max_length: int, *, required: bool = True) -> str:
    value = value.strip()
    if required and not value:
        raise ValidationFailed(field, "must not be empty")
    if len(value) > max_length:
        raise ValidationFailed(field, f"must be at most {max_length} characters")
    if "\x00" in value:
        raise ValidationFailed(field, "must not contain NUL characters")
    return value


_CONTROL = re.compile(r"[\x00-\x1f]")


def clean_label(field: str, value: str, max_length: int = 200, *, required: bool = True) -> str:
    """A one-line label: no control characters at all."""
    value = clean_text(field, value, max_length, required=required)
    if _CONTROL.search(value):
        raise ValidationFailed(field, "must not contain control characters")
    return value


def clean_optional(field: str, value: str | None, max_length: int) -> str | None:
    if value is None:
        return None
    return clean_label(field, value, max_length, required=False) or None


def clean_list(field: str, values: Sequence[str], *, max_items: int, max_length: int) -> list[str]:
    if len(values) > max_items:
        raise ValidationFailed(field, f"must have at most {max_items} items")
    try:
        return [clean_text(field, value, max_length) for value in values]
    except ValidationFailed:
        # Named by its position (found again only now: an import checks 100,000 lists).
        return [
            clean_text(f"{field}[{index}]", value, max_length)
            for index, value in enumerate(values)
        ]


def bounded_int(field: str, value: int, low: int, high: int) -> int:
    if not low <= value <= high:
        raise ValidationFailed(field, f"must be between {low} and {high}")
    return value


def clean_revision(field: str, value: str) -> str:
    """A git object name (abbreviated or full SHA-1 / SHA-256, hex)."""
    value = value.strip().lower()
    if not 7 <= len(value) <= 64 or any(ch not in "0123456789abcdef" for ch in value):
        raise ValidationFailed(field, "must be a hexadecimal git revision of 7-64 characters")
    return value


def clean_full_revision(field: str, value: str) -> str:
    """A full git object name (40 hex for SHA-1, 64 for SHA-256): where a revision is
    compared for identity (evidence, integrated results), a prefix could match another
    commit, so abbreviations are refused."""
    value = clean_revision(field, value)
    if len(value) not in (40, 64):
        raise ValidationFailed(
            field, "must be a full commit id (40 or 64 hex characters), not an abbreviation"
        )
    return value


def clean_branch(field: str, value: str) -> str:
    """A git branch name, by git's check-ref-format rules that matter in practice."""
    branch = value.strip()
    if (
        not branch
        or len(branch) > 255
        or any(ch.isspace() or ch in "~^:?*[\\" or ord(ch) < 32 for ch in branch)
        or ".." in branch
        or "@{" in branch
        or branch.startswith(("-", "/"))
        or branch.endswith(("/", ".lock", "."))
    ):
        raise ValidationFailed(field, f"{value!r} is not a valid branch name")
    return branch


def clean_moment(field: str, value: datetime) -> datetime:
    """A client-supplied instant: it must say its offset (coordinator time is UTC)."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValidationFailed(field, "must include a UTC offset, e.g. 2026-01-01T12:00:00Z")
    return value.astimezone(UTC)
