"""The knowledge pages in a real browser: a person signs in, searches a project's
lessons, opens a disputed lesson and reads its versions and the dispute, then the
project's rules."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.test_dashboard_in_browser import sign_in
from tests.conftest import AgentSession, Principal
from tests.support import knowledge, work

pytestmark = pytest.mark.browser


def test_operator_searches_lessons_and_reads_a_disputed_one(
    page: Page,
    operator: Principal,
    agent: Callable[..., AgentSession],
    screenshots: Path,
) -> None:
    project = work.create_project(operator.api, name="Payments")
    common = work.create_project(operator.api, name="Common")
    author, doubter = agent("author-agent"), agent("doubter-agent")
    lesson = knowledge.published(
        author.api, project, "Retry card payments once after a timeout",
        explanation="The gateway answers 504 while the charge goes through.",
        tags=["stripe>=2023"], evidence=["https://ci.example/runs/42"],
    )
    lesson = knowledge.correct(
        author.api, lesson, reason="a timeout is not a failure",
        statement="Retry card payments only after checking the charge status",
    )["lesson"]
    knowledge.dispute(doubter.api, lesson["id"], reason="The gateway is idempotent by key now")
    knowledge.published(author.api, common, "Card payments need an idempotency key")
    old = knowledge.published(author.api, project, "Card refunds are manual")
    new = knowledge.published(author.api, project, "Card refunds go through the refunds job")
    knowledge.supersede(author.api, old["id"], new["id"], reason="automated")
    rule = knowledge.revise(operator.api, project, "Never log card numbers", topic="logging",
                            reason="PCI")["rule"]
    work.set_policy(operator.api, project, agentsMayReviseRules=True)
    knowledge.grant(operator.api, project, principalId=author.principal.id, note="owns logging")
    former = knowledge.grant(operator.api, project, principalId=doubter.principal.id)
    knowledge.revoke(operator.api, former["delegation"]["id"], reason="moved to another team")
    knowledge.revise(author.api, project, "Never log card numbers or CVCs", ruleId=rule["id"],
                     expectedVersion=1, paths=["src/payments/**"], reason="CVCs too")

    page.goto(f"/projects/{project}")
    expect(page).to_have_url(re.compile(r"/login\?next="))
    sign_in(page)
    page.get_by_role("link", name="Knowledge", exact=True).click()
    expect(page.get_by_role("heading", name="Knowledge of Payments", level=1)).to_be_visible()
    expect(page.get_by_role("heading", name="Newest current lessons")).to_be_visible()

    page.get_by_label("Words").fill("payments")
    page.get_by_label("every project").check()
    page.get_by_role("button", name="Search").click()
    expect(page).to_have_url(re.compile(r"/knowledge\?q=payments&tag=&scope=all$"))
    results = page.locator(".lessons > li")
    expect(results).to_have_count(2)
    disputed = page.locator(".lesson", has_text="Retry card payments only after")
    expect(disputed).to_contain_text("Disputed")
    expect(disputed).to_contain_text("The gateway is idempotent by key now")
    expect(page.locator(".lesson", has_text="idempotency key")).to_contain_text(
        "from project Common"
    )
    page.screenshot(path=screenshots / "knowledge-search.png", full_page=True)

    page.get_by_label("Words").fill("card refunds")
    page.get_by_label("this project").check()
    page.get_by_role("button", name="Search").click()
    superseded = page.locator(".lesson", has_text="Card refunds are manual")
    expect(superseded).to_contain_text("Superseded by Card refunds go through the refunds job")

    page.get_by_label("Words").fill("payments")
    page.get_by_role("button", name="Search").click()
    page.get_by_role("link", name=lesson["statement"]).click()
    expect(page).to_have_url(re.compile(rf"/lessons/{lesson['id']}$"))
    expect(page.locator("#disputed-notice")).to_contain_text("Disputed")
    versions = page.locator(".version")
    expect(versions).to_have_count(2)
    expect(versions.nth(0)).to_contain_text("a timeout is not a failure")
    expect(versions.nth(1)).to_contain_text("Retry card payments once after a timeout")
    dispute = page.locator(".dispute")
    expect(dispute).to_contain_text("OPEN")
    expect(dispute).to_contain_text("raised by doubter-agent")
    page.screenshot(path=screenshots / "lesson.png", full_page=True)

    page.get_by_role("link", name="Payments").first.click()
    page.get_by_role("link", name="Rules", exact=True).click()
    logging = page.locator(".rule", has_text="logging")
    expect(logging).to_contain_text("Never log card numbers or CVCs")
    expect(logging.get_by_role("row", name=re.compile("author-agent"))).to_contain_text(
        "text changed; paths changed"
    )
    expect(logging).to_contain_text("made the rule")
    page.get_by_text("Version 1 as written").click()
    expect(logging.get_by_text("Never log card numbers", exact=True)).to_be_visible()
    expect(page.locator(".delegations")).to_contain_text("moved to another team")
    page.screenshot(path=screenshots / "rules.png", full_page=True)
