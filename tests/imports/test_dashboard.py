"""The dashboard's import pages, read by a signed-in person: a project's reports, and a
report's counts and items, every task id a link, a conflict's two versions side by side,
a closed task's reason and reopen condition (docs/imports.md, "The dashboard")."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from hub.web import imports as import_pages
from tests.conftest import Principal
from tests.support import work
from tests.support.imports import chain, item, jsonl, post_import
from tests.web.conftest import Dashboard
from tests.web.test_review_pages import text_of


@pytest.fixture
def dashboard(server: str) -> Iterator[Callable[[], Dashboard]]:
    made: list[Dashboard] = []

    def make() -> Dashboard:
        made.append(Dashboard(server))
        return made[-1]

    yield make
    for browser in made:
        browser.close()


@pytest.fixture
def signed_in(dashboard: Callable[[], Dashboard], operator: Principal) -> Dashboard:
    browser = dashboard()
    assert browser.login().status_code == 303
    return browser


def imported(server: str, token: str, items: list[dict[str, Any]], project: str,
             **params: Any) -> dict[str, Any]:  # fmt: skip
    answer = post_import(server, token, jsonl(items), projectId=project, **params)
    assert answer.status_code == 200, answer.text
    report: dict[str, Any] = answer.json()["report"]
    return report


def row(page: str, element_id: str) -> str:
    found = re.search(rf'<tr id="{element_id}"[^>]*>(.*?)</tr>', page, flags=re.S)
    assert found, element_id
    return found.group(0)


def test_a_project_links_to_its_imports_and_a_report_shows_each_outcome(
    server: str, operator: Principal, signed_in: Dashboard
) -> None:
    project = work.create_project(operator.api, "Planned")
    first = imported(server, operator.token, chain(4), project, source="plan.jsonl")
    tasks = {entry["sourceId"]: entry["taskId"] for entry in first["items"]}
    # In hub meanwhile: t1 edited, t2 deferred; the plan changes t1, t2 and t3.
    edited = work.task(operator.api, tasks["t1"])
    operator.api.mutate(
        "editTask",
        {"taskId": tasks["t1"], "expectedRevision": edited["revision"],
         "title": "Hub's <b>title</b>"},
    )  # fmt: skip
    work.close_task(
        operator.api, tasks["t2"], "DEFERRED", reopenCondition="after the launch", note="later"
    )
    changed = chain(4)
    for index in (1, 2, 3):
        changed[index] = {**changed[index], "title": f"Plan's title {index}"}
    changed.append(item("bad", priority=5000))
    second = imported(server, operator.token, changed, project, source="plan.jsonl",
                      partial=True)  # fmt: skip

    project_page = signed_in.get(f"/projects/{project}")
    assert f'href="/projects/{project}/imports"' in project_page.text
    listing = signed_in.get(f"/projects/{project}/imports")
    assert listing.status_code == 200
    assert f'href="/imports/{second["id"]}"' in listing.text
    assert "partial" in text_of(row(listing.text, f"report-{second['id']}"))

    page = signed_in.get(f"/imports/{second['id']}")
    assert page.status_code == 200
    text = text_of(page.text)
    assert "Created 0 Updated 1 Unchanged 1 Conflicts 1 Skipped, closed in hub 1 Invalid 1" in text
    conflict = row(page.text, "item-2")
    # Both versions, escaped, and the task a link.
    assert "Hub&#39;s &lt;b&gt;title&lt;/b&gt;" in conflict and "<b>title</b>" not in conflict
    assert "Plan&#39;s title 1" in conflict
    assert f'href="/projects/{project}/tasks/{tasks["t1"]}/jobs"' in conflict
    skipped = text_of(row(page.text, "item-3"))
    assert "SKIPPED_CLOSED" in skipped and "DEFERRED" in skipped
    assert "reopen when: after the launch" in skipped
    updated = row(page.text, "item-4")
    assert "UPDATED" in updated and f"/tasks/{tasks['t3']}/jobs" in updated
    assert "priority: must be between" in text_of(row(page.text, "item-5"))

    only = signed_in.get(f"/imports/{second['id']}?outcome=CONFLICT")
    assert 'id="item-2"' in only.text and 'id="item-4"' not in only.text
    # A file imported again unchanged: nothing written, and its report says so.
    other = work.create_project(operator.api, "Steady")
    imported(server, operator.token, chain(3), other)
    again = imported(server, operator.token, chain(3), other)
    assert "Every item was unchanged" in signed_in.get(f"/imports/{again['id']}").text


def test_a_large_report_is_shown_a_page_of_items_at_a_time(
    server: str, operator: Principal, signed_in: Dashboard, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(import_pages, "ITEMS_PER_PAGE", 10)
    project = work.create_project(operator.api, "Large")
    report = imported(server, operator.token, chain(25), project, dryRun=True)
    first = signed_in.get(f"/imports/{report['id']}")
    assert "dry run" in first.text and "Items 1 to 10 of 25" in text_of(first.text)
    assert 'id="item-10"' in first.text and 'id="item-11"' not in first.text
    last = signed_in.get(f"/imports/{report['id']}?start=20")
    assert "Items 21 to 25 of 25" in text_of(last.text)
    assert 'rel="next"' not in last.text


def test_the_import_pages_are_for_signed_in_people(
    server: str, operator: Principal, dashboard: Callable[[], Dashboard]
) -> None:
    project = work.create_project(operator.api, "Private")
    report = imported(server, operator.token, chain(2), project)
    stranger = dashboard()
    for path in (f"/projects/{project}/imports", f"/imports/{report['id']}"):
        answer = stranger.get(path)
        assert answer.status_code == 303 and answer.headers["location"].startswith("/login")
    browser = dashboard()
    assert browser.login().status_code == 303
    assert browser.get("/imports/imp_missing").status_code == 404
