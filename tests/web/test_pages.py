"""The projects overview and the project page, read by a signed-in operator."""

from __future__ import annotations

import html
import re
from collections.abc import Callable

import pytest

from hub.web import pages
from tests.conftest import Principal
from tests.web.conftest import Dashboard, add_repository, create_project


def _rows(page: str) -> dict[str, list[str]]:
    """The overview table as {project name: [cell texts]}."""
    rows: dict[str, list[str]] = {}
    for row in re.findall(r"<tr>(.*?)</tr>", page, flags=re.S):
        cells = [
            " ".join(html.unescape(re.sub(r"<[^>]+>", " ", cell)).split())
            for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, flags=re.S)
        ]
        if cells and "prj_" in cells[0]:
            rows[cells[0].split(" prj_")[0]] = cells
    return rows


@pytest.fixture
def signed_in(dashboard: Callable[[], Dashboard], operator: Principal) -> Dashboard:
    browser = dashboard()
    assert browser.login().status_code == 303
    return browser


def test_overview_lists_every_project_with_its_counts(
    signed_in: Dashboard, operator: Principal
) -> None:
    web = create_project(operator, "Web shop", aliases=["shop"])
    add_repository(operator, web.id, "git@github.com:acme/shop.git", aliases=["shop-repo"])
    add_repository(operator, web.id, "https://github.com/acme/shop-infra")
    create_project(operator, "Empty project")

    page = signed_in.get("/")
    assert page.status_code == 200
    rows = _rows(page.text)
    # Tasks ready, in progress, awaiting review, awaiting integration, blocked, done;
    # repositories, events so far (tests/web/test_home_page.py counts tasks).
    assert rows["Web shop"][1:] == ["0", "0", "0", "0", "0", "0", "2", "3"]
    assert rows["Empty project"][1:] == ["0", "0", "0", "0", "0", "0", "0", "1"]
    assert "aliases: shop" in rows["Web shop"][0]
    assert f'href="/projects/{web.id}"' in page.text
    assert "2 projects." in page.text


def test_overview_pages_through_many_projects(
    signed_in: Dashboard, operator: Principal, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pages, "PROJECTS_PER_PAGE", 2)
    for name in ["One", "Two", "Three"]:
        create_project(operator, name)
    first = signed_in.get("/")
    assert list(_rows(first.text)) == ["One", "Two"]
    following = re.search(r'href="(/\?after=[^"]+)">Next page', first.text)
    assert following, first.text
    second = signed_in.get(html.unescape(following.group(1)))
    assert list(_rows(second.text)) == ["Three"]
    assert "Next page" not in second.text


def test_project_page_shows_repositories_aliases_policy_and_recent_events(
    signed_in: Dashboard, operator: Principal
) -> None:
    project = create_project(operator, "Billing", aliases=["billing", "bill"])
    add_repository(
        operator, project.id, "git@github.com:acme/billing.git",
        defaultBranch="trunk", aliases=["billing-repo"],
    )
    changed = operator.api.mutate(
        "setProjectPolicy", {"projectId": project.id, "reviewPolicy": "HUMAN"},
        "... on SetProjectPolicyPayload { policy { revision } }",
    )
    assert changed["policy"]["revision"] == 2

    page = signed_in.get(f"/projects/{project.id}")
    assert page.status_code == 200
    text = page.text
    assert "<h1>Billing</h1>" in text
    assert "<code>github.com/acme/billing</code>" in text
    assert "<code>trunk</code>" in text
    for alias in ["billing", "bill", "billing-repo"]:
        assert f"<code>{alias}</code>" in text
    assert "revision 2" in text
    assert "<code>HUMAN</code>" in text
    # Newest first, with who did it; the live stream continues after the newest.
    kinds = re.findall(r'<code class="event-kind">([^<]+)</code>', text)
    assert kinds == ["policy.set", "repository.added", "project.created"]
    assert text.count("by operator") == 3
    assert f'data-live-events="/projects/{project.id}/events/live?after=3"' in text


def test_user_text_is_escaped(signed_in: Dashboard, operator: Principal) -> None:
    project = create_project(operator, "<script>alert('x')</script>")
    for path in ["/", f"/projects/{project.id}"]:
        text = signed_in.get(path).text
        assert "<script>alert" not in text
        assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in text


def test_unknown_project_and_unknown_path_get_the_not_found_page(
    signed_in: Dashboard, dashboard: Callable[[], Dashboard]
) -> None:
    for path in ["/projects/prj_does_not_exist", "/no/such/page"]:
        response = signed_in.get(path)
        assert response.status_code == 404, path
        assert response.headers["content-type"].startswith("text/html")
        assert "<h1>Not found</h1>" in response.text
    # A stranger learns nothing about projects, but unknown addresses are still 404.
    assert dashboard().get("/projects/prj_does_not_exist").status_code == 303
    assert dashboard().get("/no/such/page").status_code == 404


def test_pages_are_private_and_load_only_our_own_scripts(signed_in: Dashboard) -> None:
    page = signed_in.get("/")
    assert page.headers["cache-control"] == "no-store"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"
    assert '<a class="skip-link" href="#main">' in page.text
    assert '<main id="main"' in page.text
    scripts = re.findall(r'<script src="([^"]+)"', page.text)
    assert scripts == ["/static/vendor/htmx-2.0.4.min.js"]
    # HTMX requests carry the CSRF token in a header.
    assert 'hx-headers=\'{"x-csrftoken": "' in page.text
    for asset in [*scripts, "/static/site.css", "/static/live.js"]:
        assert signed_in.get(asset).status_code == 200, asset


def test_dashboard_takes_only_what_the_api_does_not_claim(signed_in: Dashboard) -> None:
    # The API keeps its own answers for its paths, even from a browser with cookies.
    assert signed_in.http.put("/graphql").status_code == 405
    assert signed_in.http.post("/healthz").status_code == 405
    signed_in.get("/projects/prj_unknown")
    metrics = signed_in.get("/metrics").text
    # Dashboard requests are counted by route template, never by raw path.
    assert 'route="/projects/{project_id}",status="404"' in metrics
    assert "prj_unknown" not in metrics


def test_project_page_says_which_approvals_its_review_policy_asks_for(
    signed_in: Dashboard, operator: Principal
) -> None:
    project = create_project(operator, "Agents review")
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", signed_in.get(
        f"/projects/{project.id}"
    ).text)).split())
    # Under AGENT review a human approval is not asked for: never "required 1" beside a
    # submission's "0 of 0 required".
    assert "Agent approvals required 1" in text
    assert "Human approvals required none: AGENT review asks for no human review" in text
