"""Bearer tokens: random secrets with a prefix that says what they are.

Format: `hub_<kind>_<token id>_<secret>`, where the secret is 256 random bits in hex.
The token id is public (it finds the row); the secret is stored only as its
SHA-256 and compared in constant time. A fast hash is right here: the secret has
256 bits of entropy, so there is nothing to brute-force.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Final

from ulid import ULID

PREFIXES: Final = {"personal": "pat", "session": "ses", "reporter": "rep"}
KINDS_BY_PREFIX: Final = {prefix: kind for kind, prefix in PREFIXES.items()}


@dataclass(frozen=True)
class MintedToken:
    token_id: str
    plaintext: str
    secret_hash: str


@dataclass(frozen=True)
class PresentedToken:
    kind: str
    token_id: str
    secret: str


def mint(kind: str) -> MintedToken:
    ident = str(ULID()).lower()
    secret = secrets.token_hex(32)
    return MintedToken(
        token_id=f"tok_{ident}",
        plaintext=f"hub_{PREFIXES[kind]}_{ident}_{secret}",
        secret_hash=hash_secret(secret),
    )


def parse(plaintext: str) -> PresentedToken | None:
    parts = plaintext.strip().split("_")
    if len(parts) != 4 or parts[0] != "hub" or parts[1] not in KINDS_BY_PREFIX:
        return None
    ident, secret = parts[2], parts[3]
    if len(ident) != 26 or len(secret) != 64:
        return None
    return PresentedToken(kind=KINDS_BY_PREFIX[parts[1]], token_id=f"tok_{ident}", secret=secret)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def secret_matches(secret: str, stored_hash: str) -> bool:
    return hmac.compare_digest(hash_secret(secret), stored_hash)
