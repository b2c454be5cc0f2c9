"""Dashboard sign-ins are kept on the server: the cookie carries only a random secret,
and signing out, revoking the token used to sign in, disabling the principal, idleness
and age end a sign-in for every copy of that cookie. Dashboard forms are CSRF-checked
even when a request carries an `Authorization: Bearer` header."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable

import pytest

from hub.clock import ManualClock
from hub.identity import service as identity
from hub.runtime import Runtime
from hub.settings import Settings
from hub.storage.database import Database
from hub.web.dashboard import SESSION_COOKIE
from tests.conftest import Principal
from tests.support.sql import every_stored_value, fetch_all, fetch_value
from tests.support.workflow import Delivery
from tests.web.conftest import Dashboard
from tests.web.test_review_pages import human_review_status
from tests.web.test_review_pages import waiting_for_human as waiting_for_human  # the fixture


def token_id_of(token: str) -> str:
    return "tok_" + token.split("_")[2]


def cookie_payload(browser: Dashboard) -> dict[str, object]:
    """What the signed cookie says (its signature proves who made it, not secrecy)."""
    value = browser.http.cookies[SESSION_COOKIE]
    data = value.split(".")[0]
    payload: dict[str, object] = json.loads(base64.b64decode(data + "=" * (-len(data) % 4)))
    return payload


def copy_of(browser: Dashboard, dashboard: Callable[[], Dashboard]) -> Dashboard:
    """Another client holding a copy of this browser's cookie, taken now."""
    thief = dashboard()
    thief.http.cookies.set(SESSION_COOKIE, browser.http.cookies[SESSION_COOKIE])
    return thief


def signed_out(response_status: int, location: str | None) -> bool:
    return response_status == 303 and (location or "").startswith("/login")


@pytest.fixture
def person(make_principal: Callable[..., Principal]) -> Principal:
    return make_principal("reviewer-ann", kind="human", password="ann-password")


def test_the_cookie_carries_only_a_random_secret_and_the_server_keeps_its_hash(
    dashboard: Callable[[], Dashboard], person: Principal, database: Database
) -> None:
    browser = dashboard()
    assert browser.login("reviewer-ann", "ann-password").status_code == 303
    payload = cookie_payload(browser)
    assert list(payload) == ["sign_in"]
    secret = payload["sign_in"]
    assert isinstance(secret, str) and len(bytes.fromhex(secret)) * 8 >= 256
    assert person.id not in json.dumps(payload)
    (row,) = fetch_all(database, "SELECT * FROM web_sessions")
    assert row["principal_id"] == person.id
    assert row["secret_hash"] == hashlib.sha256(secret.encode()).hexdigest()
    assert row["ended_at"] is None
    assert [(t, c) for t, c, value in every_stored_value(database) if secret in value] == []


def test_revoking_the_sign_in_token_signs_the_browser_out_and_its_approval_is_not_recorded(
    dashboard: Callable[[], Dashboard],
    person: Principal,
    operator: Principal,
    waiting_for_human: Delivery,
    runtime: Runtime,
) -> None:
    browser = dashboard()
    assert browser.post_form("/login", {"token": person.token}).status_code == 303
    page = f"/submissions/{waiting_for_human.submission}"
    assert browser.get(page).status_code == 200
    form_token = browser.form_token(page)  # the form as the person had it open

    runtime.write(lambda uow: identity.revoke_token(uow, token_id=token_id_of(person.token)))

    posted = browser.http.post(f"{page}/decision", data={
        "csrftoken": form_token, "decision": "APPROVE", "summary": "looks right",
    })
    assert signed_out(posted.status_code, posted.headers.get("location")), posted.text
    assert human_review_status(operator, waiting_for_human.submission)["humanApprovals"] == 0
    response = browser.get(page)
    assert signed_out(response.status_code, response.headers.get("location"))


def test_signing_out_ends_the_sign_in_for_every_copy_of_the_cookie(
    dashboard: Callable[[], Dashboard], person: Principal, database: Database
) -> None:
    browser = dashboard()
    browser.login("reviewer-ann", "ann-password")
    copy = copy_of(browser, dashboard)
    assert copy.get("/").status_code == 200  # the copy works while the sign-in lasts

    assert browser.post_form("/logout", {}, token_from="/").status_code == 303

    response = copy.get("/")
    assert signed_out(response.status_code, response.headers.get("location"))
    (row,) = fetch_all(database, "SELECT ended_at, end_reason FROM web_sessions")
    assert row["ended_at"] is not None and row["end_reason"] == "signed out"


def test_signing_in_again_from_the_same_browser_ends_the_previous_sign_in(
    dashboard: Callable[[], Dashboard], person: Principal
) -> None:
    browser = dashboard()
    browser.login("reviewer-ann", "ann-password")
    before = copy_of(browser, dashboard)
    again = browser.post_form(
        "/login", {"name": "reviewer-ann", "password": "ann-password"}, token_from="/"
    )
    assert again.status_code == 303
    assert browser.get("/").status_code == 200
    response = before.get("/")
    assert signed_out(response.status_code, response.headers.get("location"))


def test_an_idle_sign_in_ends_while_one_in_use_lasts_until_its_maximum_age(
    dashboard: Callable[[], Dashboard], person: Principal, clock: ManualClock, settings: Settings
) -> None:
    idle = settings.web_idle_timeout_seconds
    busy, idler = dashboard(), dashboard()
    busy.login("reviewer-ann", "ann-password")
    idler.login("reviewer-ann", "ann-password")

    clock.advance(idle - 1)
    assert busy.get("/").status_code == 200
    assert idler.get("/").status_code == 200  # just under the timeout: still signed in
    clock.advance(idle - 1)
    assert busy.get("/").status_code == 200
    clock.advance(1)  # the idler did nothing for exactly the timeout: equality is expired
    response = idler.get("/")
    assert signed_out(response.status_code, response.headers.get("location"))

    # In use all along, a sign-in still ends at its maximum age.
    used, step = 2 * (idle - 1) + 1, idle // 2
    while used + step < settings.web_session_max_age_seconds:
        clock.advance(step)
        used += step
        assert busy.get("/").status_code == 200
    clock.advance(settings.web_session_max_age_seconds - used)
    response = busy.get("/")
    assert signed_out(response.status_code, response.headers.get("location"))


def test_last_seen_is_written_at_most_once_a_minute(
    dashboard: Callable[[], Dashboard], person: Principal, clock: ManualClock, database: Database
) -> None:
    browser = dashboard()
    browser.login("reviewer-ann", "ann-password")
    signed_in_at = clock.now()

    def last_seen() -> object:
        return fetch_value(database, "SELECT last_seen_at FROM web_sessions")

    first = last_seen()
    for _ in range(3):
        clock.advance(15)
        assert browser.get("/").status_code == 200
    assert last_seen() == first  # page views within the minute wrote nothing
    clock.advance(15)  # a minute since signing in
    assert browser.get("/").status_code == 200
    assert (clock.now() - signed_in_at).total_seconds() == 60
    assert last_seen() != first


def test_disabling_the_principal_signs_all_its_browsers_out(
    dashboard: Callable[[], Dashboard], person: Principal, runtime: Runtime, database: Database
) -> None:
    by_password, by_token = dashboard(), dashboard()
    by_password.login("reviewer-ann", "ann-password")
    by_token.post_form("/login", {"token": person.token})

    runtime.write(lambda uow: identity.disable_principal(uow, principal=person.id))

    for browser in (by_password, by_token):
        response = browser.get("/")
        assert signed_out(response.status_code, response.headers.get("location"))
    reasons = [row["end_reason"] for row in fetch_all(database, "SELECT * FROM web_sessions")]
    assert reasons == ["principal disabled", "principal disabled"]


def test_a_bearer_header_does_not_skip_the_csrf_check_of_a_dashboard_form(
    dashboard: Callable[[], Dashboard],
    person: Principal,
    operator: Principal,
    waiting_for_human: Delivery,
) -> None:
    browser = dashboard()
    browser.login("reviewer-ann", "ann-password")
    refused = browser.http.post(
        f"/submissions/{waiting_for_human.submission}/decision",
        data={"decision": "APPROVE", "summary": "looks right"},
        headers={"Authorization": "Bearer x"},
    )
    assert refused.status_code == 403
    assert "Form expired" in refused.text
    assert human_review_status(operator, waiting_for_human.submission)["humanApprovals"] == 0

    for bearer in ("Bearer x", f"Bearer {person.token}"):
        logout = browser.http.post("/logout", data={}, headers={"Authorization": bearer})
        assert logout.status_code == 403
    assert browser.get("/").status_code == 200  # still signed in: nothing happened
