"""Backup and restore of the embedded default: SQLite and the filesystem store (`hub
backup DEST`, `hub restore SRC`; docs/design.md, "Artifacts").

A backup is a folder:

    manifest.json    what it holds: hub's version, the schema revision, when it was
                     taken, row counts, and each file's size and SHA-256
    hub.db           the database, copied with SQLite's online backup API: one
                     consistent snapshot, taken while the server may be writing
    artifacts/<project id>/<artifact id>
                     the bytes of every artifact the snapshot has AVAILABLE

The files are copied after the snapshot, so every file it names is there, unless it was
deleted in between: the manifest lists those as missing, and the reconciliation that
ends every restore marks their records. The manifest is written last; a folder without
one is not a backup.

A restore refuses to replace a database that holds anything (`force` replaces it),
checks every file against the manifest as it copies it (a damaged or missing file is
left out, and the reconciliation marks its record), brings the schema up to date, and
reconciles the store with the records.

PostgreSQL and other stores have backup tools of their own: both commands refuse them,
naming the procedure instead (README, "Backup and restore").
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import uuid
from collections.abc import Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any

from sqlalchemy import func, inspect, literal, select

from hub import __version__
from hub.artifacts import service as artifacts
from hub.runtime import Runtime
from hub.storage import migrations
from hub.storage.database import Database
from hub.tables import metadata

MANIFEST = "manifest.json"
DATABASE = "hub.db"
FILES = "artifacts"
FORMAT = "hub-backup-1"
_CHUNK = 1024 * 1024
# Records read per transaction.
_PAGE = 500
_PROCEDURE = (
    "back up the database with its own tools (pg_dump for PostgreSQL) and the artifact "
    "store with the store's own (a bucket's versioning or replication), and after a "
    "restore run `hub maintenance reconcile-artifacts` (README, \"Backup and restore\")"
)


class BackupRefused(Exception):
    """The deployment or the folder is not one these commands handle; the message says
    why and what to do instead."""


@dataclass(frozen=True)
class BackupReport:
    destination: Path
    revision: str | None
    files: int
    bytes: int
    missing: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RestoreReport:
    revision: str | None
    upgraded_to: str | None
    files: int
    # Files the manifest names that were missing or damaged in the backup (by key).
    left_out: list[str]
    reconciliation: artifacts.Reconciliation


def backup(runtime: Runtime, destination: Path) -> BackupReport:
    """Back up the deployment `runtime` runs on into `destination` (new, or empty)."""
    source = _embedded_database(runtime, "backup")
    if destination.exists() and (not destination.is_dir() or any(destination.iterdir())):
        raise BackupRefused(f"{destination} exists and is not an empty folder")
    destination.mkdir(parents=True, exist_ok=True)
    snapshot = destination / DATABASE
    with closing(sqlite3.connect(source)) as live, closing(sqlite3.connect(snapshot)) as copy:
        live.backup(copy)
    revision, counts, stored = _read_snapshot(runtime, snapshot)
    with closing(sqlite3.connect(snapshot)) as copy:
        # One self-contained file: no write-ahead log beside it.
        copy.execute("PRAGMA journal_mode=DELETE")
    files: list[dict[str, Any]] = []
    missing: list[str] = []
    for found in stored:
        target = destination / FILES / found.storage_key
        try:
            digest, size = _copy(runtime.store.read(found.storage_key), target)
        except FileNotFoundError:
            # Deleted since the snapshot: the restore's reconciliation marks the record.
            missing.append(found.storage_key)
            continue
        files.append({"artifact": found.artifact.id,
                      "path": target.relative_to(destination).as_posix(),
                      "bytes": size, "sha256": digest})
    total = sum(entry["bytes"] for entry in files)
    manifest = {
        "format": FORMAT,
        "hubVersion": __version__,
        "migrationRevision": revision,
        "createdAt": runtime.clock.now().isoformat(),
        "database": {"path": DATABASE, "bytes": snapshot.stat().st_size,
                     "sha256": _digest(snapshot)},
        "counts": {"rows": counts, "files": len(files), "bytes": total,
                   "missing": len(missing)},
        "files": files,
        "missing": missing,
    }
    _write_atomically(destination / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    return BackupReport(destination, revision, len(files), total, missing)


def restore(runtime: Runtime, source: Path, *, force: bool = False) -> RestoreReport:
    """Put the backup in `source` back into the deployment `runtime` is configured for,
    then reconcile (module docstring). Run it with the server stopped."""
    target = Path(_embedded_database(runtime, "restore"))
    manifest = _manifest(source)
    if _digest(source / DATABASE) != manifest["database"]["sha256"]:
        raise BackupRefused(f"{source / DATABASE} does not match the manifest: it is damaged")
    revision = manifest["migrationRevision"]
    if revision is not None and not migrations.is_known_revision(runtime.database, revision):
        raise BackupRefused(
            f"the backup's schema revision {revision} is unknown to this hub ({__version__}): "
            "restore it with the hub version that took it"
        )
    if not force and _holds_anything(runtime.database):
        raise BackupRefused(
            f"the database {target} is not empty: restore into an empty one, or pass --force "
            "to replace it"
        )
    runtime.database.dispose()
    target.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(source / DATABASE)) as copy, closing(
        sqlite3.connect(target)
    ) as restored:
        copy.backup(restored)
    restored_files, left_out = _restore_files(runtime, source, manifest["files"])
    upgraded_to = None
    if not migrations.is_at_head(runtime.database):
        migrations.upgrade_to_head(runtime.database)
        upgraded_to = migrations.current_revision(runtime.database)
    return RestoreReport(
        revision=revision,
        upgraded_to=upgraded_to,
        files=restored_files,
        left_out=left_out + list(manifest["missing"]),
        reconciliation=artifacts.reconcile_artifacts(runtime),
    )


def _embedded_database(runtime: Runtime, command: str) -> str:
    """The SQLite file of an embedded deployment, or a refusal naming the procedure."""
    elsewhere = None
    if not runtime.database.is_sqlite:
        elsewhere = "runs on PostgreSQL"
    elif not isinstance(runtime.store, artifacts.FilesystemStore):
        elsewhere = f"keeps its artifacts in {runtime.store!r}"
    if elsewhere is not None:
        raise BackupRefused(
            f"hub {command} handles the embedded default only (SQLite and the filesystem "
            f"store); this deployment {elsewhere}: {_PROCEDURE}"
        )
    path = runtime.database.url.database
    if not path or path == ":memory:":
        raise BackupRefused(f"hub {command} needs a database file; this one is in memory")
    return path


def _read_snapshot(
    runtime: Runtime, snapshot: Path
) -> tuple[str | None, dict[str, int], list[artifacts.StoredFile]]:
    """The snapshot's schema revision, its tables' row counts, and the files it has
    AVAILABLE (read through the artifacts module)."""
    reader = Runtime(runtime.settings, database=Database(f"sqlite:///{snapshot}"),
                     clock=runtime.clock, store=runtime.store)
    try:
        with reader.database.engine.connect() as connection:
            counts = {
                table.name: int(connection.execute(
                    select(func.count()).select_from(table)
                ).scalar_one())
                for table in metadata.sorted_tables
            }
        stored: list[artifacts.StoredFile] = []
        while True:
            page = reader.read(partial(
                artifacts.available_files,
                after=stored[-1].artifact.id if stored else None,
                limit=_PAGE,
            ))
            stored += page
            if len(page) < _PAGE:
                return migrations.current_revision(reader.database), counts, stored
    finally:
        reader.close()


def _holds_anything(database: Database) -> bool:
    """Whether any of hub's tables holds a row (a new file, or one only migrated, holds
    none)."""
    present = set(inspect(database.engine).get_table_names())
    with database.engine.connect() as connection:
        return any(
            connection.execute(select(literal(1)).select_from(table).limit(1)).first()
            is not None
            for table in metadata.sorted_tables
            if table.name in present
        )


def _manifest(source: Path) -> dict[str, Any]:
    try:
        manifest: dict[str, Any] = json.loads((source / MANIFEST).read_text())
    except FileNotFoundError:
        raise BackupRefused(f"{source} is not a hub backup: it has no {MANIFEST}") from None
    if manifest.get("format") != FORMAT:
        raise BackupRefused(f"{source / MANIFEST} is not a manifest this hub reads")
    return manifest


def _restore_files(
    runtime: Runtime, source: Path, entries: list[dict[str, Any]]
) -> tuple[int, list[str]]:
    """Copy the backup's files into the store, each checked against the manifest; the
    count restored, and the keys left out (missing or damaged)."""
    staging = runtime.settings.artifact_dir / artifacts.STAGING_DIR
    restored, left_out = 0, []
    for entry in entries:
        path = PurePosixPath(entry["path"])
        if path.is_absolute() or ".." in path.parts or path.parts[:1] != (FILES,):
            raise BackupRefused(f"the manifest names {str(path)!r}, outside the backup's files")
        key = path.relative_to(FILES).as_posix()
        part = staging / f"restore-{uuid.uuid4().hex}.part"
        try:
            digest, size = _copy(_chunks(source / path), part)
        except FileNotFoundError:
            left_out.append(key)
            continue
        if (digest, size) != (entry["sha256"], entry["bytes"]):
            part.unlink()
            left_out.append(key)
            continue
        runtime.store.put(key, part)
        restored += 1
    return restored, left_out


def _chunks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as file:
        while chunk := file.read(_CHUNK):
            yield chunk


def _copy(chunks: Iterable[bytes], target: Path) -> tuple[str, int]:
    """Write `chunks` to `target` (fsynced), hashing as it goes: (SHA-256, size)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    size = 0
    try:
        with target.open("wb") as file:
            for chunk in chunks:
                digest.update(chunk)
                size += len(chunk)
                file.write(chunk)
            file.flush()
            os.fsync(file.fileno())
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    return digest.hexdigest(), size


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    for chunk in _chunks(path):
        digest.update(chunk)
    return digest.hexdigest()


def _write_atomically(path: Path, text: str) -> None:
    part = path.with_suffix(".part")
    part.write_text(text)
    os.replace(part, path)
