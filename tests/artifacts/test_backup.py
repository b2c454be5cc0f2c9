"""`hub backup DEST` and `hub restore SRC` for the embedded default (SQLite and the
filesystem store): a backup taken while the server runs restores into a new directory
whose server answers the same bytes; a file missing from a backup is reported and its
record marked; PostgreSQL and S3 are refused with the procedure that applies."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hub.clock import ManualClock
from hub.runtime import Runtime
from hub.settings import Settings
from hub.storage import migrations
from hub.storage.database import Database
from tests.conftest import runtime_settings
from tests.support import work
from tests.support.artifacts import cli_for, download, error_of, uploaded
from tests.support.cli import HubCli
from tests.support.server import serve

embedded = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


def restoring_into(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, place: Path
) -> tuple[HubCli, Settings]:
    """`hub …` configured for a new deployment in `place`, and its settings."""
    settings = runtime_settings(f"sqlite:///{place / 'hub.db'}", place)
    return cli_for(monkeypatch, tmp_path, settings, {}), settings


def uploads(server: str, operator: Any, agent: Callable[..., Any]) -> tuple[Any, dict[str, bytes]]:
    """Three files and a deleted one: (the uploader, the available files' bytes by id)."""
    project = work.create_project(operator.api)
    uploader = agent()
    contents = [os.urandom(300_000), b"line 1\nline 2\n", b""]
    made = {uploaded(server, uploader.token, data, projectId=project, name=f"f{n}")["id"]: data
            for n, data in enumerate(contents)}
    gone = uploaded(server, uploader.token, b"gone", projectId=project)
    uploader.api.mutate("deleteArtifact", {"artifactId": gone["id"], "reason": "a secret"},
                        "... on DeleteArtifactPayload { artifact { id } }")
    return uploader, made


@embedded
def test_a_backup_of_a_running_server_restores_byte_identical_elsewhere(
    server: str,
    operator: Any,
    agent: Callable[..., Any],
    settings: Settings,
    database: Database,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    uploader, made = uploads(server, operator, agent)
    backup = tmp_path / "backup"
    # The server is still running: the database is copied with SQLite's backup API.
    printed = cli_for(monkeypatch, tmp_path, settings, {})("backup", str(backup)).stdout
    assert f"{len(made)} artifact files" in printed
    # One database file (no write-ahead log beside it), the files, the manifest.
    assert sorted(path.name for path in backup.iterdir()) == ["artifacts", "hub.db",
                                                              "manifest.json"]
    manifest = json.loads((backup / "manifest.json").read_text())
    assert manifest["format"] == "hub-backup-1"
    assert manifest["migrationRevision"] == migrations.head_revision(database)
    assert (manifest["counts"]["files"], manifest["counts"]["missing"]) == (3, 0)
    assert manifest["counts"]["rows"]["artifacts"] == 4
    assert {entry["artifact"]: entry["sha256"] for entry in manifest["files"]} == {
        artifact_id: hashlib.sha256(data).hexdigest() for artifact_id, data in made.items()
    }
    assert manifest["database"]["sha256"] == hashlib.sha256(
        (backup / "hub.db").read_bytes()
    ).hexdigest()

    place = tmp_path / "elsewhere"
    restore, restored = restoring_into(monkeypatch, tmp_path, place)
    report = json.loads(restore("restore", str(backup), "--json").stdout)
    assert report["counts"] == {"orphanObjects": 0, "staleStagingFiles": 0,
                                "abandonedUploads": 0, "missingBytes": 0, "failed": 0,
                                "young": 0}

    runtime = Runtime(restored, clock=ManualClock())
    try:
        with serve(runtime) as elsewhere:
            for artifact_id, data in made.items():
                fetched = download(elsewhere, uploader.token, artifact_id)
                assert (fetched.status_code, fetched.content) == (200, data)
    finally:
        runtime.close()


@embedded
def test_a_file_missing_from_a_backup_is_reported_and_its_record_marked(
    server: str,
    operator: Any,
    agent: Callable[..., Any],
    settings: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    uploader, made = uploads(server, operator, agent)
    backup = tmp_path / "backup"
    cli_for(monkeypatch, tmp_path, settings, {})("backup", str(backup))
    manifest = json.loads((backup / "manifest.json").read_text())
    lost, damaged, whole = manifest["files"]
    (backup / lost["path"]).unlink()
    (backup / damaged["path"]).write_bytes(b"not what was backed up")

    restore, restored = restoring_into(monkeypatch, tmp_path, tmp_path / "elsewhere")
    result = restore("restore", str(backup), "--json")
    assert "1 artifact files; 2 missing or damaged in the backup" in result.stderr
    report = json.loads(result.stdout)
    assert report["missingBytes"] == sorted(
        [{"artifact": entry["artifact"], "reason": "bytes missing at reconciliation"}
         for entry in (lost, damaged)],
        key=lambda found: found["artifact"],
    )

    runtime = Runtime(restored, clock=ManualClock())
    try:
        with serve(runtime) as elsewhere:
            for entry in (lost, damaged):
                gone = download(elsewhere, uploader.token, entry["artifact"])
                assert (gone.status_code, error_of(gone)["reason"]) == (
                    410, "bytes missing at reconciliation"
                )
            kept = download(elsewhere, uploader.token, whole["artifact"])
            assert kept.content == made[whole["artifact"]]
    finally:
        runtime.close()


@embedded
def test_a_restore_never_replaces_a_database_that_holds_anything_unless_forced(
    server: str,
    operator: Any,
    agent: Callable[..., Any],
    settings: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    uploads(server, operator, agent)
    backup = tmp_path / "backup"
    cli = cli_for(monkeypatch, tmp_path, settings, {})
    cli("backup", str(backup))
    refused = cli("backup", str(backup), exit_code=2)
    assert "exists and is not an empty folder" in refused.stderr
    # The server's own database holds everything: it is not replaced by accident.
    kept = cli("restore", str(backup), exit_code=2)
    assert "is not empty" in kept.stderr and "--force" in kept.stderr
    not_a_backup = cli("restore", str(tmp_path / "nothing"), exit_code=2)
    assert "is not a hub backup" in not_a_backup.stderr

    restore, _ = restoring_into(monkeypatch, tmp_path, tmp_path / "elsewhere")
    restore("restore", str(backup))
    restore("restore", str(backup), exit_code=2)
    assert "missing or damaged" in restore("restore", str(backup), "--force").stderr


@pytest.mark.parametrize(
    ("backend", "artifact_store", "runs"),
    [("postgresql", "filesystem", "runs on PostgreSQL"),
     ("sqlite", "s3", "keeps its artifacts in S3Store")],
    indirect=["backend", "artifact_store"],
)
def test_postgresql_and_s3_are_pointed_to_their_own_procedure(
    settings: Settings,
    store_settings: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    runs: str,
) -> None:
    cli = cli_for(monkeypatch, tmp_path, settings, store_settings)
    for command in ("backup", "restore"):
        refused = cli(command, str(tmp_path / "backup"), exit_code=2).stderr
        assert f"hub {command} handles the embedded default only" in refused
        assert runs in refused
        assert "pg_dump" in refused and "hub maintenance reconcile-artifacts" in refused
