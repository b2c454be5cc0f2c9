"""Uploads: bounded bodies streamed into the store, committed only once stored.

An upload spans two transactions with the body streaming between them, so that no
transaction stays open while a client sends (docs/design.md, "Artifacts"):

1. `accept_upload`: the caller is authorized, the metadata checked, and, under one lock
   for every upload of the deployment (PostgreSQL: an advisory lock; SQLite holds its
   write lock anyway), the bytes are reserved against the quotas: a STAGED row carries
   its declared length, or the per-file limit when it declared none. Concurrent uploads
   therefore never pass a quota together. A body that declares more than the per-file
   limit is refused here, before a byte is read.
2. The body streams through an `Intake` into a staging file (cut off at the limit or
   its declared length), which is fsynced and handed to `Store.put`.
3. `store_upload`: the STAGED row becomes AVAILABLE, with its size, digest and sniffed
   type, and the idempotency receipt is written with it.

Whatever fails between 1 and 3 (a refusal, a lie about the length, a client that goes
away, a crash of the store) removes the staging file, the stored object if there is one,
and the STAGED row: an interrupted upload is never downloadable. A crash of the server
itself leaves a STAGED row whose reservation stops counting after the staging grace
period (`artifact_staging_grace_seconds`).

Keys. An upload's request is its metadata and its bytes' digest, which only the stream
tells. So `accept_upload` asks whether the key has a receipt already: a retry's body is
then only hashed, never stored, and `store_upload` runs the keyed operation with the
whole request: the same metadata and bytes replay the artifact, anything else is
`IdempotencyConflict`. Two identical uploads sent at once both stream; the second to
commit is answered as a replay and its own bytes are removed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from sqlalchemy import delete, text

from hub.artifacts._intake import Intake, Received
from hub.artifacts._media import disagrees
from hub.artifacts._records import Description, clean_metadata, expiry, new_artifact
from hub.artifacts._removals import remove_objects
from hub.artifacts._rows import get_artifact, show, usage
from hub.artifacts._store import STAGING_DIR, Store
from hub.artifacts.errors import FileTooLarge, StorageQuotaExceeded
from hub.artifacts.tables import Artifact
from hub.artifacts.views import ArtifactResult, Uploaded
from hub.artifacts.vocabulary import (
    ArtifactEvent,
    ArtifactKind,
    ArtifactOperation,
    ArtifactState,
)
from hub.errors import (
    Conflict,
    NotFound,
    PermissionDenied,
    QuotaExceeded,
    ValidationFailed,
    raises,
)
from hub.events.service import record_event
from hub.idempotency import service as idempotency
from hub.identity.views import Actor
from hub.ids import new_id
from hub.storage.unit_of_work import UnitOfWork

log = logging.getLogger("hub.artifacts")

T = TypeVar("T")
UPLOAD = ArtifactOperation.UPLOAD
# Bytes hashed and written at a time (an upload holds two batches in memory at most: one
# being kept, the next arriving).
BATCH_BYTES = 1024 * 1024
# Held by `accept_upload` on PostgreSQL: every reservation is decided one at a time.
_QUOTA_LOCK = text("SELECT pg_advisory_xact_lock(hashtextextended('hub:artifact-quota', 0))")


@dataclass(frozen=True, kw_only=True)
class UploadRequest(Description):
    """What the client sends beside the body: the metadata, its key, and the length it
    declared (Content-Length), if it declared one."""

    declared_size: int | None = None
    idempotency_key: str | None = None

    def fingerprinted(self, received: Received) -> dict[str, object]:
        """The request a keyed retry must repeat: the metadata and the bytes (not how
        they were framed)."""
        request = idempotency.request_of(self, declared_size=None)
        return {**request, "sha256": received.sha256, "size": received.size}


@dataclass(frozen=True)
class Upload:
    """An accepted upload, before its body: what the body must stay within, and where
    it goes. A keyed retry (`artifact_id` None) is only hashed."""

    request: UploadRequest
    limit: int
    artifact_id: str | None
    storage_key: str | None
    staging: Path | None


# Authenticates and authorizes the request inside a transaction (the API's): a
# credential that does not hold raises `Unauthenticated`, one the credential table
# refuses `PermissionDenied`.
Caller = Callable[[UnitOfWork], Actor]


class Transact(Protocol):
    """Runs an operation in one write transaction, off the event loop (`Runtime.awrite`)."""

    def __call__(self, operation: Callable[[UnitOfWork], T], /) -> Awaitable[T]: ...


@raises(NotFound, PermissionDenied, ValidationFailed, QuotaExceeded, *idempotency.KEYED)
def accept_upload(uow: UnitOfWork, actor: Actor, request: UploadRequest) -> Upload:
    """Authorize, check the metadata and reserve the bytes (module docstring, step 1)."""
    settings = uow.settings
    if uow.dialect == "postgresql":
        uow.session.execute(_QUOTA_LOCK)
    metadata = clean_metadata(uow, actor, request)
    limit = settings.artifact_max_file_bytes
    declared = request.declared_size
    if declared is not None and declared < 0:
        raise ValidationFailed("Content-Length", "must not be negative")
    if idempotency.has_receipt(uow, actor, UPLOAD, request.idempotency_key):
        return Upload(request, limit, artifact_id=None, storage_key=None, staging=None)
    if declared is not None and declared > limit:
        raise FileTooLarge(limit)
    reserved = limit if declared is None else declared
    _require_room(uow, metadata.project_id, reserved)
    artifact_id = new_id("art")
    storage_key = f"{metadata.project_id}/{artifact_id}"
    new_artifact(
        uow, actor, artifact_id, metadata,
        kind=ArtifactKind.FILE, state=ArtifactState.STAGED,
        storage_key=storage_key, reserved_bytes=reserved,
    )
    staging = settings.artifact_dir / STAGING_DIR / f"{artifact_id}.part"
    return Upload(request, limit, artifact_id, storage_key, staging)


def _require_room(uow: UnitOfWork, project_id: str, needed: int) -> None:
    settings = uow.settings
    used = usage(uow, project_id, uow.now())
    if used.project_bytes + needed > settings.artifact_max_project_bytes:
        raise StorageQuotaExceeded(
            f"project {project_id}", settings.artifact_max_project_bytes,
            used.project_bytes, needed,
        )
    if used.total_bytes + needed > settings.artifact_max_total_bytes:
        raise StorageQuotaExceeded(
            "this deployment", settings.artifact_max_total_bytes, used.total_bytes, needed
        )


@raises(Conflict, *idempotency.KEYED)
def store_upload(
    uow: UnitOfWork, actor: Actor, upload: Upload, received: Received
) -> ArtifactResult:
    """Commit a stored body as an AVAILABLE artifact, or answer the upload it repeats
    (module docstring, step 3)."""
    return idempotency.run_keyed(
        uow,
        actor,
        UPLOAD,
        upload.request.idempotency_key,
        upload.request.fingerprinted(received),
        authorize=lambda: _staged(uow, upload),
        replay=lambda staged, prior: _replayed(uow, staged, prior["artifact_id"]),
        execute=lambda staged: _make_available(uow, actor, staged, received),
        receipt=lambda made: {"artifact_id": made.artifact.id},
    ).value


def _staged(uow: UnitOfWork, upload: Upload) -> Artifact | None:
    if upload.artifact_id is None:
        return None
    row = uow.session.get(Artifact, upload.artifact_id, with_for_update=True)
    if row is None or row.state != ArtifactState.STAGED:
        raise Conflict(
            f"the upload of {upload.artifact_id} was abandoned (it stayed staged past the "
            "grace period): send it again"
        )
    return row


def _replayed(uow: UnitOfWork, staged: Artifact | None, artifact_id: str) -> ArtifactResult:
    if staged is not None:
        # A twin committed first: this upload's row goes (its bytes, once this commits:
        # `receive_upload`).
        uow.session.delete(staged)
        uow.session.flush()
    return ArtifactResult(get_artifact(uow, artifact_id), replay=True)


def _make_available(
    uow: UnitOfWork, actor: Actor, staged: Artifact | None, received: Received
) -> ArtifactResult:
    if staged is None:
        raise Conflict(
            "the upload this key was first used for is no longer on record: send it "
            "again under a new key"
        )
    now = uow.now()
    staged.state = ArtifactState.AVAILABLE
    staged.size_bytes = received.size
    staged.sha256 = received.sha256
    staged.sniffed_media_type = received.sniffed_media_type
    staged.media_type_mismatch = disagrees(staged.media_type, received.sniffed_media_type)
    staged.reserved_bytes = 0
    staged.available_at = now
    staged.expires_at = expiry(
        uow.settings, staged.retention, now, evidence_id=staged.evidence_id
    )
    uow.session.flush()
    record_event(
        uow,
        ArtifactEvent.ARTIFACT_UPLOADED,
        staged,
        by=actor,
        payload={
            "artifact": staged.id,
            "name": staged.name,
            "size": received.size,
            "sha256": received.sha256,
            "mediaType": staged.media_type,
            "mediaTypeMismatch": staged.media_type_mismatch,
            "task": staged.task_id,
            "job": staged.job_id,
            "evidence": staged.evidence_id,
            "review": staged.review_id,
        },
    )
    return ArtifactResult(show(staged))


def release_upload(uow: UnitOfWork, upload: Upload) -> None:
    """Forget an upload that failed before it was stored: its STAGED row, and with it
    its reservation. Nothing else ever pointed at it."""
    if upload.artifact_id is None:
        return
    uow.session.execute(
        delete(Artifact).where(
            Artifact.id == upload.artifact_id, Artifact.state == ArtifactState.STAGED
        )
    )


async def receive_upload(
    write: Transact,
    caller: Caller,
    store: Store,
    request: UploadRequest,
    body: AsyncIterator[bytes],
) -> Uploaded:
    """One upload, whole (module docstring): `write` runs a write transaction (the
    runtime's), `caller` authenticates and authorizes the request inside each, `body`
    is the request's body as it arrives."""
    upload = await write(lambda uow: accept_upload(uow, caller(uow), request))
    intake = Intake(
        limit=upload.limit, declared_size=request.declared_size, staging=upload.staging
    )
    stored = False
    try:
        await asyncio.to_thread(intake.open)
        await _stream(intake, body)
        received = await asyncio.to_thread(intake.finish)
        if upload.storage_key is not None and upload.staging is not None:
            await asyncio.to_thread(store.put, upload.storage_key, upload.staging)
            stored = True

        def commit(uow: UnitOfWork) -> Uploaded:
            result = store_upload(uow, caller(uow), upload, received)
            return Uploaded(result.artifact, result.replay, uow.now())

        answer = await write(commit)
    except BaseException:
        await _undo(write, store, upload, intake, stored)
        raise
    if answer.replay and stored and upload.storage_key is not None:
        # A twin's bytes were committed first; these are a copy nothing points at.
        await asyncio.to_thread(remove_objects, store, [upload.storage_key])
    return answer


async def _stream(intake: Intake, body: AsyncIterator[bytes]) -> None:
    """Count each piece as it arrives and keep the pieces a batch at a time, one batch
    kept while the next arrives: receiving, hashing and writing each take about as
    long, and one after the other an upload would take all three."""
    batch: list[bytes] = []
    batched = 0
    keeping: asyncio.Future[tuple[None, None]] | None = None
    try:
        async for chunk in body:
            intake.count(len(chunk))
            batch.append(chunk)
            batched += len(chunk)
            if batched >= BATCH_BYTES:
                if keeping is not None:
                    await keeping
                keeping = _keep(intake, batch)
                batch, batched = [], 0
        if keeping is not None:
            await keeping
        if batch:
            await _keep(intake, batch)
    finally:
        if keeping is not None and not keeping.done():
            # Refused mid-body: the batch being kept ends before the staging file goes.
            await asyncio.wait({keeping})
            if not keeping.cancelled():
                keeping.exception()  # retrieved: the error being raised says what failed


def _keep(intake: Intake, batch: list[bytes]) -> asyncio.Future[tuple[None, None]]:
    """Hash and write a batch, each in a thread of its own (both release the GIL)."""
    return asyncio.gather(
        asyncio.to_thread(intake.hash, batch), asyncio.to_thread(intake.write, batch)
    )


async def _undo(
    write: Transact,
    store: Store,
    upload: Upload,
    intake: Intake,
    stored: bool,
) -> None:
    """Leave nothing of a failed upload: staging file, stored copy, STAGED row. Best
    effort: what fails here is logged, and the reconciliation finds it."""
    intake.discard()
    try:
        if stored and upload.storage_key is not None:
            await asyncio.to_thread(remove_objects, store, [upload.storage_key])
        await write(lambda uow: release_upload(uow, upload))
    except Exception:
        log.exception("could not release the failed upload %s", upload.artifact_id)
