"""`hub serve`, a real process: its log is JSON lines (uvicorn's own lines included, no
uvicorn access line), each request's line with its id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from tests.support.processes import hub_servers, wait_until

if TYPE_CHECKING:  # imported for types only: pytest would try to collect `TestDatabase`
    from tests.conftest import TestDatabase


@pytest.mark.slow
def test_hub_serve_writes_json_lines_with_request_ids(
    test_database: TestDatabase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HUB_LOG_FORMAT", "json")
    with hub_servers(1, test_database.url, tmp_path, poll_seconds=2.0) as [server]:
        answer = httpx.post(
            f"{server.base_url}/graphql", json={"query": "{ viewer { credential } }"},
            headers={"X-Request-ID": "from-the-test"}, timeout=30,
        )
        assert answer.headers["x-request-id"] == "from-the-test"

        def access_line() -> bool:
            return any(
                '"hub.access"' in line and '"from-the-test"' in line
                for line in server.log().splitlines()
            )

        assert wait_until(access_line), server.log()
        text = server.log()
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert any(line["logger"].startswith("uvicorn") for line in lines)
    assert not [line for line in lines if line["logger"] == "uvicorn.access"]
    ours = {line["logger"]: line for line in lines if line.get("request_id") == "from-the-test"}
    assert ours["hub.operation"]["outcome"] == "error"
    assert ours["hub.operation"]["error_code"] == "UNAUTHENTICATED"
    assert ours["hub.access"]["route"] == "/graphql" and ours["hub.access"]["status"] == 200
    ready = [line for line in lines if line.get("route") == "/readyz"]
    assert ready and all(line["request_id"].startswith("req_") for line in ready)
