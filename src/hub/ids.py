"""Opaque, prefixed identifiers, sortable by creation time (ULID)."""

from __future__ import annotations

import base64
import secrets

from ulid import ULID

# RFC 4648's base32 alphabet to Crockford's (ULID's), lower-cased as ids are.
_CROCKFORD = bytes.maketrans(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", b"0123456789abcdefghjkmnpqrstvwxyz"
)


def new_id(prefix: str) -> str:
    return f"{prefix}_{str(ULID()).lower()}"


def new_ids(prefix: str, count: int) -> list[str]:
    """`count` ids made at once (a bulk insert's), in increasing order: one instant and a
    random 80-bit part counting up from a random start, as ULID's monotonic mode makes
    ids within one millisecond."""
    head = f"{prefix}_{str(ULID())[:10].lower()}"
    start = secrets.randbits(80)
    if start + count >= 1 << 80:
        start -= count
    encode, translate = base64.b32encode, _CROCKFORD
    return [
        head + encode((start + offset).to_bytes(10, "big")).translate(translate).decode()
        for offset in range(count)
    ]


def has_prefix(value: str, prefix: str) -> bool:
    return value.startswith(f"{prefix}_") and len(value) == len(prefix) + 27
