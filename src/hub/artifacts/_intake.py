"""The body of one upload as it streams in: counted, hashed, sniffed and written to a
staging file under a generated name.

Counting happens as each piece arrives (`count`), before it is kept, so a body that
grows past the per-file limit, or past the length it declared, is cut off there; the
hashing (`hash`) and the writing (`write`) run off the event loop, in batches, each in
its own thread beside the other. Memory holds two batches (one kept while the next
arrives) and the first bytes (for sniffing), whatever the size of the file.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from hub.artifacts._media import SNIFF_BYTES, sniff
from hub.artifacts.errors import FileTooLarge, LengthMismatch


@dataclass(frozen=True)
class Received:
    """A whole body: its size, its SHA-256, and what its first bytes show."""

    size: int
    sha256: str
    sniffed_media_type: str


class Intake:
    def __init__(self, *, limit: int, declared_size: int | None, staging: Path | None) -> None:
        """`staging`: the file to write (None: the body is only hashed, to compare a
        keyed retry with the upload it repeats)."""
        self.limit = limit
        self.declared_size = declared_size
        self.staging = staging
        self.counted = 0
        self._digest = hashlib.sha256()
        self._head = bytearray()
        self._file: BinaryIO | None = None

    def open(self) -> None:
        if self.staging is not None:
            self.staging.parent.mkdir(parents=True, exist_ok=True)
            # A new file only readable by the server: never one that exists already.
            descriptor = os.open(self.staging, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            self._file = os.fdopen(descriptor, "wb")

    def count(self, size: int) -> None:
        """Admit `size` more bytes, or refuse the upload: past the per-file limit, or
        past the length the body declared."""
        self.counted += size
        if self.counted > self.limit:
            raise FileTooLarge(self.limit)
        if self.declared_size is not None and self.counted > self.declared_size:
            raise LengthMismatch(self.declared_size, "carried more")

    def hash(self, pieces: Sequence[bytes]) -> None:
        """Hash pieces already counted, and keep the first bytes for sniffing (blocking:
        off the event loop; `write` may run beside it, on the same pieces)."""
        for piece in pieces:
            self._digest.update(piece)
            if len(self._head) < SNIFF_BYTES:
                self._head += piece[: SNIFF_BYTES - len(self._head)]

    def write(self, pieces: Sequence[bytes]) -> None:
        """Write pieces already counted to the staging file (blocking: off the event
        loop; `hash` may run beside it, on the same pieces)."""
        if self._file is not None:
            self._file.writelines(pieces)

    def finish(self) -> Received:
        """The body ended: check its length, make the staging file durable (blocking)."""
        if self.declared_size is not None and self.counted != self.declared_size:
            raise LengthMismatch(self.declared_size, f"carried {self.counted}")
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None
        return Received(
            size=self.counted,
            sha256=self._digest.hexdigest(),
            sniffed_media_type=sniff(bytes(self._head), complete=self.counted <= SNIFF_BYTES),
        )

    def discard(self) -> None:
        """Close and remove the staging file, whatever state it is in."""
        if self._file is not None:
            self._file.close()
            self._file = None
        if self.staging is not None:
            self.staging.unlink(missing_ok=True)
