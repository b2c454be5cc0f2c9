"""Password guessing at the dashboard's sign-in is counted per name and per address, in
the database, and locked out (docs/ops/limits.md, "Sign-in throttling")."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from hub.clock import ManualClock
from hub.identity import service as identity
from hub.identity.views import SYSTEM
from hub.runtime import Runtime
from hub.storage.database import Database
from tests.conftest import issue_principal, runtime_settings
from tests.support.client import Api
from tests.support.server import serve
from tests.web.conftest import Dashboard

if TYPE_CHECKING:
    from tests.conftest import TestDatabase

LOCKED = "Too many sign-in attempts for this name or from this address."


@pytest.fixture
def throttled_runtime(
    test_database: TestDatabase, database: Database, clock: ManualClock, tmp_path: Path
) -> Iterator[Runtime]:
    """Small limits, so a test reaches them in a few attempts (passwords hash slowly)."""
    settings = runtime_settings(
        test_database.url,
        tmp_path,
        login_max_failures_per_account=3,
        login_max_failures_per_address=6,
        login_failure_window_seconds=600,
        login_lockout_seconds=900,
    )
    rt = Runtime(settings, database=database, clock=clock)
    yield rt
    rt.release_threads()


@pytest.fixture
def site(throttled_runtime: Runtime) -> Iterator[str]:
    with serve(throttled_runtime) as url:
        yield url


@pytest.fixture
def person(throttled_runtime: Runtime) -> str:
    throttled_runtime.write(lambda uow: identity.create_principal(
        uow, name="ann", kind="human", password="right-password"
    ))
    return "ann"


class Attempts:
    """Sign-in attempts, each from a browser of its own (a signed-in one skips the form)."""

    def __init__(self, site: str) -> None:
        self.site = site

    def login(self, name: str, password: str) -> httpx.Response:
        return self.post_form("/login", {"name": name, "password": password})

    def post_form(self, path: str, data: dict[str, str]) -> httpx.Response:
        browser = Dashboard(self.site)
        try:
            return browser.post_form(path, data)
        finally:
            browser.close()


def _browser(site: str) -> Attempts:
    return Attempts(site)


def test_a_name_is_locked_out_after_its_failures_whatever_the_password(
    site: str, person: str, clock: ManualClock
) -> None:
    browser = _browser(site)
    for _ in range(3):
        assert browser.login(person, "wrong").status_code == 401
    locked = browser.login(person, "right-password")
    assert locked.status_code == 429
    assert LOCKED in locked.text
    assert locked.headers["Retry-After"] == "900"
    # A name nobody has is locked out the same way: a lockout tells nothing.
    for _ in range(3):  # the third reaches the address's limit (six) too
        assert browser.login("nobody", "wrong").status_code == 401
    assert browser.login("nobody", "wrong").text.count(LOCKED) == 1
    clock.advance(minutes=10)
    assert browser.login(person, "right-password").headers["Retry-After"] == "300"
    clock.advance(minutes=5)
    assert browser.login(person, "right-password").status_code == 303


def test_a_success_clears_the_names_count(site: str, person: str) -> None:
    browser = _browser(site)
    for _ in range(2):
        assert browser.login(person, "wrong").status_code == 401
    assert browser.login(person, "right-password").status_code == 303
    for _ in range(2):
        assert browser.login(person, "wrong").status_code == 401
    # Two, not four, failures counted: the third attempt is still checked.
    assert browser.login(person, "right-password").status_code == 303


def test_an_address_is_locked_out_across_names(site: str, person: str) -> None:
    browser = _browser(site)
    for name in ("a", "b", "c", "d", "e", "f"):
        assert browser.login(name, "wrong").status_code == 401
    # From 127.0.0.1, whatever the name, and for a pasted token too.
    assert browser.login(person, "right-password").status_code == 429
    assert browser.post_form("/login", {"token": "hub_pat_x_y"}).status_code == 429


def test_the_count_lapses_after_its_window(site: str, person: str, clock: ManualClock) -> None:
    browser = _browser(site)
    for _ in range(2):
        assert browser.login(person, "wrong").status_code == 401
    clock.advance(minutes=11)
    for _ in range(2):
        assert browser.login(person, "wrong").status_code == 401
    assert browser.login(person, "right-password").status_code == 303


def test_an_operator_clears_a_lockout_and_no_one_else_can(
    site: str, person: str, throttled_runtime: Runtime
) -> None:
    browser = _browser(site)
    for _ in range(3):
        browser.login(person, "wrong")
    assert browser.login(person, "right-password").status_code == 429

    def token_of(name: str, *, operator: bool) -> str:
        return issue_principal(throttled_runtime, name, "human", operator)[1]

    selection = (
        "... on ClearLoginLockoutPayload { cleared { throttledBy key attempts lockedUntil } }"
    )
    member = Api(site, token_of("member", operator=False))
    refused = member.mutate("clearLoginLockout", {"account": "ANN "}, selection)
    assert refused["__typename"] == "PermissionDenied"
    assert "cannot call clearLoginLockout" in refused["message"]
    member.close()

    boss = Api(site, token_of("boss", operator=True))
    nothing = boss.mutate("clearLoginLockout", {}, selection)
    assert nothing["__typename"] == "ValidationFailed"
    cleared = boss.mutate("clearLoginLockout", {"account": "ANN "}, selection)
    assert cleared["__typename"] == "ClearLoginLockoutPayload", cleared
    [row] = cleared["cleared"]
    assert (row["throttledBy"], row["key"], row["attempts"]) == ("ACCOUNT", "ann", 3)
    assert row["lockedUntil"] is not None
    boss.close()
    assert browser.login(person, "right-password").status_code == 303


def test_the_command_lines_operations_list_and_clear_lockouts(
    site: str, person: str, throttled_runtime: Runtime
) -> None:
    browser = _browser(site)
    for _ in range(3):
        browser.login(person, "wrong")
    [locked] = throttled_runtime.read(identity.login_lockouts)
    assert (locked.throttled_by, locked.key) == ("account", "ann")
    done = throttled_runtime.write(
        lambda uow: identity.clear_login_lockout(uow, SYSTEM, address="127.0.0.1")
    )
    assert [(v.throttled_by, v.attempts) for v in done.cleared] == [("address", 3)]
    assert throttled_runtime.read(identity.login_lockouts) == [locked]
    assert browser.login(person, "right-password").status_code == 429  # the name still is


def test_lapsed_counts_are_pruned(
    site: str, person: str, throttled_runtime: Runtime, clock: ManualClock
) -> None:
    _browser(site).login(person, "wrong")
    assert throttled_runtime.write(identity.prune_login_throttles) == 0
    clock.advance(minutes=11)
    assert throttled_runtime.write(identity.prune_login_throttles) == 2


@pytest.mark.slow
def test_concurrent_guesses_never_get_past_the_limit(
    site: str, person: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twelve threads guess at once: exactly three passwords are checked (the name's
    limit), every other attempt is refused as locked out."""
    checked: list[str] = []
    original = identity.login_with_password

    def counted(uow: object, *, name: str, password: str) -> object:
        checked.append(name)
        return original(uow, name=name, password=password)  # type: ignore[arg-type]

    statuses: list[int] = []
    start = threading.Barrier(12)

    def guess() -> None:
        browser = Dashboard(site)
        try:
            token = browser.form_token()
            start.wait()
            form = {"csrftoken": token, "name": person, "password": "wrong"}
            statuses.append(browser.http.post("/login", data=form).status_code)
        finally:
            browser.close()

    monkeypatch.setattr(identity, "login_with_password", counted)
    threads = [threading.Thread(target=guess) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(checked) == 3
    assert sorted(statuses) == [401] * 3 + [429] * 9


