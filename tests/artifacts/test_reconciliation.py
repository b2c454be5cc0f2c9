"""Reconciling the store with the records (`hub maintenance reconcile-artifacts`): orphan
objects and stale staging files older than the staging grace period are removed,
uploads staged past it and records whose bytes are missing are marked EXPIRED with the
reason (never deleted), and a store that does not answer marks nothing. On both
databases and both stores.

Objects carry the store's own modification times, so here the injected clock starts at
the machine's present and moves on from there."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from hub.artifacts.service import (
    STAGING_DIR,
    FilesystemStore,
    Reconciliation,
    StoredObject,
    reconcile_artifacts,
)
from hub.clock import ManualClock
from hub.runtime import Runtime
from hub.settings import Settings
from hub.storage.database import Database
from tests.artifacts.conftest import MAX_FILE
from tests.support import work
from tests.support.artifacts import (
    HeldStore,
    InStore,
    RawUpload,
    cli_for,
    download,
    error_of,
    state_of,
    uploaded,
    wait_until,
)
from tests.support.s3 import both_stores
from tests.support.sql import events_of, fetch_value

# Past the staging grace period (an hour), with room for the seconds the test itself took.
LATER = 2 * 3600


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime.now(UTC).replace(microsecond=0))


def put(runtime: Runtime, key: str, data: bytes) -> None:
    """Bytes straight into the store, as if no record had ever been made for them."""
    staged = runtime.settings.artifact_dir / STAGING_DIR / f"test-{uuid.uuid4().hex}"
    staged.parent.mkdir(parents=True, exist_ok=True)
    staged.write_bytes(data)
    runtime.store.put(key, staged)


def nothing_found(report: Reconciliation) -> bool:
    return not (report.orphan_objects or report.stale_staging_files
                or report.abandoned_uploads or report.missing_bytes or report.failed)


@both_stores
def test_orphans_are_removed_once_older_than_the_grace_period(
    server: str,
    operator: Any,
    agent: Callable[..., Any],
    runtime: Runtime,
    clock: ManualClock,
    in_store: InStore,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = work.create_project(operator.api)
    uploader = agent()
    kept = uploaded(server, uploader.token, b"kept", projectId=project)
    deleted = uploaded(server, uploader.token, b"deleted", projectId=project)
    # Its removal fails: the record says DELETED, the bytes stay.
    failing = HeldStore(runtime.store, fail=True)
    failing.released.set()
    monkeypatch.setattr(runtime, "store", failing)
    uploader.api.mutate("deleteArtifact", {"artifactId": deleted["id"], "reason": "rerun"},
                        "... on DeleteArtifactPayload { artifact { id } }")
    wait_until(failing.entered.is_set, "the removal was tried")
    monkeypatch.setattr(runtime, "store", failing.inner)
    # Bytes no record names (a crash between a store's put and a record's commit).
    put(runtime, f"{project}/art_01unknown", b"nobody's")

    young = reconcile_artifacts(runtime)
    assert nothing_found(young) and young.young == 2
    assert len(in_store()) == 3

    clock.advance(LATER)
    orphans = sorted([f"{project}/{deleted['id']}", f"{project}/art_01unknown"])
    planned = reconcile_artifacts(runtime, dry_run=True)
    assert (planned.dry_run, planned.orphan_objects, planned.young) == (True, orphans, 0)
    assert len(in_store()) == 3
    done = reconcile_artifacts(runtime)
    assert (done.orphan_objects, done.failed) == (orphans, [])
    assert in_store() == [f"{project}/{kept['id']}"]
    assert download(server, uploader.token, kept["id"]).content == b"kept"
    assert nothing_found(reconcile_artifacts(runtime))


@both_stores
def test_an_abandoned_upload_is_marked_and_stale_staging_files_removed(
    server: str,
    operator: Any,
    agent: Callable[..., Any],
    runtime: Runtime,
    clock: ManualClock,
    database: Database,
    in_store: InStore,
) -> None:
    project = work.create_project(operator.api)
    uploader = agent()
    # A staging file no upload owns (its server crashed before it could remove it).
    stray = runtime.settings.artifact_dir / STAGING_DIR / "art_01crashed.part"
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_bytes(b"half")
    # An upload that stalls half way.
    stalled = RawUpload(server, uploader.token, {"projectId": project, "name": "slow.log"},
                        content_length=MAX_FILE)
    try:
        stalled.send(b"s" * 1000)
        wait_until(lambda: len(in_store()) == 2, "the stalled upload is staging")
        staged = fetch_value(database, "SELECT id FROM artifacts WHERE state = 'STAGED'")

        young = reconcile_artifacts(runtime)
        assert nothing_found(young) and young.young == 2

        clock.advance(LATER)
        done = reconcile_artifacts(runtime)
        assert done.abandoned_uploads == [staged]
        assert done.stale_staging_files == sorted(
            [f"{STAGING_DIR}/art_01crashed.part", f"{STAGING_DIR}/{staged}.part"]
        )
    finally:
        stalled.close()
    # The record stays, marked, whatever becomes of the client.
    [event] = events_of(database, "artifact.expired")
    assert event["subject"] == staged
    assert event["reason"].startswith("upload abandoned: staged for longer than the grace "
                                      "period (1 hour)")
    wait_until(lambda: in_store() == [], "nothing is left of the upload")
    assert fetch_value(database, "SELECT state FROM artifacts WHERE id = :id", id=staged) \
        == "EXPIRED"


@both_stores
def test_records_whose_bytes_are_missing_are_marked_never_deleted(
    server: str,
    operator: Any,
    agent: Callable[..., Any],
    runtime: Runtime,
    clock: ManualClock,
    database: Database,
    in_store: InStore,
) -> None:
    project = work.create_project(operator.api)
    uploader = agent()
    lost = uploaded(server, uploader.token, b"lost", projectId=project)
    cut = uploaded(server, uploader.token, b"cut short", projectId=project)
    whole = uploaded(server, uploader.token, b"whole", projectId=project)
    runtime.store.delete(f"{project}/{lost['id']}")
    runtime.store.delete(f"{project}/{cut['id']}")
    put(runtime, f"{project}/{cut['id']}", b"cut")
    wrong_size = "bytes of the wrong size at reconciliation: 9 recorded, 3 in the store"

    planned = reconcile_artifacts(runtime, dry_run=True)
    assert [(found.artifact_id, found.reason) for found in planned.missing_bytes] == sorted(
        [(lost["id"], "bytes missing at reconciliation"), (cut["id"], wrong_size)]
    )
    assert state_of(uploader.api, lost["id"])["state"] == "AVAILABLE"

    done = reconcile_artifacts(runtime)
    assert done.missing_bytes == planned.missing_bytes
    for artifact, reason in ((lost, "bytes missing at reconciliation"), (cut, wrong_size)):
        assert state_of(uploader.api, artifact["id"]) | {"expiresAt": None} == {
            "state": "EXPIRED", "goneAt": clock.now().isoformat(), "goneReason": reason,
            "goneBy": None, "expiresAt": None,
        }
        gone = download(server, uploader.token, artifact["id"])
        assert (gone.status_code, error_of(gone)["reason"]) == (410, reason)
    assert sorted(event["subject"] for event in events_of(database, "artifact.expired")) == \
        sorted([lost["id"], cut["id"]])
    assert fetch_value(database, "SELECT count(*) FROM artifacts") == 3
    # The wrong-sized bytes are an orphan now, removed once past the grace period.
    assert done.young == 1
    clock.advance(LATER)
    assert reconcile_artifacts(runtime).orphan_objects == [f"{project}/{cut['id']}"]
    assert in_store() == [f"{project}/{whole['id']}"]


class Unanswering(FilesystemStore):
    """A store that does not answer (an S3 endpoint that is down)."""

    def objects(self) -> Iterator[StoredObject]:
        raise OSError("could not list the store: connection refused")

    def size(self, key: str) -> int | None:
        raise OSError("connection refused")


def test_a_store_that_does_not_answer_marks_nothing(
    server: str,
    operator: Any,
    agent: Callable[..., Any],
    runtime: Runtime,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = work.create_project(operator.api)
    uploader = agent()
    artifact = uploaded(server, uploader.token, b"fine", projectId=project)
    monkeypatch.setattr(runtime, "store", Unanswering(runtime.settings.artifact_dir))
    with pytest.raises(OSError, match="connection refused"):
        reconcile_artifacts(runtime)
    assert state_of(uploader.api, artifact["id"])["state"] == "AVAILABLE"


@both_stores
def test_hub_maintenance_reconcile_artifacts_reports_in_text_and_json(
    server: str,
    operator: Any,
    agent: Callable[..., Any],
    runtime: Runtime,
    settings: Settings,
    store_settings: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = work.create_project(operator.api)
    uploader = agent()
    lost = uploaded(server, uploader.token, b"lost", projectId=project)
    runtime.store.delete(f"{project}/{lost['id']}")
    put(runtime, f"{project}/art_01young", b"too young to judge")
    cli = cli_for(monkeypatch, tmp_path, settings, store_settings)

    planned = json.loads(cli("maintenance", "reconcile-artifacts", "--dry-run", "--json").stdout)
    assert planned == {
        "dryRun": True,
        "counts": {"orphanObjects": 0, "staleStagingFiles": 0, "abandonedUploads": 0,
                   "missingBytes": 1, "failed": 0, "young": 1},
        "orphanObjects": [], "staleStagingFiles": [], "abandonedUploads": [],
        "missingBytes": [{"artifact": lost["id"], "reason": "bytes missing at reconciliation"}],
        "failed": [],
    }
    assert state_of(uploader.api, lost["id"])["state"] == "AVAILABLE"

    printed = cli("maintenance", "reconcile-artifacts").stdout
    assert "records whose bytes are missing marked EXPIRED: 1" in printed
    assert f"{lost['id']} (bytes missing at reconciliation)" in printed
    assert "left for now (younger than the staging grace period): 1" in printed
    assert state_of(uploader.api, lost["id"])["state"] == "EXPIRED"
