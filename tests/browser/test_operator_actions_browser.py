"""The agents page and the operators' actions in a real browser: an operator releases an
expired task for recovery through its confirmation page and sees the result, then
revokes the token an agent's session was opened with, and the session leaves the live
sessions for the ended ones."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from hub.clock import ManualClock
from tests.browser.test_dashboard_in_browser import sign_in
from tests.conftest import AgentSession, Principal
from tests.support import work

pytestmark = pytest.mark.browser


def test_operator_releases_a_task_and_revokes_a_session_s_token(
    page: Page,
    operator: Principal,
    agent: Callable[..., AgentSession],
    clock: ManualClock,
    screenshots: Path,
) -> None:
    project = work.create_project(operator.api, name="Storefront")
    task = work.new_task(operator.api, project, title="Greet the user")
    holder = agent(name="builder", workstation="laptop-7")
    attempt = work.claimed(holder.api, project, task)["attempt"]
    clock.set(datetime.fromisoformat(attempt["expiresAt"]))
    doomed = agent(name="stray", workstation="old-box")

    page.goto("/agents")
    sign_in(page)
    expect(page.get_by_role("heading", name="Agents and sessions", level=1)).to_be_visible()
    row = page.locator(f"#attempt-{attempt['id']}")
    expect(row).to_contain_text("Greet the user")
    expect(row).to_contain_text("expired")
    page.screenshot(path=screenshots / "agents.png", full_page=True)

    row.get_by_role("link", name="Release for recovery").click()
    expect(page).to_have_url(re.compile(rf"/tasks/{task}/release\?next="))
    expect(page.get_by_role("heading", name="Release a task for recovery")).to_be_visible()
    expect(page.get_by_text("laptop-7")).to_be_visible()
    page.screenshot(path=screenshots / "release-confirm.png", full_page=True)
    page.get_by_label("Reason").fill("builder's laptop died")
    page.get_by_role("button", name="Release for recovery").click()

    expect(page).to_have_url(re.compile(r"/agents#session-"))
    notice = page.get_by_role("status").filter(has_text="released for a recovery claim")
    expect(notice).to_be_visible()
    packet = work.recovery_packet(operator.api, task)
    assert packet["task"]["id"] == task
    assert work.recovered(agent().api, task)["attempt"]["kind"] == "RECOVERY"
    page.screenshot(path=screenshots / "release-done.png", full_page=True)

    session = page.locator(f"#session-{doomed.session_id}")
    session.get_by_role("link", name="Revoke the token that opened it").click()
    expect(page.get_by_role("heading", name="Revoke a token")).to_be_visible()
    page.get_by_label("Reason").fill("the old box was sold")
    page.get_by_role("button", name="Revoke the token").click()
    expect(page).to_have_url(re.compile(r"/agents$"))
    expect(page.get_by_role("status").filter(has_text="is revoked")).to_be_visible()
    expect(page.locator(f"#session-{doomed.session_id}")).to_have_count(0)

    page.get_by_role("link", name="Ended sessions").click()
    ended = page.locator(f"#session-{doomed.session_id}")
    expect(ended).to_contain_text("the personal token that opened it was revoked")
    page.screenshot(path=screenshots / "agents-ended.png", full_page=True)
