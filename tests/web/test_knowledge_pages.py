"""The knowledge pages, read by a signed-in person: a project's lessons and the search
over them (a search is a link), a lesson with its versions, disputes and supersession,
and a project's binding rules with their revisions and delegations (docs/design.md,
"Knowledge"; docs/architecture.md, "The dashboard")."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest

from hub.web import knowledge as knowledge_pages
from tests.conftest import AgentSession, Principal
from tests.support import knowledge, work
from tests.support.workflow import deliver
from tests.web.conftest import Dashboard
from tests.web.test_review_pages import text_of


@pytest.fixture
def signed_in(dashboard: Callable[[], Dashboard], operator: Principal) -> Dashboard:
    browser = dashboard()
    assert browser.login().status_code == 303
    return browser


@dataclass
class Library:
    """Two projects' lessons: a corrected and disputed one, one superseded by another,
    one of the other project, one learnt in a submission."""

    here: str
    there: str
    migrations: dict[str, Any]  # corrected to version 2, disputed
    dispute: dict[str, Any]
    reversible: dict[str, Any]  # of the other project
    by_hand: dict[str, Any]  # superseded by `nightly`
    nightly: dict[str, Any]
    learnt: dict[str, Any]  # from a submission
    submission: str
    author: AgentSession
    doubter: AgentSession


@pytest.fixture
def library(operator: Principal, agent: Callable[..., AgentSession]) -> Library:
    here = work.create_project(operator.api, "Billing")
    there = work.create_project(operator.api, "Common")
    author, doubter = agent("author-agent"), agent("doubter-agent")
    migrations = knowledge.published(
        author.api, here, "Run the migrations before the API tests",
        explanation="The API tests read tables the migrations create.",
        tags=["alembic", "postgres>=15"], evidence=["https://ci.example/runs/7"],
    )
    migrations = knowledge.correct(
        author.api, migrations, reason="name the command",
        statement="Run `alembic upgrade head` before the API migrations tests",
    )["lesson"]
    opened = knowledge.dispute(
        doubter.api, migrations["id"], reason="The fixture migrates on its own since March",
        evidence=["tests/conftest.py"],
    )
    reversible = knowledge.published(author.api, there, "Migrations must stay reversible")
    by_hand = knowledge.published(author.api, here, "Reset the staging database by hand")
    nightly = knowledge.published(author.api, here, "The staging database resets nightly")
    assert knowledge.supersede(author.api, by_hand["id"], nightly["id"], "it is automatic now")[
        "__typename"
    ] == "LessonPayload"
    delivery = deliver(operator.api, author.api, project=here, title="Speed up invoices")
    learnt = knowledge.published(
        author.api, here, "Invoice totals are cached per customer",
        submissionId=delivery.submission,
    )
    assert knowledge.rate(doubter.api, learnt["id"], useful=True)["__typename"] == (
        "RateLessonPayload"
    )
    return Library(
        here, there, migrations, opened["dispute"], reversible, by_hand, nightly, learnt,
        delivery.submission, author, doubter,
    )


def lesson_item(page: str, lesson_id: str) -> str:
    """A listed lesson's markup, up to the next lesson or the list's end."""
    found = re.search(
        rf'<li class="lesson[^"]*" id="lesson-{lesson_id}">(.*?)(?=<li class="lesson|</ol>)',
        page, re.S,
    )
    assert found, f"{lesson_id} is not listed"
    return found.group(1)


def listed(page: str) -> list[str]:
    return re.findall(r'<li class="lesson[^"]*" id="lesson-(lsn_\w+)">', page)


def test_a_search_is_a_link_and_marks_cross_project_and_disputed_lessons(
    signed_in: Dashboard, library: Library
) -> None:
    address = f"/projects/{library.here}/knowledge?q=migrations&scope=all"
    page = signed_in.get(address)
    assert page.status_code == 200
    assert set(listed(page.text)) == {library.migrations["id"], library.reversible["id"]}
    # The form shows the search it ran.
    assert 'name="q" value="migrations"' in page.text
    assert 'name="scope" value="all" checked' in page.text

    mine = lesson_item(page.text, library.migrations["id"])
    assert f'href="/lessons/{library.migrations["id"]}"' in mine
    assert re.search(r"#[12] ", text_of(mine)) and "version 2" in text_of(mine)
    assert "Disputed" in mine and "from project" not in mine
    assert f"Disputed ({library.dispute['id']}, version 2): The fixture migrates on its own" in (
        text_of(mine)
    )
    assert f'href="/lessons/{library.migrations["id"]}#dispute-{library.dispute["id"]}"' in mine

    theirs = lesson_item(page.text, library.reversible["id"])
    assert "from project Common" in text_of(theirs)
    assert f'href="/projects/{library.there}"' in theirs
    assert "Disputed" not in theirs

    # The project's own lessons only, and tags as a comma list or repeated.
    own = signed_in.get(f"/projects/{library.here}/knowledge?q=migrations")
    assert listed(own.text) == [library.migrations["id"]]
    for tags in ("tag=postgres%3D%3D16,alembic", "tag=postgres%3D%3D16&tag=alembic"):
        tagged = signed_in.get(f"/projects/{library.here}/knowledge?{tags}")
        assert tagged.status_code == 200, tagged.text
        assert listed(tagged.text) == [library.migrations["id"]]
        assert 'name="tag" value="postgres==16, alembic"' in tagged.text
    ranged = signed_in.get(
        f"/projects/{library.here}/knowledge?tag={quote('postgres>=16, <18, pytest')}"
    )
    assert listed(ranged.text) == [library.migrations["id"]], ranged.text


def test_search_results_come_a_page_at_a_time(
    signed_in: Dashboard, library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(knowledge_pages, "LESSONS_PER_PAGE", 1)
    first = signed_in.get(f"/projects/{library.here}/knowledge?q=migrations&scope=all")
    assert len(listed(first.text)) == 1 and "#1" in text_of(first.text)
    following = re.search(r'href="([^"]+)">Next page', first.text)
    assert following, first.text
    assert html.unescape(following.group(1)) == (
        f"/projects/{library.here}/knowledge?q=migrations&scope=all&after=1"
    )
    second = signed_in.get(html.unescape(following.group(1)))
    assert set(listed(first.text) + listed(second.text)) == {
        library.migrations["id"], library.reversible["id"]
    }
    assert "#2" in text_of(second.text)
    assert "Next page" not in second.text and "First page" in second.text


def test_a_superseded_lesson_is_marked_and_links_to_its_successor(
    signed_in: Dashboard, library: Library
) -> None:
    page = signed_in.get(f"/projects/{library.here}/knowledge?q=staging+database")
    # The lesson that replaces it comes first.
    assert listed(page.text) == [library.nightly["id"], library.by_hand["id"]]
    old = lesson_item(page.text, library.by_hand["id"])
    assert "Superseded" in old
    assert "Superseded by The staging database resets nightly" in text_of(old)
    assert f'href="/lessons/{library.nightly["id"]}"' in old
    assert "Superseded" not in lesson_item(page.text, library.nightly["id"])


def test_without_a_search_the_page_lists_the_newest_current_lessons(
    signed_in: Dashboard, library: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = signed_in.get(f"/projects/{library.here}/knowledge")
    assert page.status_code == 200
    assert "Newest current lessons" in page.text
    newest = [library.learnt["id"], library.nightly["id"], library.migrations["id"]]
    assert listed(page.text) == newest  # not the superseded one, nor another project's
    assert "Disputed" in lesson_item(page.text, library.migrations["id"])

    monkeypatch.setattr(knowledge_pages, "LESSONS_PER_PAGE", 2)
    first = signed_in.get(f"/projects/{library.here}/knowledge")
    following = re.search(r'href="([^"]+)">Next page', first.text)
    assert following, first.text
    rest = signed_in.get(html.unescape(following.group(1)))
    assert listed(first.text) + listed(rest.text) == newest


def test_the_project_page_links_its_knowledge_and_rules(
    signed_in: Dashboard, library: Library
) -> None:
    page = signed_in.get(f"/projects/{library.here}").text
    assert f'href="/projects/{library.here}/knowledge">Knowledge</a>' in page
    assert f'href="/projects/{library.here}/rules">Rules</a>' in page


def test_the_lesson_page_shows_every_version_its_disputes_and_source(
    signed_in: Dashboard, library: Library, operator: Principal
) -> None:
    lesson_id = library.migrations["id"]
    page = signed_in.get(f"/lessons/{lesson_id}")
    assert page.status_code == 200
    text = text_of(page.text)
    assert "Run `alembic upgrade head` before the API migrations tests" in page.text
    assert "The API tests read tables the migrations create." in text
    # Both versions, newest first, each with its author; the first as it was written.
    versions = re.findall(r'<li class="version" id="version-(\d+)">(.*?)</li>', page.text, re.S)
    assert [number for number, _ in versions] == ["2", "1"]
    assert "Why it was corrected: name the command" in text_of(versions[0][1])
    assert "Statement: Run the migrations before the API tests" in text_of(versions[1][1])
    assert "by author-agent" in text_of(versions[1][1])
    assert '<a href="https://ci.example/runs/7" rel="noopener noreferrer">' in page.text
    for tag in ("alembic", "postgres&gt;=15"):
        assert f"<code>{tag}</code>" in page.text
    # The open dispute: its reason, evidence and state; the page marks the lesson.
    dispute = re.search(
        rf'<li class="dispute dispute-open" id="dispute-{library.dispute["id"]}">(.*?)</li>',
        page.text, re.S,
    )
    assert dispute, page.text
    assert "OPEN" in dispute.group(1)
    assert "raised by doubter-agent" in text_of(dispute.group(1))
    assert "The fixture migrates on its own since March" in dispute.group(1)
    assert "<code>tests/conftest.py</code>" in dispute.group(1)
    assert "Open: not resolved yet." in text_of(dispute.group(1))
    assert 'id="disputed-notice"' in page.text
    assert f'href="/projects/{library.here}">Billing</a>' in page.text

    # Closed, it says how, by whom and why.
    closed = knowledge.resolve(operator.api, library.dispute["id"], "DISMISSED", "still needed")
    assert closed["__typename"] == "DisputePayload", closed
    after = signed_in.get(f"/lessons/{lesson_id}").text
    assert "Closed as DISMISSED by operator" in text_of(after)
    assert "still needed" in after and 'id="disputed-notice"' not in after


def test_the_lesson_page_links_its_submission_and_votes(
    signed_in: Dashboard, library: Library
) -> None:
    page = signed_in.get(f"/lessons/{library.learnt['id']}").text
    text = text_of(page)
    assert f'<a href="/submissions/{library.submission}"><code>{library.submission}</code></a>' in (
        page
    )
    assert "Speed up invoices" in text
    assert f"Candidate revision {'b' * 40}" in text
    assert "1 useful, 0 not useful" in text


def test_supersession_is_linked_both_ways(signed_in: Dashboard, library: Library) -> None:
    old = signed_in.get(f"/lessons/{library.by_hand['id']}").text
    assert 'id="superseded-notice"' in old
    assert f'href="/lessons/{library.nightly["id"]}">The staging database resets nightly' in old
    assert "it is automatic now" in old
    new = signed_in.get(f"/lessons/{library.nightly['id']}").text
    assert "Supersedes" in new
    assert f'href="/lessons/{library.by_hand["id"]}">Reset the staging database by hand' in new


def test_a_lesson_of_another_project_is_read_by_its_id(
    signed_in: Dashboard, library: Library
) -> None:
    # As the API's `lesson` reads it: lessons are shared across projects.
    page = signed_in.get(f"/lessons/{library.reversible['id']}")
    assert page.status_code == 200
    assert f'href="/projects/{library.there}">Common</a>' in page.text
    assert signed_in.get("/lessons/lsn_01m8nmp6c005mh5pjbptq8ezzg").status_code == 404
    assert signed_in.get("/projects/prj_unknown/knowledge").status_code == 404
    assert signed_in.get("/projects/prj_unknown/rules").status_code == 404


def test_the_rules_page_shows_each_rule_its_revisions_and_the_delegations(
    signed_in: Dashboard, operator: Principal, agent: Callable[..., AgentSession]
) -> None:
    project = work.create_project(operator.api, "Ledger")
    made = knowledge.revise(
        operator.api, project, "Write reversible migrations", topic="migrations",
        reason="agreed in review",
    )["rule"]
    work.set_policy(operator.api, project, agentsMayReviseRules=True)
    reviser, former = agent("rule-agent"), agent("former-agent")
    granted = knowledge.grant(operator.api, project, principalId=reviser.principal.id,
                              note="owns the schema")["delegation"]
    gone = knowledge.grant(operator.api, project, principalId=former.principal.id)["delegation"]
    assert knowledge.revoke(operator.api, gone["id"], reason="moved on")["delegation"]["revokedBy"]
    revised = knowledge.revise(
        reviser.api, project, "Write reversible migrations; test the downgrade",
        ruleId=made["id"], expectedVersion=1, paths=["migrations/**"], reason="downgrades broke",
    )
    assert revised["__typename"] == "RulePayload", revised
    retired = knowledge.revise(
        operator.api, project, "Squash commits", topic="commits", reason="first try"
    )["rule"]
    knowledge.revise(operator.api, project, "Squash commits", ruleId=retired["id"],
                     expectedVersion=1, retired=True, reason="we merge now")

    page = signed_in.get(f"/projects/{project}/rules")
    assert page.status_code == 200
    rule = re.search(rf'<article class="rule" id="rule-{made["id"]}"(.*?)</article>', page.text,
                     re.S)
    assert rule, page.text
    body = rule.group(1)
    assert "Write reversible migrations; test the downgrade" in body
    assert "version 2" in text_of(body) and "<code>migrations/**</code>" in body
    rows = re.findall(r"<tr id=\"rule-\w+-version-(\d+)\">(.*?)</tr>", body, re.S)
    assert [number for number, _ in rows] == ["2", "1"]
    newest, first = (text_of(row) for _, row in rows)
    assert "rule-agent under delegation" in newest
    assert "text changed; paths changed" in newest and "downgrades broke" in newest
    assert "operator as an operator made the rule" in first and "agreed in review" in first
    assert f'href="#delegation-{granted["id"]}"' in body
    # The old text stays readable.
    assert "Version 1 as written Write reversible migrations Paths: —" in first

    retired_rule = re.search(
        rf'<article class="rule rule-retired" id="rule-{retired["id"]}"(.*?)</article>',
        page.text, re.S,
    )
    assert retired_rule and "Retired" in retired_rule.group(1)
    assert "retired it" in text_of(retired_rule.group(1))

    delegations = dict(re.findall(r'<tr id="delegation-(rdl_\w+)">(.*?)</tr>', page.text, re.S))
    active, revoked = text_of(delegations[granted["id"]]), text_of(delegations[gone["id"]])
    assert "owns the schema" in active and "rule-agent" in active
    assert "by operator" in active and "Active" in active
    assert "former-agent" in revoked and "Revoked by operator" in revoked
    assert "moved on" in revoked
    all_agents = knowledge.grant(operator.api, project, allAgents=True)["delegation"]
    again = signed_in.get(f"/projects/{project}/rules").text
    assert "all agents" in text_of(re.findall(
        rf'<tr id="delegation-{all_agents["id"]}">(.*?)</tr>', again, re.S
    )[0])
    assert "policy allows delegation: it does now" in text_of(again)


def test_user_text_is_escaped_on_every_knowledge_page(
    signed_in: Dashboard, operator: Principal, agent: Callable[..., AgentSession]
) -> None:
    project = work.create_project(operator.api, "Escapes")
    someone = agent()
    script = "<script>alert('x')</script>"
    escaped = "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"
    lesson = knowledge.published(
        someone.api, project, f"Quote markup {script}", explanation=script,
        evidence=[script, "javascript:alert(1)"],
    )
    knowledge.dispute(agent().api, lesson["id"], reason=script, evidence=[script])
    knowledge.revise(operator.api, project, script, topic="markup", reason=script)
    pages = [
        f"/projects/{project}/knowledge",
        f"/projects/{project}/knowledge?q=quote+markup",
        f"/projects/{project}/knowledge?q={quote(script)}",
        f"/lessons/{lesson['id']}",
        f"/projects/{project}/rules",
    ]
    for path in pages:
        text = signed_in.get(path).text
        assert "<script>alert" not in text, path
        assert escaped in text, path
    # A `javascript:` reference is text, never a link.
    assert 'href="javascript:' not in signed_in.get(f"/lessons/{lesson['id']}").text


@pytest.mark.parametrize(
    ("search", "message"),
    [
        ('q="*', "has no words to search for"),
        ("q=the+not", "has no words to search for"),
        ("q=", "search with words, tags or both"),
        ("tag=postgres+15", "has a space"),
        ("q=x&scope=everywhere", "'everywhere' is not one of project, all"),
        ("q=x&after=-1", "after: is not a cursor this page issued"),
        ("after=nonsense", "after: is not a cursor this page issued"),
    ],
)
def test_a_refused_search_says_why_beside_the_form(
    signed_in: Dashboard, operator: Principal, search: str, message: str
) -> None:
    project = work.create_project(operator.api)
    page = signed_in.get(f"/projects/{project}/knowledge?{search}")
    assert page.status_code == 400, page.text
    problem = re.search(r'<p class="error" role="alert" id="search-problem">(.*?)</p>',
                        page.text, re.S)
    assert problem, page.text
    assert message in html.unescape(problem.group(1))
    assert '<form class="search-form"' in page.text


def test_signed_out_requests_are_sent_to_sign_in(
    dashboard: Callable[[], Dashboard], library: Library
) -> None:
    stranger = dashboard()
    for path in [
        f"/projects/{library.here}/knowledge?q=migrations",
        f"/lessons/{library.migrations['id']}",
        f"/projects/{library.here}/rules",
    ]:
        response = stranger.get(path)
        assert response.status_code == 303, path
        assert response.headers["location"].startswith("/login?next="), path
        assert library.migrations["statement"] not in response.text
