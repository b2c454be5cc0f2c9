"""The home page answers "what needs me": each list filled by a real situation made
through the API, each empty one saying so, and the projects with their tasks by state."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest

from hub.clock import ManualClock
from hub.web import home
from tests.conftest import AgentSession, Principal
from tests.support import jobs, work
from tests.support.review import request_human_review
from tests.support.workflow import (
    approve_by_new_reviewer,
    claim_integration,
    deliver,
    report,
    sha,
)
from tests.web.conftest import Dashboard

SECTIONS = ["reviews", "recoveries", "holds", "integrations", "jobs"]
EMPTY = {
    "reviews": "No review waits for a human.",
    "recoveries": "No task's lease has run out.",
    "holds": "No reservation is held.",
    "integrations": "No integration is uncertain.",
    "jobs": "No open job is past its deadline.",
}


def text_of(markup: str) -> str:
    """What a reader sees: tags dropped, entities decoded, whitespace collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


def section(page: str, name: str) -> str:
    found = re.search(rf'<section class="needs" id="needs-{name}".*?</section>', page, re.S)
    assert found, page
    return found.group(0)


def count(page: str, name: str) -> int:
    found = re.search(r'<span class="count">(\d+)</span>', section(page, name))
    assert found
    return int(found.group(1))


def project_row(page: str, project_id: str) -> list[str]:
    for row in re.findall(r"<tr>(.*?)</tr>", page, flags=re.S):
        if project_id in row:
            return [text_of(cell) for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
    raise AssertionError(f"no row for {project_id}")


@pytest.fixture
def signed_in(dashboard: Callable[[], Dashboard], operator: Principal) -> Dashboard:
    browser = dashboard()
    assert browser.login().status_code == 303
    return browser


def home_page(browser: Dashboard) -> str:
    page = browser.get("/")
    if page.status_code == 303:  # tests move coordinator time past an idle sign-in
        assert browser.login().status_code == 303
        page = browser.get("/")
    assert page.status_code == 200
    return page.text


def test_an_empty_home_page_says_so_in_every_list(signed_in: Dashboard) -> None:
    page = home_page(signed_in)
    assert "<h1>What needs you</h1>" in page
    assert "Nothing waits on a person right now." in page
    for name in SECTIONS:
        assert count(page, name) == 0
        assert EMPTY[name] in text_of(section(page, name))
    assert "There are no projects yet." in page


def test_a_review_waiting_for_a_human_shows_what_the_agent_asked(
    signed_in: Dashboard, operator: Principal, agent: Callable[..., AgentSession],
    clock: ManualClock,
) -> None:
    project = work.create_project(operator.api, name="Billing")
    operator.api.mutate(
        "setProjectPolicy", {"projectId": project, "reviewPolicy": "AGENT_AND_HUMAN"}
    )
    implementer = agent()
    delivery = deliver(operator.api, implementer.api, project=project, title="Retry payments")
    approve_by_new_reviewer(agent().api, project, delivery.submission)
    context = "The refund path changed: check <refunds.py> line 40.\nTwo charges?"
    asked = request_human_review(implementer.api, delivery.submission, context)
    assert asked["__typename"] == "ReviewStatusPayload", asked
    # Stored: the API gives it back as it was sent.
    stored = operator.api(
        "query($s: ID!) { submission(id: $s) { status { humanReviewRequests { context } } } }",
        s=delivery.submission,
    )["submission"]["status"]["humanReviewRequests"]
    assert [request["context"] for request in stored] == [context]
    clock.advance(5400)

    page = home_page(signed_in)
    reviews = section(page, "reviews")
    assert count(page, "reviews") == 1
    shown = text_of(reviews)
    assert "Retry payments" in shown and "Billing" in shown
    assert "waiting 1 h 30 min" in shown
    assert "waiting for a human reviewer (0 of 1 approvals)" in shown
    assert "asked for a human review" in shown
    # The context, escaped and with its line break kept (pre-wrap), never as markup.
    assert "check &lt;refunds.py&gt; line 40.\nTwo charges?" in reviews
    assert "<refunds.py>" not in reviews
    assert f'href="/submissions/{delivery.submission}"' in reviews
    assert f'href="/tasks/{delivery.task}"' in reviews
    assert f'href="/projects/{project}"' in reviews
    assert "1 item</strong> wait" in page

    queue = signed_in.get("/reviews").text
    assert "check &lt;refunds.py&gt; line 40.\nTwo charges?" in queue

    approved = operator.api.mutate(
        "recordHumanReview",
        {"submissionId": delivery.submission, "decision": "APPROVE", "summary": "fine"},
        "... on ReviewPayload { status { approved } }",
    )
    assert approved["status"]["approved"] is True, approved
    assert count(home_page(signed_in), "reviews") == 0


def test_an_agents_request_alone_puts_a_submission_before_a_human(
    signed_in: Dashboard, operator: Principal, agent: Callable[..., AgentSession]
) -> None:
    """Under agent-only review no human is needed, until an agent asks for one."""
    project = work.create_project(operator.api, name="Docs")
    implementer = agent()
    delivery = deliver(operator.api, implementer.api, project=project, title="Reword the FAQ")
    assert count(home_page(signed_in), "reviews") == 0
    request_human_review(implementer.api, delivery.submission, "Is the tone right?")
    page = home_page(signed_in)
    assert count(page, "reviews") == 1
    assert "Is the tone right?" in section(page, "reviews")


def test_a_lapsed_lease_its_held_reservation_and_its_overdue_job_are_listed(
    signed_in: Dashboard, operator: Principal, agent: Callable[..., AgentSession],
    clock: ManualClock,
) -> None:
    project = work.create_project(operator.api, name="Storefront")
    fixture = jobs.define_resource(operator.api, project, "fixture-db")
    runner = agent()
    task_id = work.new_task(operator.api, project, title="Nightly end-to-end")
    attempt = work.claimed(runner.api, project, task_id)["attempt"]
    deadline = clock.now() + timedelta(seconds=30)
    job = jobs.registered_job(
        runner.api, attempt, expectedDeadline=deadline.isoformat(), job_id="nightly-e2e"
    )
    jobs.observe(runner.api, job)
    jobs.acquire(runner.api, attempt, fixture)
    expired = datetime.fromisoformat(attempt["expiresAt"])
    assert expired > deadline
    clock.set(expired + timedelta(minutes=10))  # the lease is over, the job still runs

    page = home_page(signed_in)
    recoveries = section(page, "recoveries")
    assert count(page, "recoveries") == 1
    shown = text_of(recoveries)
    assert "lease ran out" in shown and "Nightly end-to-end" in shown
    assert "Storefront" in shown and "10 min ago" in shown
    assert f'href="/tasks/{task_id}"' in recoveries
    assert f'href="/projects/{project}/tasks"' in recoveries  # the board

    holds = section(page, "holds")
    assert count(page, "holds") == 1
    shown = text_of(holds)
    assert "HELD fixture-db" in shown
    assert job["id"] in shown and "still runs" in shown
    assert f'href="/projects/{project}/resources#resource-{fixture}"' in holds
    assert f'href="/tasks/{task_id}"' in holds

    overdue = section(page, "jobs")
    assert count(page, "jobs") == 1
    shown = text_of(overdue)
    assert "past deadline nightly-e2e" in shown
    assert deadline.strftime("%Y-%m-%d %H:%M:%S UTC") in shown
    assert f'href="/projects/{project}/tasks/{task_id}/jobs#job-{job["id"]}"' in overdue
    assert "3 items</strong> wait" in page

    jobs.finish(runner.api, job, 0)  # the job ends: no hold, nothing overdue
    page = home_page(signed_in)
    assert count(page, "holds") == 0 and count(page, "jobs") == 0
    assert count(page, "recoveries") == 1


def test_an_uncertain_integration_is_listed(
    signed_in: Dashboard, operator: Principal, agent: Callable[..., AgentSession]
) -> None:
    project = work.create_project(operator.api, name="Platform")
    operator.api.mutate("setProjectPolicy", {"projectId": project, "reviewPolicy": "NONE"})
    delivery = deliver(operator.api, agent().api, project=project)
    integrator = agent()
    claim = claim_integration(integrator.api, delivery.submission)
    reported = report(integrator.api, claim, "UNCERTAIN", base=sha("a"), result=sha("9"))
    assert reported["__typename"] == "IntegrationPayload", reported

    page = home_page(signed_in)
    integrations = section(page, "integrations")
    assert count(page, "integrations") == 1
    shown = text_of(integrations)
    assert "UNCERTAIN" in shown and "→ main" in shown
    assert sha("b")[:12] in shown and "the target stays reserved" in shown
    assert f'href="/submissions/{delivery.submission}"' in integrations
    assert claim["integration"]["id"] in shown


def test_each_list_shows_its_first_few_and_how_many_in_all(
    signed_in: Dashboard, operator: Principal, agent: Callable[..., AgentSession],
    clock: ManualClock, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(home, "SHOWN", 1)
    project = work.create_project(operator.api)
    first_task = work.new_task(operator.api, project)
    first = work.claimed(agent().api, project, first_task)["attempt"]
    clock.advance(60)
    work.claimed(agent().api, project, work.new_task(operator.api, project))
    clock.set(datetime.fromisoformat(first["expiresAt"]) + timedelta(hours=1))

    page = home_page(signed_in)
    assert count(page, "recoveries") == 2
    recoveries = section(page, "recoveries")
    assert recoveries.count("<li ") == 1
    assert f'id="needs-recovery-{first_task}"' in recoveries  # the longest expired
    assert "Showing 1 of 2." in text_of(recoveries)


def test_projects_count_their_tasks_by_state(
    signed_in: Dashboard, operator: Principal, agent: Callable[..., AgentSession]
) -> None:
    project = work.create_project(operator.api, name="Counted")
    work.new_task(operator.api, project)  # ready
    first = work.new_task(operator.api, project)
    work.new_task(operator.api, project, prerequisiteIds=[first])  # blocked
    work.claimed(agent().api, project, first)  # in progress
    deliver(operator.api, agent().api, project=project)  # awaiting review (AGENT policy)
    other = work.create_project(operator.api, name="Elsewhere")
    work.new_task(operator.api, other)

    page = home_page(signed_in)
    # Ready, in progress, awaiting review, awaiting integration, blocked, done,
    # repositories, events. The delivery's review task is ready work too.
    cells = project_row(page, project)
    assert cells[0].startswith("Counted")
    assert cells[1:7] == ["2", "1", "1", "0", "1", "0"]
    assert project_row(page, other)[1:7] == ["1", "0", "0", "0", "0", "0"]
    assert f'href="/projects/{project}/tasks"' in page  # each project's board
