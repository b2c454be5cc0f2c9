"""An upload's body as `_stream` keeps it: hashed and written whole and in order while
the next batch arrives, and a refusal mid-body waits for the batch being kept before
the staging file can go. Without a server or a database."""

from __future__ import annotations

import asyncio
import hashlib
import random
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hub.artifacts._intake import Intake
from hub.artifacts._uploads import BATCH_BYTES, _stream
from hub.artifacts.errors import FileTooLarge

SIZES = [1, 300_000, 700_000, BATCH_BYTES, 5, 2 * BATCH_BYTES + 3, 17]


async def _pieces(pieces: list[bytes]) -> AsyncIterator[bytes]:
    for piece in pieces:
        yield piece


def test_a_body_in_odd_pieces_is_hashed_and_written_whole_and_in_order(tmp_path: Path) -> None:
    generator = random.Random(13)
    pieces = [generator.randbytes(size) for size in SIZES]
    whole = b"".join(pieces)
    staging = tmp_path / "upload.part"
    intake = Intake(limit=len(whole), declared_size=len(whole), staging=staging)
    intake.open()
    asyncio.run(_stream(intake, _pieces(pieces)))
    received = intake.finish()
    assert (received.size, received.sha256) == (len(whole), hashlib.sha256(whole).hexdigest())
    assert received.sniffed_media_type == "application/octet-stream"
    assert staging.read_bytes() == whole


def test_a_refusal_while_a_batch_is_kept_waits_for_that_batch(tmp_path: Path) -> None:
    staging = tmp_path / "upload.part"
    intake = Intake(limit=BATCH_BYTES + 1, declared_size=None, staging=staging)
    intake.open()
    refused = threading.Event()
    written: list[int] = []
    count, write = intake.count, intake.write

    def counted(size: int) -> None:
        try:
            count(size)
        except FileTooLarge:
            refused.set()
            raise

    def held_write(pieces: list[bytes]) -> None:
        # The first batch is still being written when the next piece is refused.
        assert refused.wait(timeout=60)
        write(pieces)
        written.append(sum(map(len, pieces)))

    intake.count = counted  # type: ignore[method-assign]
    intake.write = held_write  # type: ignore[method-assign]

    async def upload() -> list[int]:
        with pytest.raises(FileTooLarge):
            await _stream(intake, _pieces([b"a" * BATCH_BYTES, b"b" * 2]))
        return list(written)  # what had been written when the refusal was raised

    assert asyncio.run(upload()) == [BATCH_BYTES]
    intake.discard()
    assert not staging.exists()
