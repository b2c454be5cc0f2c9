"""A dashboard live stream whose server stops (docs/ops/deploying.md, "Graceful
shutdown") ends with a last `server-restarting` event and a `retry:` hint; the browser
then reconnects by itself and resumes after the last event it saw."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from hub.runtime import Runtime
from tests.conftest import Principal
from tests.web.conftest import Dashboard, create_project
from tests.web.test_live_events import next_event


def test_a_live_stream_ends_with_server_restarting_when_the_drain_stops(
    dashboard: Callable[[], Dashboard], operator: Principal, runtime: Runtime
) -> None:
    browser = dashboard()
    assert browser.login().status_code == 303
    project = create_project(operator, "Restarting")
    with browser.http.stream(
        "GET", f"/projects/{project.id}/events/live?after=0",
        headers={"accept": "text/event-stream"}, timeout=httpx.Timeout(10.0),
    ) as response:
        lines = response.iter_lines()
        assert next_event(lines)["id"] == "1"
        runtime.drain.stop()
        farewell = next_event(lines)
    assert farewell["event"] == "server-restarting"
    assert farewell["retry"] == "1000"
    assert "restarting" in farewell["data"]
