"""Artifacts in an S3-compatible object store (AWS S3, MinIO, Ceph RGW, Garage, R2…).

The client is `obstore` (Python bindings of the Rust `object_store` crate) rather than
boto3: it is typed (mypy --strict needs no stub package), one wheel with no
dependency tree, and does what this store needs natively: a multipart upload read from a
local file in bounded parts, streamed ranged reads, a paginated listing under a prefix,
and retries with backoff. Its calls block: call them from worker threads, as the
filesystem store's are.

Objects are kept under `<s3_prefix>/<key>`; the prefix is applied by the client, so keys
in and out of this store never carry it, and nothing outside it is listed.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import obstore
from obstore.exceptions import BaseError, NotFoundError
from obstore.store import S3Store as _ObjectStore

from hub.artifacts._store import CHUNK_BYTES, StoredObject, checked_key
from hub.settings import Settings

if TYPE_CHECKING:
    from obstore import GetOptions
    from obstore.store import ClientConfig, S3Config

# S3's smallest part. At most PUT_CONCURRENCY parts are in flight, so an upload holds
# about PART_BYTES * PUT_CONCURRENCY in memory whatever the file's size.
PART_BYTES = 5 * 1024 * 1024
PUT_CONCURRENCY = 4
# The longest a download may take to stream (see `S3Store.__init__`).
READ_TIMEOUT = timedelta(hours=1)


class S3StoreError(OSError):
    """The object store refused a request or could not be reached (the message names the
    endpoint and key, never a credential)."""


class S3Store:
    """The `Store` protocol over one bucket of an S3-compatible endpoint."""

    def __init__(
        self,
        bucket: str,
        *,
        endpoint_url: str | None = None,
        region: str = "us-east-1",
        prefix: str = "",
        access_key_id: str | None = None,
        secret_access_key: str | None = None,
    ) -> None:
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        config: S3Config = {"region": region}
        if endpoint_url:
            config["endpoint"] = endpoint_url
            # Path-style addressing (`endpoint/bucket/key`) is what every S3-compatible
            # server understands.
            config["virtual_hosted_style_request"] = False
        if access_key_id is not None:
            # Otherwise the client finds the usual AWS environment or instance credentials.
            config["access_key_id"] = access_key_id
            config["secret_access_key"] = secret_access_key or ""
        plain_http = bool(endpoint_url and endpoint_url.startswith("http:"))
        options: ClientConfig = {"allow_http": plain_http}
        self._store = _ObjectStore(
            bucket, prefix=self.prefix or None, config=config, client_options=options
        )
        # The client's timeout covers a whole request, body included (30 s by default),
        # and a download's GET stays open for as long as the HTTP client on the other end
        # takes to receive it; reads get their own client with a longer limit.
        self._reads = _ObjectStore(
            bucket,
            prefix=self.prefix or None,
            config=config,
            client_options={**options, "timeout": READ_TIMEOUT},
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> S3Store:
        assert settings.s3_bucket is not None  # the settings refuse s3 without a bucket
        secret = settings.s3_secret_access_key
        return cls(
            settings.s3_bucket,
            endpoint_url=settings.s3_endpoint_url,
            region=settings.s3_region,
            prefix=settings.s3_prefix,
            access_key_id=settings.s3_access_key_id,
            secret_access_key=None if secret is None else secret.get_secret_value(),
        )

    def __repr__(self) -> str:
        return f"S3Store(bucket={self.bucket!r}, prefix={self.prefix!r})"

    def put(self, key: str, staged: Path) -> None:
        try:
            # From the path, so the client reads the file in parts (multipart above
            # PART_BYTES) instead of Python holding it whole.
            obstore.put(
                self._store,
                checked_key(key),
                staged,
                chunk_size=PART_BYTES,
                max_concurrency=PUT_CONCURRENCY,
            )
        except (BaseError, FileNotFoundError) as exc:
            # A missing bucket comes back as "not found": not the caller's missing file.
            raise S3StoreError(f"could not store {key!r} in {self!r}: {_first_line(exc)}") from exc
        # Only now: an upload that failed leaves the staging file for a retry or the
        # reconciliation.
        staged.unlink(missing_ok=True)

    def read(self, key: str, start: int = 0, end: int | None = None) -> Iterator[bytes]:
        checked_key(key)
        if end is not None and end <= start:
            # S3 has no empty range; the object must still exist.
            if self.size(key) is None:
                raise FileNotFoundError(key)
            return
        options: GetOptions = {}
        if end is not None:
            options["range"] = (start, end)
        elif start > 0:
            options["range"] = {"offset": start}
        try:
            result = obstore.get(self._reads, key, options=options)
        except (NotFoundError, FileNotFoundError):
            raise FileNotFoundError(key) from None
        except BaseError as exc:
            failure = S3StoreError(f"could not read {key!r} from {self!r}: {_first_line(exc)}")
            if "range" not in options:
                raise failure from exc
            # A range starting at or past the end is refused (416); as with a file, it
            # reads as nothing.
            size = self.size(key)
            if size is None:
                raise FileNotFoundError(key) from None
            if start >= size:
                return
            raise failure from exc
        try:
            for buffer in result.stream(min_chunk_size=CHUNK_BYTES):
                # `min_chunk_size` is a floor; the protocol promises a ceiling.
                view = memoryview(buffer)
                for offset in range(0, len(view), CHUNK_BYTES):
                    yield bytes(view[offset : offset + CHUNK_BYTES])
        except BaseError as exc:
            raise S3StoreError(f"could not read {key!r} from {self!r}: {_first_line(exc)}") from exc

    def size(self, key: str) -> int | None:
        try:
            return obstore.head(self._store, checked_key(key))["size"]
        except (NotFoundError, FileNotFoundError):
            return None
        except BaseError as exc:
            raise S3StoreError(f"could not stat {key!r} in {self!r}: {_first_line(exc)}") from exc

    def delete(self, key: str) -> None:
        try:
            # S3 answers a delete of a missing key with success, as the protocol wants.
            obstore.delete(self._store, checked_key(key))
        except (NotFoundError, FileNotFoundError):
            return
        except BaseError as exc:
            raise S3StoreError(f"could not delete {key!r} in {self!r}: {_first_line(exc)}") from exc

    def objects(self) -> Iterator[StoredObject]:
        try:
            for batch in obstore.list(self._store, chunk_size=1000):
                for meta in batch:
                    yield StoredObject(
                        key=meta["path"], size=meta["size"], modified_at=meta["last_modified"]
                    )
        except BaseError as exc:
            raise S3StoreError(f"could not list {self!r}: {_first_line(exc)}") from exc


def _first_line(exc: BaseException) -> str:
    # The client's messages go on with a multi-line debug dump of its internals.
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
