"""An operator uses the dashboard in a real browser: sign in, look around, watch live."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.conftest import Principal
from tests.web.conftest import add_repository, create_project

pytestmark = pytest.mark.browser


def sign_in(page: Page, name: str = "operator", password: str = "operator-password") -> None:
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_role("button", name="Sign in", exact=True).click()


def test_operator_signs_in_and_sees_a_new_repository_appear_live(
    page: Page, operator: Principal, screenshots: Path
) -> None:
    project = create_project(operator, "Storefront", aliases=["store"])
    add_repository(operator, project.id, "git@github.com:acme/storefront.git", aliases=["shop"])

    page.goto("/")
    expect(page).to_have_url(re.compile(r"/login$"))
    expect(page.get_by_role("heading", name="Sign in", level=1)).to_be_visible()
    page.keyboard.press("Tab")  # keyboard users reach the skip link first
    expect(page.get_by_role("link", name="Skip to main content")).to_be_focused()
    page.screenshot(path=screenshots / "login.png", full_page=True)

    sign_in(page, password="wrong-password")
    expect(page.get_by_role("alert")).to_have_text("Unknown name or wrong password.")
    page.get_by_label("Password", exact=True).fill("operator-password")
    page.get_by_role("button", name="Sign in", exact=True).click()

    expect(page.get_by_role("heading", name="What needs you", level=1)).to_be_visible()
    row = page.get_by_role("row", name=re.compile("Storefront"))
    # No task yet in any state; one repository, two events.
    expect(row.get_by_role("cell")).to_have_text(["0", "0", "0", "0", "0", "0", "1", "2"])
    page.screenshot(path=screenshots / "overview.png", full_page=True)

    row.get_by_role("link", name="Storefront", exact=True).click()
    expect(page.get_by_role("heading", name="Storefront", level=1)).to_be_visible()
    expect(page.get_by_role("rowheader", name="github.com/acme/storefront git@")).to_be_visible()
    status = page.get_by_role("status")
    expect(status).to_contain_text("Live")  # the stream is open

    add_repository(operator, project.id, "https://github.com/acme/storefront-docs")
    newest = page.locator(".event-list > li").first
    expect(newest).to_have_id("event-3")
    expect(newest).to_contain_text("repository.added")
    expect(newest).to_contain_text("github.com/acme/storefront-docs")
    expect(status).to_contain_text("new event #3")
    expect(page.locator(".event-list > li")).to_have_count(3)  # no duplicate, no gap
    page.screenshot(path=screenshots / "project-live.png", full_page=True)

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("status")).to_have_text("You have signed out.")
    page.goto(f"/projects/{project.id}")
    expect(page).to_have_url(re.compile(r"/login\?next="))


def test_dashboard_reads_fully_without_javascript(
    chromium: Browser, server: str, operator: Principal, screenshots: Path
) -> None:
    project = create_project(operator, "Plain HTML")
    add_repository(operator, project.id, "https://github.com/acme/plain.git", defaultBranch="trunk")
    context = chromium.new_context(base_url=server, java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(f"/projects/{project.id}")
        sign_in(page)
        expect(page.get_by_role("heading", name="Plain HTML", level=1)).to_be_visible()
        expect(page.get_by_role("cell", name="trunk")).to_be_visible()
        expect(page.locator(".event-list > li")).to_have_count(2)
        page.screenshot(path=screenshots / "project-no-javascript.png", full_page=True)
        page.get_by_role("button", name="Sign out").click()
        expect(page.get_by_role("heading", name="Sign in", level=1)).to_be_visible()
    finally:
        context.close()
