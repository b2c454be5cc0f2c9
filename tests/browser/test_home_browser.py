"""The home page in a real browser: a supervisor signs in, sees what needs them, follows
a review waiting for a human to its submission (the agent's request shown there too),
then the navigation to the review queue and back, and a project's pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.test_accessibility import Sample
from tests.browser.test_accessibility import sample as sample  # the fixture, shared
from tests.browser.test_dashboard_in_browser import sign_in

pytestmark = pytest.mark.browser

ASKED = "The refund path changed: please check the double-charge guard."


def test_a_supervisor_follows_what_needs_them(
    page: Page, sample: Sample, screenshots: Path
) -> None:
    page.goto("/")
    sign_in(page)
    expect(page.get_by_role("heading", name="What needs you", level=1)).to_be_visible()
    reviews = page.get_by_role("region", name="Reviews waiting for a human 1")
    expect(reviews).to_contain_text("waiting for a human reviewer (0 of 1 approvals)")
    expect(reviews).to_contain_text(ASKED)
    for name in ["Recovery candidates 1", "Holds waiting for an operator 1",
                 "Jobs past their deadline 1"]:  # fmt: skip
        expect(page.get_by_role("region", name=name)).to_be_visible()
    expect(page.get_by_role("region", name="Integrations in an uncertain state 0")
           ).to_contain_text("No integration is uncertain.")  # fmt: skip
    page.screenshot(path=screenshots / "home.png", full_page=True)

    reviews.get_by_role("link", name="Retry failed card payments").click()
    expect(page.get_by_role("heading", name="Retry failed card payments", level=1)).to_be_visible()
    expect(page.get_by_text(ASKED)).to_be_visible()

    main_nav = page.get_by_role("navigation", name="Main")
    main_nav.get_by_role("link", name="Review queue").click()
    expect(page.get_by_role("heading", name="Review queue", level=1)).to_be_visible()
    expect(main_nav.get_by_role("link", name="Review queue")).to_have_attribute(
        "aria-current", "page"
    )
    expect(page.get_by_text(ASKED)).to_be_visible()

    main_nav.get_by_role("link", name="Projects").click()
    page.get_by_role("region", name="Jobs past their deadline 1").get_by_role(
        "link", name="nightly-e2e"
    ).click()
    expect(page.get_by_role("heading", name="Jobs of task", level=1)).to_be_visible()
    expect(page.locator(f"#job-{page.url.split('#job-')[1]}")).to_contain_text("nightly-e2e")
    project_nav = page.get_by_role("navigation", name="Pages of Payments <Service>")
    for name in ["Overview", "Board", "Knowledge", "Rules", "Jobs", "Resources", "Imports"]:
        expect(project_nav.get_by_role("link", name=name, exact=True)).to_be_visible()
    project_nav.get_by_role("link", name="Resources").click()
    expect(page.get_by_role("heading", name="Resources", level=1)).to_be_visible()
    expect(page.locator("#resources-table")).to_contain_text("HELD")
