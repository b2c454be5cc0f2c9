"""Relay-style connections (`first`/`after`, `edges`, `pageInfo`) with opaque cursors."""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import strawberry

from hub.errors import ValidationFailed

N = TypeVar("N")
V = TypeVar("V")


@strawberry.type
class PageInfo:
    has_next_page: bool
    end_cursor: str | None


@strawberry.type
class Edge(Generic[N]):
    node: N
    cursor: str


@strawberry.type
class Connection(Generic[N]):
    edges: list[Edge[N]]
    page_info: PageInfo


def encode_cursor(key: str) -> str:
    return base64.urlsafe_b64encode(key.encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> str | None:
    if not cursor:
        return None
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        return base64.urlsafe_b64decode(padded.encode()).decode()
    except (ValueError, UnicodeDecodeError):
        raise ValidationFailed("after", "is not a cursor this server issued") from None


def page_size(first: int | None, maximum: int, default: int = 50) -> int:
    size = default if first is None else first
    if size < 1 or size > maximum:
        raise ValidationFailed("first", f"must be between 1 and {maximum}")
    return size


def connection(
    rows: Sequence[V], size: int, key: Callable[[V], str], node: Callable[[V], N]
) -> Connection[N]:
    """`rows` was fetched with limit size + 1, so one extra row means another page."""
    visible = rows[:size]
    edges = [Edge(node=node(row), cursor=encode_cursor(key(row))) for row in visible]
    return Connection(
        edges=edges,
        page_info=PageInfo(
            has_next_page=len(rows) > size,
            end_cursor=edges[-1].cursor if edges else None,
        ),
    )
