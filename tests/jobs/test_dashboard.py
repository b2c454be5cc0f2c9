"""The dashboard's jobs and resources views: freshness, deadlines and holds judged at
read time, and live updates over SSE from the event log."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from hub.clock import ManualClock
from tests.conftest import Principal
from tests.support import jobs, work
from tests.web.conftest import Dashboard
from tests.web.conftest import dashboard as dashboard  # the fixture, shared
from tests.web.test_live_events import READ_TIMEOUT, next_event


@pytest.fixture
def signed_in(dashboard: Callable[[], Dashboard], operator: Principal) -> Dashboard:
    browser = dashboard()
    assert browser.login().status_code == 303
    return browser


def test_the_jobs_view_shows_status_freshness_deadline_and_holds(
    signed_in: Dashboard, operator: Principal, agent: Any, clock: ManualClock
) -> None:
    project = work.create_project(operator.api)
    fixture = jobs.define_resource(operator.api, project, "fixture-db")
    a = agent()
    claim = work.claimed(a.api, project, work.new_task(operator.api, project))
    attempt, task_id = claim["attempt"], claim["task"]["id"]
    deadline = clock.now() + timedelta(hours=3)
    job = jobs.registered_job(a.api, attempt, expectedDeadline=deadline.isoformat(),
                              job_id="nightly-e2e")
    jobs.observe(a.api, job)
    jobs.acquire(a.api, attempt, fixture)
    clock.set(datetime.fromisoformat(attempt["expiresAt"]))  # lease over, job silent

    page = signed_in.get(f"/projects/{project}/tasks/{task_id}/jobs")
    assert page.status_code == 200
    row = re.search(rf'<tr id="job-{job["id"]}".*?</tr>', page.text, re.S)
    assert row, page.text
    text = html.unescape(row.group(0))
    assert "nightly-e2e" in text and "RUNNING" in text and "UNOBSERVED" in text
    assert deadline.strftime("%Y-%m-%d %H:%M:%S UTC") in text
    assert "<code>fixture-db</code>" in text  # the task's recovery hold

    resources_page = signed_in.get(f"/projects/{project}/resources").text
    assert "HELD" in resources_page and "fixture-db" in resources_page


def test_the_jobs_view_updates_live_when_an_observation_arrives(
    signed_in: Dashboard, operator: Principal, agent: Any
) -> None:
    project = work.create_project(operator.api)
    a = agent()
    attempt = work.claimed(a.api, project, work.new_task(operator.api, project))["attempt"]
    job = jobs.registered_job(a.api, attempt)
    page = signed_in.get(f"/projects/{project}/jobs").text
    found = re.search(r'data-live-swap="([^"]+)"', page)
    assert found, page
    with signed_in.http.stream(
        "GET", html.unescape(found.group(1)), headers={"accept": "text/event-stream"},
        timeout=READ_TIMEOUT,
    ) as response:
        assert response.status_code == 200
        jobs.finish(a.api, job, 4)
        event = next_event(response.iter_lines())
    assert event["event"] == "swap"
    assert f'<tr id="job-{job["id"]}"' in event["data"]
    assert "FINISHED" in event["data"] and "exit 4" in event["data"]


def test_the_job_views_need_a_signed_in_person(dashboard: Callable[[], Dashboard]) -> None:
    browser = dashboard()
    response = browser.get("/projects/prj_x/jobs")
    assert response.status_code in (302, 303)
