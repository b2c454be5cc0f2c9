"""An operator watches a project's board in a real browser: groups, a filter link, a card
moving live when an agent claims its task through the API."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.test_dashboard_in_browser import sign_in
from tests.conftest import AgentSession, Principal
from tests.support import work

pytestmark = pytest.mark.browser


def test_a_card_moves_to_in_progress_when_its_task_is_claimed(
    page: Page,
    operator: Principal,
    agent: Callable[..., AgentSession],
    screenshots: Path,
) -> None:
    project = work.create_project(operator.api, "Board in a browser")
    first = work.new_task(operator.api, project, title="Write the parser", priority=5)
    second = work.new_task(operator.api, project, title="Document the parser",
                           kind="IMPLEMENTATION")
    work.new_task(operator.api, project, title="Ship the parser", prerequisiteIds=[first])

    page.goto(f"/projects/{project}")
    sign_in(page)
    expect(page.get_by_role("heading", name="Board in a browser", level=1)).to_be_visible()
    page.get_by_role("link", name="Board", exact=True).click()
    expect(page.get_by_role("heading", name="Board of Board in a browser", level=1)).to_be_visible()
    ready = page.locator('[data-board-group="ready"]')
    in_progress = page.locator('[data-board-group="in_progress"]')
    expect(ready.locator(".card")).to_have_count(2)
    expect(ready.locator(".card").first).to_have_id(f"card-{first}")
    expect(page.locator('[data-board-group="blocked"] .card')).to_have_count(1)
    expect(in_progress.locator(".card")).to_have_count(0)
    expect(page.locator("[data-live-status]")).to_contain_text("Live")
    page.screenshot(path=screenshots / "board.png", full_page=True)

    # A filter is a plain GET form: the filtered board is a link.
    page.get_by_label("implementation", exact=True).check()
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"/tasks\?kind=IMPLEMENTATION"))
    expect(page.locator(".card")).to_have_count(1)
    expect(page.locator(f"#card-{second}")).to_be_visible()
    page.goto(f"/projects/{project}/tasks?kind=GENERAL&state=ready&state=in_progress")
    expect(page.locator(".board-group")).to_have_count(2)
    expect(ready.locator(".card")).to_have_count(1)
    expect(page.locator("[data-live-status]")).to_contain_text("Live")
    page.screenshot(path=screenshots / "board-filtered.png", full_page=True)

    worker = agent("browser-worker", workstation="ws-browser")
    work.claimed(worker.api, project, first)
    moved = in_progress.locator(f"#card-{first}")
    expect(moved).to_be_visible()
    expect(moved).to_contain_text("browser-worker · session")
    # The countdown runs from the server's time on the card (a 600 s lease).
    expect(moved.locator("[data-lease-left]")).to_have_text(re.compile(r"^(10|9) min left$"))
    expect(ready.locator(".card")).to_have_count(0)
    expect(in_progress.locator("[data-count]")).to_have_text("1")
    expect(ready.locator("[data-count]")).to_have_text("0")
    expect(page.locator("[data-live-status]")).to_contain_text(f"task {first} changed")
    page.screenshot(path=screenshots / "board-live.png", full_page=True)

    # A task the filters leave out never appears.
    work.claimed(agent("other-worker").api, project, second)
    expect(page.locator("[data-live-status]")).to_contain_text(f"task {second} changed")
    expect(page.locator(f"#card-{second}")).to_have_count(0)
