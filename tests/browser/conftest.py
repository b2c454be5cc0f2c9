"""Playwright (sync API) driving the system's Chromium against a real server.

Tests never download a browser. `HUB_TEST_BROWSER` names the executable and makes
these tests mandatory (CI sets it); without it they look for Debian's
`/usr/bin/chromium` and skip, saying why, if it is not there.

Like every test that stores something, each runs on SQLite and on PostgreSQL (the
suite's `backend`): a page reads what its database stored, and a query that one database
plans or orders differently shows on the page. Screenshots go to
`test-output/screenshots/<backend>/`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Response, sync_playwright

BROWSER_ENV = "HUB_TEST_BROWSER"
DEFAULT_BROWSER = "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-output" / "screenshots"
# Headless in a container: no sandbox (no user namespaces) and nothing phoning home.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_executable() -> str:
    path = os.environ.get(BROWSER_ENV, DEFAULT_BROWSER)
    if Path(path).is_file() and os.access(path, os.X_OK):
        return path
    if BROWSER_ENV in os.environ:
        pytest.fail(f"{BROWSER_ENV}={path} is set but is not an executable file")
    pytest.skip(
        f"browser tests skipped: no Chromium at {DEFAULT_BROWSER} "
        f"(apt-get install chromium, or set {BROWSER_ENV} to a Chromium executable)"
    )


@pytest.fixture
def chromium() -> Iterator[Browser]:
    executable = chromium_executable()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def screenshots(backend: str) -> Path:
    folder = SCREENSHOTS / backend
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def page(chromium: Browser, server: str) -> Iterator[Page]:
    """A fresh browser profile on the test server; fails the test on any page error."""
    context = chromium.new_context(base_url=server, viewport={"width": 1280, "height": 900})
    context.set_default_timeout(10_000)
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    # Network failures are checked by URL below; other console errors (a CSP refusal,
    # a script error) are problems.
    page.on(
        "console",
        lambda message: problems.append(f"console {message.type}: {message.text}")
        if message.type == "error" and not message.text.startswith("Failed to load resource")
        else None,
    )
    # A refused login answers 401 on purpose; any other failing request is a problem.
    def check_response(response: Response) -> None:
        if response.status >= 400 and not response.url.endswith("/login"):
            problems.append(f"{response.status} {response.request.method} {response.url}")

    page.on("response", check_response)
    try:
        yield page
    finally:
        context.close()
    # CSP refusals and script errors show up here, not as failed assertions.
    assert not problems, problems
