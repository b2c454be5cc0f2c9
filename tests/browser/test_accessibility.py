"""Every dashboard page in a real browser, at a desktop width and a phone width: axe-core
finds no serious or critical violation, nothing makes the page scroll sideways, and the
keyboard reaches the skip link first with a visible focus on everything after it.

axe-core's script comes from the `axe-playwright-python` package (the dev extra), which
ships it: nothing is downloaded when the tests run. `HUB_TEST_AXE_JS` may name another
copy of `axe.min.js`. Without either, the axe checks skip, saying why; the keyboard and
width checks run all the same.

To check a new page, add a line to `PAGES`: its name (the screenshot's) and its address
from the records `sample` made (add to `Sample` what the page needs).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from hub.clock import ManualClock
from tests.browser.test_dashboard_in_browser import sign_in
from tests.conftest import AgentSession, Principal
from tests.support import jobs, knowledge, work
from tests.support.artifacts import uploaded
from tests.support.imports import item, jsonl, post_import
from tests.support.review import request_human_review
from tests.support.workflow import approve_by_new_reviewer, deliver

pytestmark = pytest.mark.browser

AXE_ENV = "HUB_TEST_AXE_JS"
# What the dashboard must never have (axe's impact levels); moderate and minor ones are
# reported in the failure message of a serious one, to fix alongside.
BLOCKING_IMPACTS = ("serious", "critical")
WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}


@dataclass(frozen=True)
class Sample:
    """One of each record the pages show."""

    project: str
    task: str
    submission: str
    lesson: str
    report: str
    artifact: str


PAGES: list[tuple[str, Callable[[Sample], str]]] = [
    ("home", lambda s: "/"),
    ("project", lambda s: f"/projects/{s.project}"),
    ("review-queue", lambda s: "/reviews"),
    ("submission", lambda s: f"/submissions/{s.submission}"),
    ("knowledge", lambda s: f"/projects/{s.project}/knowledge"),
    ("knowledge-search", lambda s: f"/projects/{s.project}/knowledge?q=payments"),
    ("lesson", lambda s: f"/lessons/{s.lesson}"),
    ("rules", lambda s: f"/projects/{s.project}/rules"),
    ("jobs", lambda s: f"/projects/{s.project}/jobs"),
    ("task-jobs", lambda s: f"/projects/{s.project}/tasks/{s.task}/jobs"),
    ("resources", lambda s: f"/projects/{s.project}/resources"),
    ("imports", lambda s: f"/projects/{s.project}/imports"),
    ("import-report", lambda s: f"/imports/{s.report}"),
    ("artifact", lambda s: f"/artifacts/{s.artifact}/preview"),
    ("artifacts", lambda s: f"/projects/{s.project}/artifacts?state=nonsense"),
    ("board", lambda s: f"/projects/{s.project}/tasks"),
    ("board-filtered", lambda s: f"/projects/{s.project}/tasks?state=IN_PROGRESS&kind=nonsense"),
    ("task", lambda s: f"/tasks/{s.task}"),
    ("agents", lambda s: "/agents"),
    ("agents-ended", lambda s: "/agents?tab=ended"),
    ("policy-confirm", lambda s: f"/projects/{s.project}/policy"),
    ("not-found", lambda s: "/no/such/page"),
]
# Pages that answer with an error status on purpose.
EXPECTED_STATUS = {"not-found": 404}


def axe_script() -> str | None:
    named = os.environ.get(AXE_ENV)
    if named:
        return Path(named).read_text(encoding="utf-8")
    try:
        import axe_playwright_python  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text("utf-8")


@pytest.fixture
def axe() -> str | None:
    return axe_script()


def violations(page: Page, script: str) -> list[dict[str, Any]]:
    """axe-core's violations on the page as it is now (evaluated by the browser's
    debugging protocol, which the page's Content-Security-Policy does not govern)."""
    page.evaluate(script)
    found: list[dict[str, Any]] = page.evaluate(
        "axe.run(document, {resultTypes: ['violations']}).then(r => r.violations)"
    )
    return found


def described(found: list[dict[str, Any]]) -> str:
    lines = []
    for violation in found:
        lines.append(f"  {violation['impact']}: {violation['id']}: {violation['help']}")
        for node in violation["nodes"][:5]:
            lines.append(f"      {', '.join(map(str, node['target']))}: {node['html'][:160]}")
    return "\n".join(lines)


@pytest.fixture
def sample(
    server: str, operator: Principal, agent: Callable[..., AgentSession], clock: ManualClock
) -> Sample:
    """A project with something on every page, and something in every list of the home
    page: a review waiting for a human with its context, a lapsed lease with a held
    reservation and an overdue job, lessons and a rule, an import, an artifact."""
    project = work.create_project(operator.api, name="Payments <Service>")
    operator.api.mutate(
        "setProjectPolicy", {"projectId": project, "reviewPolicy": "AGENT_AND_HUMAN"}
    )
    implementer = agent("implementer-agent")
    delivery = deliver(operator.api, implementer.api, project=project,
                       title="Retry failed card payments")  # fmt: skip
    approve_by_new_reviewer(agent("reviewer-agent").api, project, delivery.submission)
    asked = "The refund path changed: please check the double-charge guard."
    request_human_review(implementer.api, delivery.submission, asked)

    runner = agent("runner-agent")
    fixture = jobs.define_resource(operator.api, project, "fixture-db")
    task = work.new_task(operator.api, project, title="Nightly end-to-end run")
    attempt = work.claimed(runner.api, project, task)["attempt"]
    deadline = clock.now() + timedelta(seconds=30)
    job = jobs.registered_job(runner.api, attempt, job_id="nightly-e2e",
                              expectedDeadline=deadline.isoformat())  # fmt: skip
    jobs.observe(runner.api, job)
    jobs.acquire(runner.api, attempt, fixture)
    log = uploaded(server, runner.token, b"collected 40 items\n\n40 passed in 3.2s\n",
                   projectId=project, jobId=job["id"], name="pytest.log",
                   mediaType="text/plain")  # fmt: skip

    lesson = knowledge.published(
        implementer.api, project, "Retry card payments only after checking the charge",
        explanation="The gateway answers 504 while the charge goes through.",
        tags=["stripe>=2023"],
    )
    knowledge.dispute(agent("doubter-agent").api, lesson["id"], reason="idempotent by key now")
    knowledge.revise(operator.api, project, "Never log card numbers", topic="logging",
                     reason="PCI")  # fmt: skip
    answer = post_import(server, operator.token,
                         jsonl([item("t1"), item("t2"), item("bad", priority=5000)]),
                         projectId=project, source="plan.jsonl", partial=True)  # fmt: skip
    assert answer.status_code == 200, answer.text
    work.new_task(operator.api, project, title="Blocked follow-up", prerequisiteIds=[task])

    clock.advance(3600)  # the runner's lease is over; its job still runs past its deadline
    return Sample(project, task, delivery.submission, lesson["id"],
                  answer.json()["report"]["id"], log["id"])  # fmt: skip


def wider(page: Page) -> list[str]:
    """The innermost elements that reach past the right edge of the screen."""
    found: list[str] = page.evaluate(
        """() => {
            const edge = document.documentElement.clientWidth;
            const out = [...document.querySelectorAll('main *')].filter(el =>
                el.getBoundingClientRect().right > edge + 1 &&
                ![...el.children].some(c => c.getBoundingClientRect().right > edge + 1));
            return out.slice(0, 5).map(el => el.tagName.toLowerCase() +
                (el.className ? '.' + el.className : '') + ': ' +
                (el.textContent || '').trim().slice(0, 40));
        }"""
    )
    return found


def check_pages(
    page: Page, sample: Sample, width: str, axe: str | None, screenshots: Path
) -> dict[str, str]:
    """Visits every page; what is wrong with each, by page name."""
    problems: dict[str, str] = {}
    for name, address in PAGES:
        response = page.goto(address(sample))
        assert response is not None
        if response.status != EXPECTED_STATUS.get(name, 200):
            problems[name] = f"answered {response.status}"
            continue
        page.screenshot(path=screenshots / f"a11y-{name}-{width}.png", full_page=True)
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        if overflow > 0:
            problems[name] = f"scrolls sideways by {overflow} px: {wider(page)}"
        if axe is not None:
            found = violations(page, axe)
            if any(violation["impact"] in BLOCKING_IMPACTS for violation in found):
                problems[name] = problems.get(name, "") + "\n" + described(found)
    return problems


@pytest.mark.parametrize("width", list(WIDTHS))
def test_every_page_passes_axe_and_fits_the_screen(
    chromium: Browser, server: str, sample: Sample, width: str, axe: str | None,
    screenshots: Path,
) -> None:
    wide, high = WIDTHS[width]
    context = chromium.new_context(base_url=server, viewport={"width": wide, "height": high})
    context.set_default_timeout(10_000)
    try:
        page = context.new_page()
        page.goto("/login")
        page.screenshot(path=screenshots / f"a11y-login-{width}.png", full_page=True)
        login_problems = violations(page, axe) if axe is not None else []
        sign_in(page)
        expect(page.get_by_role("heading", name="What needs you", level=1)).to_be_visible()
        problems = check_pages(page, sample, width, axe, screenshots)
    finally:
        context.close()
    if any(violation["impact"] in BLOCKING_IMPACTS for violation in login_problems):
        problems["login"] = described(login_problems)
    assert not problems, "\n".join(f"{name}: {what}" for name, what in problems.items())
    if axe is None:
        pytest.skip(
            "axe checks skipped: axe-playwright-python is not installed (make install-dev) "
            f"and {AXE_ENV} names no axe.min.js; widths and keyboard were checked"
        )


def focus_outline(page: Page) -> dict[str, Any]:
    outline: dict[str, Any] = page.evaluate(
        """() => {
            const el = document.activeElement;
            const style = getComputedStyle(el);
            return {tag: el.tagName, text: (el.textContent || '').trim().slice(0, 40),
                    style: style.outlineStyle, width: parseFloat(style.outlineWidth) || 0,
                    visible: el.matches(':focus-visible')};
        }"""
    )
    return outline


def test_the_keyboard_reaches_everything_with_a_visible_focus(
    page: Page, sample: Sample, screenshots: Path
) -> None:
    page.goto("/")
    sign_in(page)
    expect(page.get_by_role("heading", name="What needs you", level=1)).to_be_visible()

    page.keyboard.press("Tab")  # the skip link comes first, and works
    skip = page.get_by_role("link", name="Skip to main content")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()
    page.screenshot(path=screenshots / "a11y-skip-link.png")
    page.keyboard.press("Enter")
    expect(page.locator("main")).to_be_focused()

    # From the main content on, every element Tab reaches shows its focus (the reviews
    # waiting for a human come first on the home page).
    page.keyboard.press("Tab")
    first = focus_outline(page)
    assert first["text"] == "Retry failed card payments", first
    reached = []
    outline = first
    while outline["tag"] != "BODY" and len(reached) < 100:  # on to the page's end
        assert outline["visible"] and outline["style"] != "none" and outline["width"] >= 2, outline
        reached.append(outline["text"])
        page.keyboard.press("Tab")
        outline = focus_outline(page)
    assert "Board of Payments <Service>" in reached  # the projects' table comes after
    assert len(reached) >= 10, reached
    page.screenshot(path=screenshots / "a11y-focus-visible.png")

    # The navigation says where the reader is in words for assistive technology.
    expect(page.get_by_role("navigation", name="Main").get_by_role("link", name="Projects")
           ).to_have_attribute("aria-current", "page")  # fmt: skip
    page.get_by_role("link", name="Payments <Service>").first.click()
    project_nav = page.get_by_role("navigation", name="Pages of Payments <Service>")
    expect(project_nav.get_by_role("link", name="Overview")).to_have_attribute(
        "aria-current", "page"
    )
    project_nav.get_by_role("link", name="Jobs").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Jobs", level=1)).to_be_visible()
    expect(page.get_by_role("navigation", name="Pages of Payments <Service>")
           .get_by_role("link", name="Jobs")).to_have_attribute("aria-current", "page")  # fmt: skip
