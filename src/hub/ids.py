"""Opaque, prefixed identifiers, sortable by creation time (ULID)."""

from __future__ import annotations

from ulid import ULID


def new_id(prefix: str) -> str:
    return f"{prefix}_{str(ULID()).lower()}"


def has_prefix(value: str, prefix: str) -> bool:
    return value.startswith(f"{prefix}_") and len(value) == len(prefix) + 27
