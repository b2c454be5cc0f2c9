"""The per-token request rate and the operations a WebSocket connection may run at once
(docs/ops/limits.md): a token over its rate is answered 429 with Retry-After, its bucket
refills with the runtime's clock; the limit is off unless set."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from hub.api.rate_limits import TokenBuckets
from hub.clock import ManualClock
from hub.runtime import Runtime
from hub.settings import Settings
from hub.storage.database import Database
from tests.conftest import issue_principal, runtime_settings
from tests.support import work
from tests.support.client import Api
from tests.support.server import serve
from tests.support.subscriptions import subscriber

if TYPE_CHECKING:
    from tests.conftest import Principal, TestDatabase

VIEWER = {"query": "{ viewer { serverTime } }"}


@pytest.fixture
def limited(
    test_database: TestDatabase, database: Database, clock: ManualClock, tmp_path: Path
) -> Iterator[tuple[str, Runtime]]:
    settings = runtime_settings(
        test_database.url, tmp_path, rate_limit_per_token=0.5, rate_limit_burst=3,
        max_subscriptions_per_connection=2,
    )
    rt = Runtime(settings, database=database, clock=clock)
    with serve(rt) as url:
        yield url, rt
    rt.release_threads()


def _post(http: httpx.Client, token: str, path: str = "/graphql") -> httpx.Response:
    return http.post(path, json=VIEWER, headers={"Authorization": f"Bearer {token}"})


def test_a_token_over_its_rate_is_answered_429_until_its_bucket_refills(
    limited: tuple[str, Runtime], clock: ManualClock
) -> None:
    url, rt = limited
    token = issue_principal(rt, "busy")[1]
    other = issue_principal(rt, "calm")[1]
    with httpx.Client(base_url=url, timeout=30) as http:
        assert [_post(http, token).status_code for _ in range(3)] == [200, 200, 200]
        refused = _post(http, token)
        assert refused.status_code == 429
        assert refused.headers["Retry-After"] == "2"  # one request at 0.5 a second
        [error] = refused.json()["errors"]
        assert error["extensions"]["code"] == "RATE_LIMITED"
        assert "at most 0.5 a second" in error["message"]
        # Another token has its own allowance; health and metrics are never limited.
        assert _post(http, other).status_code == 200
        for path in ("/healthz", "/readyz", "/metrics"):
            headers = {"Authorization": f"Bearer {token}"}
            assert http.get(path, headers=headers).status_code == 200
        # The plain-HTTP routes answer in their own shape.
        export = http.get("/api/projects/prj_x/export",
                          headers={"Authorization": f"Bearer {token}"})
        assert export.status_code == 429
        assert export.json()["error"]["code"] == "RATE_LIMITED"
        clock.advance(seconds=2)
        assert _post(http, token).status_code == 200
        assert _post(http, token).status_code == 429


def test_a_guessed_token_id_does_not_spend_the_real_tokens_allowance(
    limited: tuple[str, Runtime],
) -> None:
    url, rt = limited
    token = issue_principal(rt, "victim")[1]
    forged = token[: -8] + "0" * 8
    with httpx.Client(base_url=url, timeout=30) as http:
        for _ in range(5):
            _post(http, forged)
        assert _post(http, token).status_code == 200


def test_the_rate_limit_is_off_by_default(server: str, operator: Principal) -> None:
    assert Settings(_env_file=None).rate_limit_per_token == 0  # type: ignore[call-arg]
    with httpx.Client(base_url=server, timeout=30) as http:
        statuses = {_post(http, operator.token).status_code for _ in range(80)}
    assert statuses == {200}


def test_a_connection_runs_only_so_many_operations_at_once(
    limited: tuple[str, Runtime], clock: ManualClock
) -> None:
    url, rt = limited
    token = issue_principal(rt, "watcher", "human")[1]
    api = Api(url, token)
    project = work.create_project(api)
    api.close()
    clock.advance(seconds=10)  # the requests above spent the token's burst
    with subscriber(url, token) as ws:
        ws.subscribe(project, id="1")
        ws.subscribe(project, id="2")
        ws.subscribe(project, id="3")
        refused = ws.receive()
        while refused["type"] == "next":  # the first two replay the project's events
            refused = ws.receive()
        assert refused["type"] == "error" and refused["id"] == "3", refused
        [error] = refused["payload"]
        assert error["extensions"]["code"] == "QUOTA_EXCEEDED"
        assert "at most 2 operations at once" in error["message"]


def test_a_bucket_refills_continuously_up_to_its_burst() -> None:
    clock = ManualClock(datetime(2026, 1, 1, tzinfo=UTC))
    buckets = TokenBuckets(rate=2.0, burst=4, clock=clock)
    assert [buckets.take("t") for _ in range(5)] == [None, None, None, None, 1]
    clock.advance(seconds=0.5)
    assert buckets.take("t") is None
    assert buckets.take("t") == 1
    clock.advance(timedelta(hours=1).total_seconds())
    assert [buckets.take("t") for _ in range(5)] == [None, None, None, None, 1]
