"""Scenario 11 (docs/scenarios.md) in a real browser: a person approves the submission
an agent cannot.

Policy `AGENT_AND_HUMAN`; an independent agent has approved; the task waits for a
human with that reason until the operator signs in, finds it in the review queue, and
approves it through the form with a NOTE finding.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from hub.clock import ManualClock
from hub.settings import Settings
from tests.browser.test_dashboard_in_browser import sign_in
from tests.conftest import AgentSession, Principal
from tests.support import work
from tests.support.workflow import approve_by_new_reviewer, deliver, sha

pytestmark = pytest.mark.browser

WAITING_FOR_HUMAN = "waiting for a human reviewer (0 of 1 approvals)"


def test_operator_approves_a_waiting_submission_in_the_browser(
    page: Page,
    operator: Principal,
    agent: Callable[..., AgentSession],
    clock: ManualClock,
    settings: Settings,
    screenshots: Path,
) -> None:
    project = work.create_project(operator.api, name="Payments")
    operator.api.mutate(
        "setProjectPolicy", {"projectId": project, "reviewPolicy": "AGENT_AND_HUMAN"}
    )
    old = deliver(operator.api, agent().api, project=project, title="Retry failed card payments",
                  acceptanceCriteria=["a failed charge is retried once", "no double charge"])
    approve_by_new_reviewer(agent().api, project, old.submission)
    # The first one has waited past the warning threshold by the time the second arrives.
    clock.advance(settings.review_wait_warning_seconds + 3600)
    fresh = deliver(operator.api, agent().api, project=project, repository=old.repository,
                    title="Show refunds on invoices", candidate=sha("c"))
    approve_by_new_reviewer(agent().api, project, fresh.submission)

    page.goto("/reviews")
    expect(page).to_have_url(re.compile(r"/login\?next=%2Freviews$"))
    sign_in(page)
    expect(page.get_by_role("heading", name="Review queue", level=1)).to_be_visible()
    waiting = page.get_by_role("row", name=re.compile("Retry failed card payments"))
    expect(waiting).to_contain_text("Escalated")
    expect(waiting).to_contain_text(WAITING_FOR_HUMAN)
    expect(waiting).to_contain_text("1 d 1 h")
    newer = page.get_by_role("row", name=re.compile("Show refunds on invoices"))
    expect(newer).to_contain_text(WAITING_FOR_HUMAN)
    expect(newer).not_to_contain_text("Escalated")
    page.screenshot(path=screenshots / "review-queue.png", full_page=True)

    waiting.get_by_role("link", name="Retry failed card payments").click()
    expect(page).to_have_url(re.compile(rf"/submissions/{old.submission}$"))
    expect(page.get_by_role("heading", name="Retry failed card payments", level=1)).to_be_visible()
    verdict = page.locator(".verdict")
    expect(verdict).to_have_text("… Waiting for a human reviewer (0 of 1 approvals)")
    expect(page.get_by_text("no double charge")).to_be_visible()
    expect(page.get_by_role("cell", name="Published")).to_be_visible()
    page.screenshot(path=screenshots / "submission.png", full_page=True)

    page.get_by_label("Approve this submission").check()
    page.get_by_label("Summary").fill("Read the diff and the retry tests; behaviour matches.")
    first = page.get_by_role("group", name="Finding 1")
    first.get_by_label("Severity").select_option("NOTE")
    first.get_by_label("Title", exact=True).fill("Retry delay is fixed")
    first.get_by_label("Remedy", exact=True).fill("Consider exponential backoff later")
    # HTMX swaps in one more fieldset, keeping what was typed; an empty one is skipped.
    page.get_by_role("button", name="Add another finding").click()
    second = page.get_by_role("group", name="Finding 2")
    expect(second.get_by_label("Severity")).to_be_focused()
    expect(first.get_by_label("Title", exact=True)).to_have_value("Retry delay is fixed")
    page.get_by_role("button", name="Record my decision").click()

    expect(page.locator("#decision-recorded")).to_contain_text("decision was recorded: approved")
    expect(verdict).to_have_text("✓ Approved: ready for integration")
    expect(page.locator("#review-status")).to_contain_text("AWAITING_INTEGRATION")
    expect(page.locator("#review-status")).to_contain_text("1 of 1 required")
    human = page.locator(".review", has_text="human review by operator")
    expect(human).to_contain_text("Retry delay is fixed")
    expect(page.get_by_role("button", name="Record my decision")).to_have_count(0)
    page.screenshot(path=screenshots / "submission-approved.png", full_page=True)
    assert work.task(operator.api, old.task)["state"] == "AWAITING_INTEGRATION"

    page.get_by_role("link", name="Review queue").first.click()
    expect(page.get_by_role("row", name=re.compile("Retry failed card payments"))).to_have_count(0)
    expect(page.get_by_role("row", name=re.compile("Show refunds on invoices"))).to_be_visible()
