"""Reconciling the store with the records: `hub maintenance reconcile-artifacts`, and
`hub restore` once it has put a backup back (docs/design.md, "Artifacts").

What it finds, and what it does about it:

- **Abandoned uploads**: records STAGED for longer than the staging grace period (their
  server crashed, or the client stopped sending). Marked EXPIRED with the reason, never
  deleted; an upload that comes back to commit after that is refused (`_uploads`).
- **Orphan objects**: bytes in the store that no record names, or whose record is
  DELETED or EXPIRED (a removal that failed, a copy left by a crash). Removed once they
  are older than the grace period: a younger one may be an upload's, stored a moment
  before its record commits.
- **Stale staging files**: files under the staging folder older than the grace period.
  An upload in progress writes its file as the body arrives, then moves it into the
  store; one left for that long belongs to no upload. Removed.
- **Missing bytes**: AVAILABLE records whose bytes are not in the store, or not of the
  recorded size. Marked EXPIRED with the reason, never deleted (wrong-sized bytes are
  then an orphan like any other).

Nothing is judged from a store that did not answer: a store error stops the run before
any record is marked for its bytes. The listing is read before the records, so bytes
stored after it cannot look missing; a record that looks it is asked about once more
before it is marked. It holds one entry per object in memory.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

from sqlalchemy import select

from hub.artifacts._removals import mark_gone, remove_objects
from hub.artifacts._retention import Transactions, duration
from hub.artifacts._store import STAGING_DIR, StoredObject
from hub.artifacts.tables import Artifact
from hub.artifacts.vocabulary import GONE, ArtifactKind, ArtifactState
from hub.storage.unit_of_work import UnitOfWork

log = logging.getLogger("hub.artifacts")

# Records read, or marked, per transaction.
PAGE = 500
BYTES_MISSING = "bytes missing at reconciliation"
# An AVAILABLE record whose object the listing did not show as recorded: its id, its
# storage key and its recorded size.
Suspect = tuple[str, str, int]


@dataclass(frozen=True)
class MissingBytes:
    artifact_id: str
    reason: str


@dataclass(frozen=True)
class Reconciliation:
    """What a reconciliation did, or, on a dry run, would do: the objects and staging
    files it removed (storage keys; staging files by name), the records it marked
    EXPIRED, how many orphans it left because they are younger than the grace period,
    and the removals that failed."""

    dry_run: bool
    orphan_objects: list[str] = field(default_factory=list)
    stale_staging_files: list[str] = field(default_factory=list)
    abandoned_uploads: list[str] = field(default_factory=list)
    missing_bytes: list[MissingBytes] = field(default_factory=list)
    young: int = 0
    failed: list[str] = field(default_factory=list)


def reconcile_artifacts(runtime: Transactions, *, dry_run: bool = False) -> Reconciliation:
    """Reconcile the store with the records (module docstring); blocking."""
    settings = runtime.settings
    grace = settings.artifact_staging_grace_seconds
    cutoff = runtime.read(lambda uow: uow.now()) - timedelta(seconds=grace)
    abandoned = _abandoned_uploads(runtime, cutoff, grace, dry_run)
    listed = {stored.key: stored for stored in runtime.store.objects()}
    # On a dry run the abandoned uploads are still STAGED: their bytes count as if not.
    orphans, suspects = _match(runtime, listed, set(abandoned))
    missing = _missing_bytes(runtime, suspects, dry_run)
    # Bytes of the wrong size belong to a record that is now expired: orphans too.
    marked = {found.artifact_id for found in missing}
    orphans += [listed[key] for artifact_id, key, _ in suspects
                if artifact_id in marked and key in listed]
    old = sorted(stored.key for stored in orphans if stored.modified_at <= cutoff)
    staging = _staging_files(settings.artifact_dir)
    stale = sorted(name for name, modified in staging if modified <= cutoff)
    failed: list[str] = []
    if not dry_run:
        failed = remove_objects(runtime.store, old)
        failed += _remove_files(settings.artifact_dir, stale)
    return Reconciliation(
        dry_run=dry_run,
        orphan_objects=[key for key in old if key not in failed],
        stale_staging_files=[name for name in stale if name not in failed],
        abandoned_uploads=abandoned,
        missing_bytes=missing,
        young=len(orphans) - len(old) + len(staging) - len(stale),
        failed=failed,
    )


def _abandoned_uploads(
    runtime: Transactions, cutoff: datetime, grace: int, dry_run: bool
) -> list[str]:
    found = runtime.read(
        lambda uow: list(
            uow.session.scalars(
                select(Artifact.id)
                .where(Artifact.state == ArtifactState.STAGED, Artifact.created_at <= cutoff)
                .order_by(Artifact.id)
            )
        )
    )
    if dry_run:
        return found
    reason = (
        f"upload abandoned: staged for longer than the grace period ({duration(grace)}) "
        "without being stored; found at reconciliation"
    )

    def still_abandoned(uow: UnitOfWork, row: Artifact) -> str | None:
        staged_since = uow.now() - timedelta(seconds=grace)
        abandoned = row.state == ArtifactState.STAGED and row.created_at <= staged_since
        return reason if abandoned else None

    return _mark(runtime, found, still_abandoned)


def _match(
    runtime: Transactions, listed: dict[str, StoredObject], abandoned: set[str]
) -> tuple[list[StoredObject], list[Suspect]]:
    """Pair every file record with its object: the orphans (objects of gone records and
    abandoned uploads, and those no record names), and the AVAILABLE records whose
    object is missing or not of the recorded size."""
    orphans: list[StoredObject] = []
    suspects: list[Suspect] = []
    unclaimed = dict(listed)
    for artifact_id, key, state, size in _file_records(runtime):
        stored = unclaimed.pop(key, None)
        if state == ArtifactState.AVAILABLE:
            assert size is not None  # a stored file's size is known (CHECK "stored")
            if stored is None or stored.size != size:
                suspects.append((artifact_id, key, size))
        elif (state in GONE or artifact_id in abandoned) and stored is not None:
            orphans.append(stored)
    return orphans + list(unclaimed.values()), suspects


def _file_records(
    runtime: Transactions,
) -> Iterator[tuple[str, str, ArtifactState, int | None]]:
    """Every file record's id, storage key, state and size, a page per transaction."""
    after = ""
    while True:
        page = runtime.read(partial(_file_page, after=after))
        yield from page
        if len(page) < PAGE:
            return
        after = page[-1][0]


def _file_page(
    uow: UnitOfWork, *, after: str
) -> list[tuple[str, str, ArtifactState, int | None]]:
    rows = uow.session.execute(
        select(Artifact.id, Artifact.storage_key, Artifact.state, Artifact.size_bytes)
        .where(Artifact.kind == ArtifactKind.FILE, Artifact.id > after)
        .order_by(Artifact.id)
        .limit(PAGE)
    )
    # A file has a storage key (CHECK "file").
    return [(artifact_id, key or "", state, size) for artifact_id, key, state, size in rows]


def _missing_bytes(
    runtime: Transactions, suspects: list[Suspect], dry_run: bool
) -> list[MissingBytes]:
    reasons: dict[str, str] = {}
    for artifact_id, key, recorded in suspects:
        # Asked once more: bytes stored after the listing was read are not missing.
        found = runtime.store.size(key)
        if found is None:
            reasons[artifact_id] = BYTES_MISSING
        elif found != recorded:
            reasons[artifact_id] = (
                f"bytes of the wrong size at reconciliation: {recorded} recorded, {found} "
                "in the store"
            )
    if not dry_run:
        marked = _mark(
            runtime,
            list(reasons),
            lambda _uow, row: reasons[row.id] if row.state == ArtifactState.AVAILABLE else None,
        )
        reasons = {artifact_id: reasons[artifact_id] for artifact_id in marked}
    return [MissingBytes(artifact_id, reasons[artifact_id]) for artifact_id in sorted(reasons)]


def _mark(
    runtime: Transactions,
    artifact_ids: list[str],
    reason_for: Callable[[UnitOfWork, Artifact], str | None],
) -> list[str]:
    """Mark EXPIRED those of `artifact_ids` that `reason_for` still gives a reason for,
    once locked; a page per transaction. The ones marked."""
    marked: list[str] = []
    for start in range(0, len(artifact_ids), PAGE):
        page = artifact_ids[start : start + PAGE]

        def mark(uow: UnitOfWork, page: list[str] = page) -> list[str]:
            rows = uow.session.scalars(
                select(Artifact).where(Artifact.id.in_(page)).with_for_update()
            ).all()
            done = []
            for row in rows:
                reason = reason_for(uow, row)
                if reason is not None:
                    mark_gone(uow, row, ArtifactState.EXPIRED, reason, by=None)
                    done.append(row.id)
            return done

        marked += runtime.write(mark)
    return sorted(marked)


def _staging_files(artifact_dir: Path) -> list[tuple[str, datetime]]:
    """The staging folder's files (`.staging/<name>`), and when each was last written."""
    folder = artifact_dir / STAGING_DIR
    if not folder.is_dir():
        return []
    return [
        (f"{STAGING_DIR}/{path.name}", datetime.fromtimestamp(path.stat().st_mtime, UTC))
        for path in sorted(folder.iterdir())
        if path.is_file()
    ]


def _remove_files(artifact_dir: Path, names: list[str]) -> list[str]:
    failed = []
    for name in names:
        try:
            (artifact_dir / name).unlink(missing_ok=True)
        except OSError:
            log.exception("could not remove the staging file %s", name)
            failed.append(name)
    return failed
