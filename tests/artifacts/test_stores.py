"""The `Store` contract, held by both stores: the filesystem and an S3-compatible server
(moto's, started by the suite: tests/support/s3.py)."""

from __future__ import annotations

import hashlib
import os
import socket
import tracemalloc
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import obstore
import pytest

from hub.artifacts._s3 import S3Store
from hub.artifacts._store import CHUNK_BYTES, STAGING_DIR, FilesystemStore, Store
from tests.support.s3 import S3Server, both_stores


def stage(root: Path, data: bytes) -> Path:
    """A finished staging file, where uploads put theirs (under the artifact directory)."""
    staging = root / STAGING_DIR
    staging.mkdir(parents=True, exist_ok=True)
    path = staging / uuid.uuid4().hex
    path.write_bytes(data)
    return path


def read(store: Store, key: str, start: int = 0, end: int | None = None) -> bytes:
    chunks = list(store.read(key, start, end))
    assert all(0 < len(chunk) <= CHUNK_BYTES for chunk in chunks), [len(c) for c in chunks]
    return b"".join(chunks)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "artifacts"


@both_stores
def test_put_then_read_whole_and_by_ranges(store: Store, root: Path) -> None:
    data = os.urandom(2 * CHUNK_BYTES + 123)
    staged = stage(root, data)
    store.put("prj_1/art_1", staged)
    assert not staged.exists()
    n = len(data)
    assert store.size("prj_1/art_1") == n
    assert read(store, "prj_1/art_1") == data
    for start, end in [
        (0, 10),  # the start
        (CHUNK_BYTES - 5, CHUNK_BYTES + 5),  # the middle, across a chunk boundary
        (n - 10, None),  # the end
        (n - 10, n),
        (n - 10, n + 50),  # ending past the end: what there is
        (5, None),
        (0, None),
    ]:
        assert read(store, "prj_1/art_1", start, end) == data[start:end], (start, end)
    for start, end in [(5, 5), (7, 3), (n, None), (n, n + 10), (n + 10, n + 20)]:
        assert read(store, "prj_1/art_1", start, end) == b"", (start, end)


@both_stores
def test_a_zero_byte_object(store: Store, root: Path) -> None:
    store.put("prj_1/empty", stage(root, b""))
    assert store.size("prj_1/empty") == 0
    assert read(store, "prj_1/empty") == b""
    assert read(store, "prj_1/empty", 0, 10) == b""
    assert [(o.key, o.size) for o in store.objects()] == [("prj_1/empty", 0)]


@both_stores
def test_delete_then_the_object_is_gone(store: Store, root: Path) -> None:
    store.put("prj_1/art_1", stage(root, b"bytes"))
    store.delete("prj_1/art_1")
    assert store.size("prj_1/art_1") is None
    for start, end in [(0, None), (1, 3), (2, 2), (10, None)]:
        with pytest.raises(FileNotFoundError):
            read(store, "prj_1/art_1", start, end)
    store.delete("prj_1/art_1")  # a missing object: nothing to do
    store.delete("prj_9/never")
    assert list(store.objects()) == []


@both_stores
def test_objects_lists_exactly_what_was_put(store: Store, root: Path) -> None:
    store.put("prj_1/art_1", stage(root, b"one"))
    store.put("prj_2/art_2", stage(root, b"second"))
    leftover = stage(root, b"an upload still streaming")
    listed = sorted(store.objects(), key=lambda o: o.key)
    assert [(o.key, o.size) for o in listed] == [("prj_1/art_1", 3), ("prj_2/art_2", 6)]
    assert all(o.modified_at.tzinfo is not None for o in listed)
    assert leftover.exists()


@both_stores
def test_keys_outside_the_store_are_not_listed(
    store: Store, root: Path, tmp_path: Path, artifact_store: str, request: pytest.FixtureRequest
) -> None:
    """Beside the store: another S3 prefix in the same bucket (one that merely starts
    with the same letters too) or the bucket's top; another directory on the filesystem."""
    neighbours: list[Store]
    if artifact_store == "s3":
        server: S3Server = request.getfixturevalue("s3_server")
        settings: dict[str, Any] = request.getfixturevalue("store_settings")
        neighbours = [
            S3Store(
                settings["s3_bucket"],
                endpoint_url=server.endpoint_url,
                prefix=prefix,
                access_key_id=server.access_key_id,
                secret_access_key=server.secret_access_key,
            )
            for prefix in ("", "hub2", "other/hub")
        ]
    else:
        neighbours = [FilesystemStore(tmp_path / "artifacts2"), FilesystemStore(tmp_path)]
    for number, neighbour in enumerate(neighbours):
        neighbour.put(f"prj_9/outside_{number}", stage(root, b"not ours"))
    store.put("prj_1/art_1", stage(root, b"ours"))
    assert [o.key for o in store.objects()] == ["prj_1/art_1"]


@both_stores
def test_twenty_mib_round_trip_with_flat_memory(store: Store, root: Path) -> None:
    size = 20 * 1024 * 1024
    staging = root / STAGING_DIR
    staging.mkdir(parents=True)
    staged = staging / "large"
    written = hashlib.sha256()
    with staged.open("wb") as file:
        for _ in range(size // CHUNK_BYTES):
            piece = os.urandom(CHUNK_BYTES)
            written.update(piece)
            file.write(piece)
    tracemalloc.start()
    try:
        store.put("prj_1/large", staged)
        read_back = hashlib.sha256()
        total = 0
        for chunk in store.read("prj_1/large"):
            read_back.update(chunk)
            total += len(chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (total, read_back.hexdigest()) == (size, written.hexdigest())
    assert store.size("prj_1/large") == size
    if isinstance(store, S3Store):
        # A multipart upload's ETag ends with its number of parts (5 MiB each here).
        assert obstore.head(store._store, "prj_1/large")["e_tag"].endswith('-4"')
    # A few chunks at most, never the file: a quarter of it is far above either.
    assert peak < size // 4, f"peak {peak} bytes for a {size}-byte object"


@both_stores
def test_a_failed_put_raises_and_keeps_the_staging_file(
    root: Path, tmp_path: Path, artifact_store: str, request: pytest.FixtureRequest
) -> None:
    """The S3 bucket is missing; the filesystem store's root is a file."""
    broken: Store
    if artifact_store == "s3":
        server: S3Server = request.getfixturevalue("s3_server")
        broken = S3Store(
            f"missing-{uuid.uuid4().hex[:12]}",
            endpoint_url=server.endpoint_url,
            access_key_id=server.access_key_id,
            secret_access_key=server.secret_access_key,
        )
    else:
        (tmp_path / "not-a-directory").write_bytes(b"")
        broken = FilesystemStore(tmp_path / "not-a-directory")
    staged = stage(root, b"keep me")
    with pytest.raises(OSError) as raised:
        broken.put("prj_1/art_1", staged)
    assert not isinstance(raised.value, FileNotFoundError)  # not "your file is missing"
    assert staged.read_bytes() == b"keep me"


def test_an_unreachable_s3_server_keeps_the_staging_file(root: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # Nothing listens on `port` now; the client retries, then gives up.
    unreachable = S3Store(
        "bucket", endpoint_url=f"http://127.0.0.1:{port}", access_key_id="k", secret_access_key="s"
    )
    staged = stage(root, b"keep me")
    with pytest.raises(OSError, match=f"127.0.0.1:{port}"):
        unreachable.put("prj_1/art_1", staged)
    assert staged.read_bytes() == b"keep me"
    # Unreachable is not missing: a reconciliation must not take it for dangling metadata.
    with pytest.raises(OSError):
        unreachable.size("prj_1/art_1")


@pytest.mark.parametrize("key", ["", "/etc/passwd", "../outside", "prj_1/../../outside"])
@both_stores
def test_keys_that_could_leave_the_store_are_refused(store: Store, root: Path, key: str) -> None:
    staged = stage(root, b"x")
    with pytest.raises(ValueError, match="not a storage key"):
        store.put(key, staged)
    assert staged.exists()
    with pytest.raises(ValueError, match="not a storage key"):
        read(store, key)
    with pytest.raises(ValueError, match="not a storage key"):
        store.size(key)
    with pytest.raises(ValueError, match="not a storage key"):
        store.delete(key)


@both_stores
def test_threads_share_one_store(store: Store, root: Path) -> None:
    """Uploads and downloads run in worker threads, all on the runtime's one store."""
    payloads = {f"prj_1/art_{n}": os.urandom(1000 + n) for n in range(16)}
    staged = {key: stage(root, data) for key, data in payloads.items()}

    def round_trip(key: str) -> bytes:
        store.put(key, staged[key])
        return read(store, key)

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert dict(zip(payloads, pool.map(round_trip, payloads), strict=True)) == payloads
    assert sorted(o.key for o in store.objects()) == sorted(payloads)
