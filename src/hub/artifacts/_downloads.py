"""Reading an artifact's bytes back: whole or a range (a download), or the first bytes of
a text file as text (the dashboard's preview)."""

from __future__ import annotations

from sqlalchemy import select

from hub.artifacts._rows import find, require_present, show
from hub.artifacts._store import Store
from hub.artifacts.tables import Artifact
from hub.artifacts.views import Preview, StoredFile
from hub.artifacts.vocabulary import ArtifactKind, ArtifactState
from hub.errors import InvalidTransition, NotFound
from hub.storage.unit_of_work import UnitOfWork

# How much of a text file the preview shows.
PREVIEW_BYTES = 64 * 1024


def stored_file(uow: UnitOfWork, artifact_id: str) -> StoredFile:
    """A file to download. An unknown id, an upload in progress and a link (hub holds no
    bytes of it) are not found; a deleted or expired file is `ArtifactGone`, with why."""
    row = find(uow, artifact_id)
    if row.state == ArtifactState.STAGED or row.kind != ArtifactKind.FILE:
        raise NotFound("downloadable artifact", artifact_id)
    require_present(row)
    return _stored(row)


def available_files(
    uow: UnitOfWork, *, after: str | None = None, limit: int = 500
) -> list[StoredFile]:
    """The available files, in id order, a page at a time (what a backup copies)."""
    query = select(Artifact).where(
        Artifact.kind == ArtifactKind.FILE, Artifact.state == ArtifactState.AVAILABLE
    )
    if after is not None:
        query = query.where(Artifact.id > after)
    rows = uow.session.scalars(query.order_by(Artifact.id).limit(limit))
    return [_stored(row) for row in rows]


def _stored(row: Artifact) -> StoredFile:
    assert row.storage_key is not None and row.size_bytes is not None
    return StoredFile(show(row), row.storage_key, row.size_bytes)


def read_range(store: Store, stored: StoredFile, start: int, end: int) -> bytes:
    """Bytes `start` up to `end` of a stored file, whole (a small range only)."""
    return b"".join(store.read(stored.storage_key, start, end))


def preview(uow: UnitOfWork, store: Store, artifact_id: str) -> Preview:
    """What the dashboard shows of an artifact: its record, and, for a text file, its
    first PREVIEW_BYTES as text (HTML and SVG as their source; the page escapes it).
    Reads the store (blocking)."""
    row = find(uow, artifact_id)
    if row.state == ArtifactState.STAGED:
        raise NotFound("artifact", artifact_id)
    view = show(row)
    if not view.previewed_as_text:
        return Preview(view, text=None, truncated=False)
    stored = stored_file(uow, artifact_id)
    try:
        head = read_range(store, stored, 0, min(stored.size, PREVIEW_BYTES))
    except FileNotFoundError:
        raise InvalidTransition(
            f"the bytes of artifact {artifact_id} are missing from the store"
        ) from None
    return Preview(
        view, text=head.decode("utf-8", errors="replace"), truncated=stored.size > PREVIEW_BYTES
    )
