"""Quotas: a project's and the deployment's stored and reserved bytes never pass their
limits, not even when uploads race (real threads against the real server). The limits
here: 1 MiB a file, 4 MiB a project, 6 MiB in all (tests/artifacts/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from hub.clock import ManualClock
from hub.storage.database import Database
from tests.artifacts.conftest import MAX_FILE, MAX_PROJECT, MAX_TOTAL, MIB
from tests.support import work
from tests.support.artifacts import (
    InStore,
    RawUpload,
    at_once,
    error_of,
    upload,
    uploaded,
    wait_until,
)
from tests.support.sql import fetch_value


def _race(server: str, token: str, project: str, count: int, size: int) -> list[httpx.Response]:
    """`count` uploads of `size` bytes into `project`, released at once."""
    return at_once(count, lambda index: upload(
        server, token, bytes([index]) * size, projectId=project, name=f"part-{index}.bin"
    ))


def _stored_bytes(database: Database, project: str | None = None) -> int:
    where = "" if project is None else " AND project_id = :project"
    return int(fetch_value(
        database,
        f"SELECT coalesce(sum(size_bytes), 0) FROM artifacts WHERE state = 'AVAILABLE'{where}",
        project=project,
    ))


def test_concurrent_uploads_never_pass_the_project_quota_together(
    server: str, operator: Any, agent: Callable[..., Any], database: Database, in_store: InStore
) -> None:
    project = work.create_project(operator.api)
    answers = _race(server, agent().token, project, count=10, size=MAX_FILE)
    statuses = sorted(answer.status_code for answer in answers)
    # Each reserved its declared length under one lock: exactly four fit in 4 MiB.
    assert statuses == [201] * (MAX_PROJECT // MAX_FILE) + [413] * (10 - MAX_PROJECT // MAX_FILE)
    for refused in (answer for answer in answers if answer.status_code == 413):
        assert error_of(refused)["code"] == "QUOTA_EXCEEDED"
        assert f"project {project}" in error_of(refused)["message"]
    assert _stored_bytes(database, project) == MAX_PROJECT
    assert fetch_value(database, "SELECT count(*) FROM artifacts WHERE state <> 'AVAILABLE'") == 0
    assert len(in_store()) == MAX_PROJECT // MAX_FILE


def test_concurrent_uploads_in_two_projects_never_pass_the_deployment_quota(
    server: str, operator: Any, agent: Callable[..., Any], database: Database
) -> None:
    full, other = work.create_project(operator.api, "full"), work.create_project(operator.api)
    uploader = agent()
    for index in range(MAX_PROJECT // MAX_FILE):
        uploaded(server, uploader.token, b"f" * MAX_FILE, projectId=full, name=f"{index}.bin")
    answers = _race(server, uploader.token, other, count=5, size=MAX_FILE)
    room = (MAX_TOTAL - MAX_PROJECT) // MAX_FILE
    assert sorted(answer.status_code for answer in answers) == [201] * room + [413] * (5 - room)
    refused = next(answer for answer in answers if answer.status_code == 413)
    assert "this deployment" in error_of(refused)["message"]
    assert _stored_bytes(database) == MAX_TOTAL


def test_an_upload_without_a_length_reserves_the_per_file_limit(
    server: str, operator: Any, agent: Callable[..., Any]
) -> None:
    project = work.create_project(operator.api)
    token = agent().token
    for index in range(3):
        uploaded(server, token, b"f" * MAX_FILE, projectId=project, name=f"{index}.bin")
    uploaded(server, token, b"f" * (MAX_FILE - 100), projectId=project, name="almost.bin")
    # 100 bytes are left: ten bytes fit with their length, not without one.
    assert upload(server, token, iter([b"0123456789"]), projectId=project).status_code == 413
    assert upload(server, token, b"0123456789", projectId=project).status_code == 201


def test_deleting_an_artifact_gives_its_bytes_back_to_the_quota(
    server: str, operator: Any, agent: Callable[..., Any]
) -> None:
    project = work.create_project(operator.api)
    uploader = agent()
    made = [uploaded(server, uploader.token, b"f" * MAX_FILE, projectId=project, name=f"{i}.bin")
            for i in range(MAX_PROJECT // MAX_FILE)]
    assert upload(server, uploader.token, b"one more", projectId=project).status_code == 413
    deleted = uploader.api.mutate(
        "deleteArtifact", {"artifactId": made[0]["id"], "reason": "superseded by a rerun"},
        "... on DeleteArtifactPayload { artifact { state } }",
    )
    assert deleted["artifact"]["state"] == "DELETED"
    assert upload(server, uploader.token, b"one more", projectId=project).status_code == 201


def test_an_upload_staged_past_the_grace_period_stops_holding_its_reservation(
    server: str,
    operator: Any,
    agent: Callable[..., Any],
    clock: ManualClock,
    database: Database,
) -> None:
    project = work.create_project(operator.api)
    uploader = agent()
    for index in range(3):
        uploaded(server, uploader.token, b"f" * MAX_FILE, projectId=project, name=f"{index}.bin")
    # An upload that stalls (its server could have crashed) holds the last MiB...
    stalled = RawUpload(server, uploader.token, {"projectId": project, "name": "stalled.bin"},
                        content_length=MAX_FILE)
    try:
        wait_until(
            lambda: fetch_value(database, "SELECT count(*) FROM artifacts WHERE state = 'STAGED'")
            == 1,
            "the stalled upload is staged",
        )
        assert upload(server, uploader.token, b"x" * MIB, projectId=project).status_code == 413
        # ...until it has been staged for longer than the grace period (an hour).
        clock.advance(3600)
        assert upload(server, uploader.token, b"x" * MIB, projectId=project).status_code == 201
    finally:
        stalled.close()
