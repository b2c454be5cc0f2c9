"""The life of an artifact after its upload: retention by class (`LOG` 30 days, `REPORT`
180 days, `EVIDENCE` while its evidence exists, which is for ever today), swept by the
server's maintenance and by `hub maintenance prune`; and bytes removed after the commit
that marks them gone, off the thread that commits. On both databases and both stores,
with the injected clock."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from hub.clock import ManualClock
from hub.maintenance import maintain, prune
from hub.runtime import Runtime
from hub.settings import Settings
from hub.storage.database import Database
from tests.support import jobs, work
from tests.support.artifacts import (
    HeldStore,
    InStore,
    cli_for,
    download,
    error_of,
    state_of,
    uploaded,
    wait_until,
    working_job,
)
from tests.support.s3 import both_stores
from tests.support.sql import events_of

DAY = 86400


@both_stores
def test_logs_expire_after_30_days_reports_after_180_and_evidence_never(
    server: str,
    operator: Any,
    agent: Callable[..., Any],
    runtime: Runtime,
    clock: ManualClock,
    database: Database,
    in_store: InStore,
) -> None:
    project = work.create_project(operator.api)
    worker = agent()
    attempt, job = working_job(operator.api, worker.api, project)
    evidence = jobs.record_evidence(worker.api, attempt, jobId=job["id"])["evidence"]
    made = {
        retention: uploaded(server, worker.token, retention.encode(), projectId=project,
                            retention=retention, **extra)
        for retention, extra in [("LOG", {}), ("REPORT", {}),
                                 ("EVIDENCE", {"evidenceId": evidence["id"]})]
    }
    log, report, kept = made["LOG"]["id"], made["REPORT"]["id"], made["EVIDENCE"]["id"]
    assert made["EVIDENCE"]["expiresAt"] is None

    clock.advance(30 * DAY - 1)
    assert prune(runtime).artifacts.expired == []
    clock.advance(1)  # the instant it expires: equality is expired
    swept = prune(runtime).artifacts
    assert (swept.expired, swept.removed, swept.failed) == ([log], 1, [])
    assert state_of(worker.api, log) == {
        "state": "EXPIRED",
        "goneAt": clock.now().isoformat(),
        "goneReason": "its retention ran out: LOG artifacts are kept 30 days",
        "goneBy": None,
        "expiresAt": clock.now().isoformat(),
    }
    assert in_store() == sorted(f"{project}/{artifact}" for artifact in (report, kept))
    gone = download(server, worker.token, log)
    assert gone.status_code == 410
    assert (error_of(gone)["state"], error_of(gone)["reason"]) == (
        "EXPIRED", "its retention ran out: LOG artifacts are kept 30 days",
    )
    assert [(event["subject"], event["actor"], event["reason"])
            for event in events_of(database, "artifact.expired")] == [
        (log, None, "its retention ran out: LOG artifacts are kept 30 days"),
    ]

    clock.advance(150 * DAY)
    assert prune(runtime).artifacts.expired == [report]
    # Evidence is never deleted today, so what lives as long as it never expires by time.
    clock.advance(100 * 365 * DAY)
    assert prune(runtime).artifacts.expired == []
    assert in_store() == [f"{project}/{kept}"]
    assert download(server, worker.token, kept).content == b"EVIDENCE"
    assert state_of(worker.api, report)["state"] == "EXPIRED"


def test_a_link_expires_like_a_file_with_nothing_to_remove(
    operator: Any, agent: Callable[..., Any], runtime: Runtime, clock: ManualClock
) -> None:
    project = work.create_project(operator.api)
    linker = agent()
    linked = linker.api.mutate(
        "linkExternalArtifact",
        {"projectId": project, "name": "CI run", "url": "https://ci.example.com/runs/1",
         "accessibility": "SHARED", "idempotencyKey": work.key()},
        "... on ArtifactPayload { artifact { id } }",
    )["artifact"]
    clock.advance(30 * DAY)
    swept = prune(runtime).artifacts
    assert (swept.expired, swept.removed) == ([linked["id"]], 0)
    assert state_of(linker.api, linked["id"])["state"] == "EXPIRED"


@both_stores
def test_the_server_sweeps_in_its_periodic_maintenance(
    server: str,
    operator: Any,
    agent: Callable[..., Any],
    runtime: Runtime,
    clock: ManualClock,
    in_store: InStore,
) -> None:
    project = work.create_project(operator.api)
    uploader = agent()
    artifact = uploaded(server, uploader.token, b"old log", projectId=project)
    clock.advance(31 * DAY)
    # One round of what the server runs every HUB_PRUNE_INTERVAL_SECONDS.
    asyncio.run(maintain(runtime))
    assert state_of(uploader.api, artifact["id"])["state"] == "EXPIRED"
    assert in_store() == []


def test_many_expiries_are_swept_a_batch_at_a_time(
    server: str,
    operator: Any,
    agent: Callable[..., Any],
    runtime: Runtime,
    clock: ManualClock,
    in_store: InStore,
) -> None:
    from hub.artifacts.service import sweep_retention

    project = work.create_project(operator.api)
    uploader = agent()
    made = [uploaded(server, uploader.token, b"%d" % n, projectId=project)["id"]
            for n in range(5)]
    clock.advance(30 * DAY)
    swept = sweep_retention(runtime, batch=2)
    assert (sorted(swept.expired), swept.removed) == (sorted(made), 5)
    assert in_store() == []


@both_stores
def test_hub_maintenance_prune_expires_what_ran_out_in_the_machines_present(
    server: str,
    operator: Any,
    agent: Callable[..., Any],
    clock: ManualClock,
    settings: Settings,
    store_settings: dict[str, Any],
    in_store: InStore,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The command line runs on the machine's clock: upload 40 days before it.
    clock.set(datetime.now(UTC) - timedelta(days=40))
    project = work.create_project(operator.api)
    uploader = agent()
    log = uploaded(server, uploader.token, b"a log", projectId=project)
    report = uploaded(server, uploader.token, b"a report", projectId=project, retention="REPORT")
    cli = cli_for(monkeypatch, tmp_path, settings, store_settings)
    printed = cli("maintenance", "prune").stdout
    assert "receipts tombstoned" in printed
    assert "1 artifacts expired, the bytes of 1 removed" in printed
    assert state_of(uploader.api, log["id"])["state"] == "EXPIRED"
    assert in_store() == [f"{project}/{report['id']}"]


# --- bytes leave the store after the commit, off the committing thread --------------------


@pytest.fixture
def held_store(runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> Iterator[HeldStore]:
    held = HeldStore(runtime.store)
    monkeypatch.setattr(runtime, "store", held)
    yield held
    held.released.set()


def test_removing_bytes_never_holds_up_other_writes(
    server: str,
    operator: Any,
    agent: Callable[..., Any],
    held_store: HeldStore,
    in_store: InStore,
) -> None:
    project = work.create_project(operator.api)
    uploader = agent()
    artifact = uploaded(server, uploader.token, b"a log", projectId=project)
    deleted = uploader.api.mutate(
        "deleteArtifact", {"artifactId": artifact["id"], "reason": "superseded"},
        "... on DeleteArtifactPayload { artifact { state } }",
    )
    # Answered once committed, while the store still holds the bytes...
    assert deleted["artifact"]["state"] == "DELETED"
    wait_until(held_store.entered.is_set, "the removal has started")
    # ...and while the removal hangs, every other write goes on (on SQLite: the group
    # commit's writer thread is not the one waiting for the store).
    work.create_project(operator.api, "another")
    assert uploaded(server, uploader.token, b"more", projectId=project)["state"] == "AVAILABLE"
    assert f"{project}/{artifact['id']}" in in_store()
    held_store.released.set()
    wait_until(lambda: f"{project}/{artifact['id']}" not in in_store(), "the bytes are gone")


def test_a_removal_that_fails_leaves_the_record_deleted_and_an_orphan(
    server: str,
    operator: Any,
    agent: Callable[..., Any],
    held_store: HeldStore,
    in_store: InStore,
) -> None:
    held_store.fail = True
    held_store.released.set()
    project = work.create_project(operator.api)
    uploader = agent()
    artifact = uploaded(server, uploader.token, b"a log", projectId=project)
    uploader.api.mutate(
        "deleteArtifact", {"artifactId": artifact["id"], "reason": "superseded"},
        "... on DeleteArtifactPayload { artifact { state } }",
    )
    wait_until(held_store.entered.is_set, "the removal was tried")
    # The record says DELETED; the bytes stay, an orphan the reconciliation removes
    # (tests/artifacts/test_reconciliation.py).
    assert state_of(uploader.api, artifact["id"])["state"] == "DELETED"
    assert in_store() == [f"{project}/{artifact['id']}"]
    assert download(server, uploader.token, artifact["id"]).status_code == 410
