"""The project page's live event stream (SSE) from the event log."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from hub.runtime import Runtime
from tests.conftest import Principal
from tests.web.conftest import Dashboard, SampleProject, add_repository, create_project

# Long enough for a slow CI machine, short enough that a missing event fails the test
# instead of hanging it; shorter than the server's 15 s keep-alive ping.
READ_TIMEOUT = httpx.Timeout(10.0)


def next_event(lines: Iterator[str]) -> dict[str, str]:
    """The next server-sent event's fields (comments and keep-alive pings skipped)."""
    fields: dict[str, list[str]] = {}
    for line in lines:
        if not line:
            if fields:
                return {name: "\n".join(values) for name, values in fields.items()}
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        fields.setdefault(name, []).append(value.removeprefix(" "))
    raise AssertionError("the stream ended")


@pytest.fixture
def signed_in(dashboard: Callable[[], Dashboard], operator: Principal) -> Dashboard:
    browser = dashboard()
    assert browser.login().status_code == 303
    return browser


@pytest.fixture
def project(operator: Principal) -> SampleProject:
    return create_project(operator, "Live project")


def test_stream_delivers_an_event_created_after_connecting(
    signed_in: Dashboard, operator: Principal, project: SampleProject, runtime: Runtime
) -> None:
    page = signed_in.get(f"/projects/{project.id}").text
    found = re.search(r'data-live-events="([^"]+)"', page)
    assert found, page
    stream_url = found.group(1)
    assert stream_url.endswith("?after=1")  # the page already shows project.created

    with signed_in.http.stream(
        "GET", stream_url, headers={"accept": "text/event-stream"}, timeout=READ_TIMEOUT
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        repository = add_repository(operator, project.id, "https://github.com/acme/live.git")
        event = next_event(response.iter_lines())

    assert event["event"] == "project-event"
    assert event["id"] == "2"
    assert '<li class="event" id="event-2">' in event["data"]
    assert '<code class="event-kind">repository.added</code>' in event["data"]
    assert repository["binding"] in event["data"]
    assert "by operator" in event["data"]
    # The browser went away: its follower must leave the event signal.
    deadline = time.monotonic() + 10
    while runtime.event_signal.follower_count() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert runtime.event_signal.follower_count() == 0


def test_a_reconnecting_browser_resumes_after_the_last_event_it_saw(
    signed_in: Dashboard, operator: Principal, project: SampleProject
) -> None:
    for name in ["one", "two", "three"]:
        add_repository(operator, project.id, f"https://github.com/acme/{name}.git")
    # EventSource sends Last-Event-ID on reconnect; it wins over the page's stale `after`.
    with signed_in.http.stream(
        "GET", f"/projects/{project.id}/events/live?after=1",
        headers={"accept": "text/event-stream", "last-event-id": "3"}, timeout=READ_TIMEOUT,
    ) as response:
        event = next_event(response.iter_lines())
    assert event["id"] == "4"
    assert "github.com/acme/three" in event["data"]


def test_stream_needs_a_signed_in_person(
    dashboard: Callable[[], Dashboard], operator: Principal, project: SampleProject
) -> None:
    stranger = dashboard()
    response = stranger.get(
        f"/projects/{project.id}/events/live", headers={"accept": "text/event-stream"}
    )
    assert response.status_code == 401
    # A bearer token is an API credential, not a dashboard login.
    response = stranger.get(
        f"/projects/{project.id}/events/live",
        headers={"accept": "text/event-stream", "authorization": f"Bearer {operator.token}"},
    )
    assert response.status_code == 401


def test_stream_of_an_unknown_project_is_not_found(signed_in: Dashboard) -> None:
    response = signed_in.get(
        "/projects/prj_missing/events/live", headers={"accept": "text/event-stream"}
    )
    assert response.status_code == 404
    bad = signed_in.get("/projects/prj_missing/events/live?after=soon")
    assert bad.status_code == 400
