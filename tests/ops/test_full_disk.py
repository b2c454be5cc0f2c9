"""An upload that finds the server's disk full (docs/ops/faults.md): refused with the
typed, retryable `UNAVAILABLE` (HTTP 503, `Retry-After`), leaving no record and no
staged bytes; sent again with its key once there is room, it is stored once.

The disk fills up the way the kernel makes it look full to one process: its file-size
limit, set from outside, lets no file grow. On PostgreSQL the database's own disk is
another machine's, so there it is the upload's staging that fails; on SQLite the
database's write fails first. Writes of tasks under a full disk are in
test_database_outage.py."""

from __future__ import annotations

import os
import resource
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from hub.runtime import Runtime
from hub.storage.database import Database
from tests.conftest import issue_principal
from tests.ops.test_database_outage import set_file_size_limit
from tests.support import work
from tests.support.artifacts import error_of, upload
from tests.support.client import Api
from tests.support.processes import hub_servers
from tests.support.sql import fetch_value

if TYPE_CHECKING:  # for types only: pytest would try to collect `TestDatabase`
    from tests.conftest import TestDatabase


def test_an_upload_that_finds_the_disk_full_is_refused_retryably_and_leaves_nothing(
    runtime: Runtime, test_database: TestDatabase, database: Database, tmp_path: Path
) -> None:
    _, token = issue_principal(runtime, "operator", kind="human", operator=True)
    workdir = tmp_path / "server"
    with hub_servers(1, test_database.url, workdir, poll_seconds=1.0) as (server,):
        api = Api(server.base_url, token)
        project = work.create_project(api)
        content = os.urandom(300 * 1024)
        key = uuid.uuid4().hex

        set_file_size_limit(server, 0)
        try:
            refused = upload(server.base_url, token, content, idempotency_key=key,
                             projectId=project, name="build.log")
        finally:
            set_file_size_limit(server, resource.RLIM_INFINITY)

        assert refused.status_code == 503, refused.text
        assert refused.headers["retry-after"].isdigit()
        error = error_of(refused)
        assert error["code"] == "UNAVAILABLE" and error["retryable"] is True
        assert fetch_value(database, "SELECT count(*) FROM artifacts") == 0
        staging = workdir / "artifacts" / ".staging"
        assert not staging.exists() or list(staging.iterdir()) == []

        stored = upload(server.base_url, token, content, idempotency_key=key,
                        projectId=project, name="build.log")
        assert stored.status_code == 201, stored.text
        artifact = stored.json()["artifact"]
        with httpx.Client(base_url=server.base_url, timeout=30) as client:
            downloaded = client.get(
                f"/artifacts/{artifact['id']}", headers={"Authorization": f"Bearer {token}"}
            )
        assert downloaded.status_code == 200 and downloaded.content == content
        assert fetch_value(database, "SELECT count(*) FROM artifacts") == 1
        api.close()
        assert "Traceback" not in server.log(), server.log()[-3000:]
