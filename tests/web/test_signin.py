"""Signing in and out of the dashboard, its cookie session, and CSRF on its forms."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable

import httpx

from hub.runtime import Runtime
from hub.web.dashboard import SESSION_COOKIE
from tests.conftest import Principal
from tests.support.server import serve
from tests.web.conftest import Dashboard


def test_signed_out_visitor_is_sent_to_the_login_page(dashboard: Callable[[], Dashboard]) -> None:
    browser = dashboard()
    assert browser.get("/").status_code == 303
    assert browser.get("/").headers["location"] == "/login"
    response = browser.get("/projects/prj_x?view=all")
    assert response.status_code == 303
    assert response.headers["location"] == "/login?next=%2Fprojects%2Fprj_x%3Fview%3Dall"
    page = browser.get("/login")
    assert page.status_code == 200
    assert '<label for="name">Name</label>' in page.text
    assert '<label for="password">Password</label>' in page.text
    assert '<label for="token">Personal token</label>' in page.text


def test_operator_signs_in_with_password_and_reaches_the_overview(
    dashboard: Callable[[], Dashboard], operator: Principal
) -> None:
    browser = dashboard()
    response = browser.login("operator", "operator-password")
    assert response.status_code == 303
    assert response.headers["location"] == "/"
    cookie = _set_cookie(response.headers.get_list("set-cookie"), SESSION_COOKIE)
    assert "httponly" in cookie.lower()
    assert "samesite=lax" in cookie.lower()
    assert "secure" not in cookie.lower()  # development serves plain HTTP on localhost
    page = browser.get("/")
    assert page.status_code == 200
    assert "Signed in as <strong>operator</strong> (operator)" in page.text


def test_wrong_password_is_refused_without_a_session(
    dashboard: Callable[[], Dashboard], operator: Principal
) -> None:
    browser = dashboard()
    for name, password in [("operator", "not-the-password"), ("nobody", "operator-password")]:
        response = browser.login(name, password)
        assert response.status_code == 401
        # The same words for an unknown name and a wrong password: no name probing.
        assert "Unknown name or wrong password." in response.text
        assert f'value="{name}"' in response.text
        assert SESSION_COOKIE not in browser.http.cookies
    assert browser.get("/").status_code == 303


def test_a_person_signs_in_with_a_personal_token(
    dashboard: Callable[[], Dashboard], make_principal: Callable[..., Principal]
) -> None:
    person = make_principal("reviewer-ann", kind="human")
    browser = dashboard()
    response = browser.post_form("/login", {"token": person.token})
    assert response.status_code == 303
    assert "Signed in as <strong>reviewer-ann</strong>" in browser.get("/").text


def test_agent_and_bad_tokens_cannot_sign_in(
    dashboard: Callable[[], Dashboard], make_principal: Callable[..., Principal]
) -> None:
    robot = make_principal("builder-1", kind="agent")
    browser = dashboard()
    refused = browser.post_form("/login", {"token": robot.token})
    assert refused.status_code == 401
    assert "Only people sign in to the dashboard" in refused.text
    garbage = browser.post_form("/login", {"token": "hub_pat_not-a-real-token"})
    assert garbage.status_code == 401
    assert "unknown, revoked or expired" in garbage.text
    assert browser.get("/").status_code == 303


def test_login_returns_to_the_page_asked_for_but_never_to_another_site(
    dashboard: Callable[[], Dashboard], operator: Principal
) -> None:
    browser = dashboard()
    response = browser.post_form(
        "/login", {"name": "operator", "password": "operator-password", "next": "/projects/prj_1"}
    )
    assert response.headers["location"] == "/projects/prj_1"
    for hostile in ["//evil.example/", "https://evil.example/", "/\\evil.example"]:
        other = dashboard()
        response = other.post_form(
            "/login", {"name": "operator", "password": "operator-password", "next": hostile}
        )
        assert response.headers["location"] == "/", hostile


def test_signing_out_ends_the_session(
    dashboard: Callable[[], Dashboard], operator: Principal
) -> None:
    browser = dashboard()
    browser.login()
    assert browser.get("/").status_code == 200
    response = browser.post_form("/logout", {}, token_from="/")
    assert response.status_code == 303
    assert response.headers["location"] == "/login?signed_out=1"
    assert "You have signed out." in browser.get("/login?signed_out=1").text
    assert browser.get("/").status_code == 303


def test_a_form_post_without_its_csrf_token_is_refused(
    dashboard: Callable[[], Dashboard], operator: Principal
) -> None:
    browser = dashboard()
    browser.login()
    refused = browser.http.post("/logout", data={})
    assert refused.status_code == 403
    assert "Form expired" in refused.text
    # Another browser's token does not match this browser's cookie either.
    stranger = dashboard()
    refused = browser.http.post("/logout", data={"csrftoken": stranger.form_token()})
    assert refused.status_code == 403
    assert browser.get("/").status_code == 200  # still signed in


def test_htmx_requests_may_carry_the_csrf_token_in_a_header(
    dashboard: Callable[[], Dashboard], operator: Principal
) -> None:
    browser = dashboard()
    browser.login()
    page = browser.get("/").text
    found = re.search(r"hx-headers='([^']+)'", page)
    assert found, page
    headers = json.loads(html.unescape(found.group(1)))
    response = browser.http.post("/logout", headers=headers)
    assert response.status_code == 303
    assert browser.get("/").status_code == 303


def test_login_is_csrf_protected_even_before_any_cookie(
    dashboard: Callable[[], Dashboard], operator: Principal
) -> None:
    # Login CSRF: another site must not sign a visitor in as someone else.
    fresh = dashboard()
    response = fresh.http.post("/login", data={"name": "operator", "password": "operator-password"})
    assert response.status_code == 403
    assert SESSION_COOKIE not in fresh.http.cookies


def test_the_api_is_not_behind_the_dashboard_cookie_or_csrf(
    dashboard: Callable[[], Dashboard], operator: Principal
) -> None:
    browser = dashboard()
    browser.login()  # the client now carries session and CSRF cookies
    query = {"query": "{ viewer { principal { name } } }"}
    with_bearer = browser.http.post(
        "/graphql", json=query, headers={"Authorization": f"Bearer {operator.token}"}
    )
    assert with_bearer.status_code == 200
    assert with_bearer.json()["data"]["viewer"]["principal"]["name"] == "operator"
    # The cookie is no API credential: without a bearer token the API says unauthenticated.
    cookie_only = browser.http.post("/graphql", json=query)
    assert cookie_only.status_code == 200
    assert cookie_only.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    for path in ["/healthz", "/readyz", "/metrics"]:
        response = browser.get(path)
        assert response.status_code == 200, path
        assert "set-cookie" not in response.headers, path


def test_cookies_are_secure_outside_development(runtime: Runtime, operator: Principal) -> None:
    production = Runtime(
        runtime.settings.model_copy(update={"environment": "production"}),
        database=runtime.database,
        clock=runtime.clock,
    )
    with serve(production) as base_url, httpx.Client(base_url=base_url) as client:
        page = client.get("/login")
        csrf = _set_cookie(page.headers.get_list("set-cookie"), "csrftoken")
        assert "; secure" in csrf.lower()
        # A Secure cookie is not sent back over this test's plain HTTP: send it by hand.
        token = csrf.split(";", 1)[0].removeprefix("csrftoken=")
        response = client.post(
            "/login",
            data={"csrftoken": token, "name": "operator", "password": "operator-password"},
            headers={"cookie": f"csrftoken={token}"},
        )
        assert response.status_code == 303
        session = _set_cookie(response.headers.get_list("set-cookie"), SESSION_COOKIE)
        assert "; secure" in session.lower()


def _set_cookie(headers: list[str], name: str) -> str:
    matching = [header for header in headers if header.startswith(f"{name}=")]
    assert matching, f"no Set-Cookie for {name} in {headers}"
    return matching[0]
