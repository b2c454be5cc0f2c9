"""The task page in a real browser: its dependency picture's nodes are links that land
on their tasks, under the dashboard's CSP (no page error, no refused style)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.test_dashboard_in_browser import sign_in
from tests.conftest import AgentSession, Principal
from tests.support import work
from tests.web.test_task_page import Story, story

__all__ = ["story"]  # the fixture, shared with the page tests

pytestmark = pytest.mark.browser


def test_a_node_of_the_picture_opens_its_task(
    page: Page, operator: Principal, agent: Callable[..., AgentSession], screenshots: Path
) -> None:
    api = operator.api
    project = work.create_project(api, name="Payments")
    schema = work.new_task(api, project, title="Add the retries table")
    task = work.new_task(api, project, title="Retry <failed> card payments",
                         prerequisiteIds=[schema])
    work.new_task(api, project, title="Dunning emails", prerequisiteIds=[task])
    work.claimed(agent().api, project, schema)

    page.goto(f"/tasks/{task}")
    sign_in(page)
    expect(page).to_have_url(re.compile(rf"/tasks/{task}$"))
    heading = page.get_by_role("heading", name="Retry <failed> card payments", level=1)
    expect(heading).to_be_visible()
    picture = page.locator("#picture svg")
    expect(picture).to_be_visible()
    expect(picture.locator("text", has_text="in progress")).to_be_visible()  # state in words
    page.screenshot(path=screenshots / "task-page.png", full_page=True)

    picture.locator(f'a[href="/tasks/{schema}"]').click()
    expect(page).to_have_url(re.compile(rf"/tasks/{schema}$"))
    expect(page.get_by_role("heading", name="Add the retries table", level=1)).to_be_visible()
    # The task it was reached from waits for it: there below it, and a link back.
    page.locator("#picture svg").locator(f'a[href="/tasks/{task}"]').click()
    expect(page).to_have_url(re.compile(rf"/tasks/{task}$"))

    page.goto(f"/projects/{project}")
    expect(page.locator("#project-graph svg a")).to_have_count(3)
    page.screenshot(path=screenshots / "project-graph.png", full_page=True)


def test_the_whole_story_reads_and_the_picture_works_from_the_keyboard(
    page: Page, story: Story, screenshots: Path
) -> None:
    page.goto(f"/tasks/{story.task}")
    sign_in(page)
    expect(page.get_by_role("heading", name="Attempts", level=2)).to_be_visible()
    expect(page.locator(f"#attempt-{story.recovery['id']}")).to_contain_text(
        "the checkpoint was stale"
    )
    expect(page.locator(f"#review-{story.review}")).to_contain_text("charges <twice>")
    page.screenshot(path=screenshots / "task-page-story.png", full_page=True)

    node = page.locator("#picture svg").locator(f'a[href="/tasks/{story.dependent}"]')
    node.focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/tasks/{story.dependent}$"))
