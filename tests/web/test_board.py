"""The project board (`/projects/{id}/tasks`): groups, cards, filters, pages, live stream.

Every test runs on SQLite and PostgreSQL; lease states move with the ManualClock.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from hub.clock import ManualClock
from hub.storage.database import Database
from tests.conftest import AgentSession, Principal, raw_sql
from tests.support import work, workflow
from tests.support.review import one_of_each_severity
from tests.web.conftest import Dashboard
from tests.web.test_live_events import READ_TIMEOUT, next_event

_SECTION = re.compile(r'<section class="board-group" data-board-group="([a-z_]+)"(.*?)</section>',
                      re.S)
# A card ends where the next begins or its list does (it holds a list of actions itself).
_CARD = re.compile(
    r'<li class="card" id="card-(tsk_[A-Za-z0-9]+)"(.*?)</li>\s*(?=<li class="card"|</ol>)', re.S
)


def groups(page: str) -> dict[str, list[str]]:
    """Each group's card ids, in the order shown."""
    return {
        name: [task_id for task_id, _ in _CARD.findall(body)]
        for name, body in _SECTION.findall(page)
    }


def card(page: str, task_id: str) -> str:
    cards = dict(_CARD.findall(page))
    assert task_id in cards, f"no card {task_id} on the page"
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", cards[task_id])).split())


def count(page: str, group: str) -> int:
    found = re.search(
        rf'data-board-group="{group}".*?<span class="badge" data-count>(\d+)</span>', page, re.S
    )
    assert found, group
    return int(found.group(1))


@pytest.fixture
def signed_in(dashboard: Callable[[], Dashboard], operator: Principal) -> Dashboard:
    browser = dashboard()
    assert browser.login().status_code == 303
    return browser


@pytest.fixture
def project(operator: Principal) -> str:
    return work.create_project(operator.api, "Board project")


def board(browser: Dashboard, project: str, query: str = "") -> str:
    response = browser.get(f"/projects/{project}/tasks{query}")
    assert response.status_code == 200, response.text[:500]
    return response.text


def test_every_task_is_in_its_group_with_every_card_field(
    signed_in: Dashboard,
    operator: Principal,
    agent: Callable[..., AgentSession],
    project: str,
    clock: ManualClock,
) -> None:
    ops = operator.api
    ready = work.new_task(ops, project, title="Write the parser", priority=7)
    blocked = work.new_task(ops, project, title="Ship it", prerequisiteIds=[ready])
    closed = work.new_task(ops, project, title="Old idea")
    assert work.close_task(ops, closed, "REJECTED")["__typename"] == "TaskPayload"
    worker = agent("board-worker", workstation="ws-board")
    held = work.new_task(ops, project, title="Port the lexer", kind="IMPLEMENTATION", priority=3)
    attempt = work.claimed(worker.api, project, held)["attempt"]
    assert work.checkpoint(worker.api, attempt)["__typename"] == "AttemptPayload"
    # Delivered and sent back with four open findings; its review task is done.
    implementer, reviewer = agent("implementer"), agent("reviewer")
    delivered = workflow.deliver(ops, implementer.api, project=project, title="Fix the cache")
    claim = workflow.claim_review(reviewer.api, project)
    reviewed = workflow.review(reviewer.api, claim["attempt"], delivered.submission,
                               decision="REJECT", findings=one_of_each_severity())
    assert reviewed["__typename"] == "ReviewPayload", reviewed
    waiting = workflow.deliver(ops, implementer.api, project=project,
                               repository=delivered.repository, title="Tidy the docs")
    clock.advance(120)

    page = board(signed_in, project)
    found = groups(page)
    # The waiting delivery's review task is ready work too, after the higher priority.
    assert found["ready"][0] == ready and len(found["ready"]) == 2
    assert "REVIEW" in card(page, found["ready"][1])
    assert found["blocked"] == [blocked]
    assert found["closed"] == [closed]
    assert found["in_progress"] == [held]
    assert found["revision_needed"] == [delivered.task]
    assert found["awaiting_review"] == [waiting.task]
    assert found["done_recently"] == [claim["task"]["id"]]
    assert found["recovery_candidates"] == found["awaiting_integration"] == []
    assert count(page, "ready") == 2 and count(page, "recovery_candidates") == 0

    text = card(page, held)
    assert "Port the lexer" in text and "IMPLEMENTATION" in text and "priority 3" in text
    assert f"Held by board-worker · session {worker.session_id} on ws-board" in text
    assert "8 min left" in text  # a 600 s lease, 120 s later
    assert "stale" not in text and "expired" not in text
    assert "Last checkpoint 2 min ago" in text
    assert "Open findings 0" in text
    assert f'href="/tasks/{held}"' in page
    assert "Open findings 4" in card(page, delivered.task)
    assert "Last checkpoint none" in card(page, ready)
    assert "Held by" not in card(page, ready)
    assert 'href="/projects/' + project + '/tasks"' in signed_in.get(f"/projects/{project}").text


def test_the_lease_turns_stale_then_expired_by_coordinator_time(
    signed_in: Dashboard,
    operator: Principal,
    agent: Callable[..., AgentSession],
    project: str,
    clock: ManualClock,
) -> None:
    work.set_policy(operator.api, project, leaseSeconds=3600)
    task = work.new_task(operator.api, project, title="Long job")
    attempt = work.claimed(agent().api, project, task)["attempt"]
    expires = int(clock.now().timestamp() * 1000) + 3600 * 1000

    text = card(board(signed_in, project), task)
    assert "1 h left" in text and "stale" not in text
    assert f'data-expires-at="{expires}"' in board(signed_in, project)

    clock.advance(900)  # the stale-progress threshold: a warning, the lease still runs
    page = board(signed_in, project)
    assert "45 min left stale" in card(page, task)
    assert 'class="lease lease-stale"' in page
    assert f'data-now="{int(clock.now().timestamp() * 1000)}"' in page
    assert groups(page)["in_progress"] == [task]

    work.expire(clock, attempt)
    clock.advance(60)
    page = board(signed_in, project)
    assert groups(page)["in_progress"] == []
    assert groups(page)["recovery_candidates"] == [task]
    assert "ended 1 min ago expired" in card(page, task)
    assert 'class="lease lease-expired"' in page


def test_filters_are_get_parameters_and_nonsense_is_ignored_with_a_notice(
    signed_in: Dashboard,
    operator: Principal,
    agent: Callable[..., AgentSession],
    project: str,
    database: Database,
) -> None:
    ops = operator.api
    parser = work.new_task(ops, project, title="Parser for the config format", kind="GENERAL")
    lexer = work.new_task(ops, project, title="Lexer tokens", kind="IMPLEMENTATION")
    held = work.new_task(ops, project, title="Cache warming", kind="GENERAL")
    worker = agent("filter-worker")
    work.claimed(worker.api, project, held)
    # Labels come with imported tasks; one written directly stands in for an import.
    raw_sql(database,
            "INSERT INTO task_labels (task_id, label, project_id) VALUES (:t, 'auth', :p)",
            t=lexer, p=project)

    def shown(query: str) -> set[str]:
        return {task for ids in groups(board(signed_in, project, query)).values() for task in ids}

    assert shown("") == {parser, lexer, held}
    assert shown("?kind=IMPLEMENTATION") == {lexer}
    assert shown("?kind=implementation&kind=GENERAL") == {parser, lexer, held}
    assert set(groups(board(signed_in, project, "?state=in_progress"))) == {"in_progress"}
    assert shown("?state=ready") == {parser, lexer}
    assert shown("?agent=filter-worker") == {held}
    assert shown("?label=auth") == {lexer}
    assert shown("?q=config+parser") == {parser}
    assert shown("?q=tokens&kind=GENERAL") == set()

    page = board(signed_in, project, "?kind=BANANA&state=sideways&agent=nobody-here&q=the+of"
                                      "&page=-3&label=auth")
    assert {task for ids in groups(page).values() for task in ids} == {lexer}
    notices = html.unescape(page[page.index('id="board-notices"'):])
    for said in ("Ignored kind 'BANANA'", "Ignored state 'sideways'",
                 "Ignored agent 'nobody-here'", "Ignored text search 'the of'",
                 "Ignored page '-3'"):
        assert said in notices, said
    # The form shows what was understood, so the filtered board is its own link.
    assert 'name="label" value="auth"' in page
    assert 'data-query="?label=auth"' in page


def test_each_group_is_paged_on_the_server(
    signed_in: Dashboard, operator: Principal, project: str
) -> None:
    made = [work.new_task(operator.api, project, title=f"Task {n}", priority=n)
            for n in range(25)]
    by_priority = list(reversed(made))
    page = board(signed_in, project)
    assert groups(page)["ready"] == by_priority[:20]
    assert count(page, "ready") == 25
    assert "1\N{EN DASH}20 of 25" in page
    following = re.search(r'href="(\?[^"]*)" rel="next"', page)
    assert following, page
    assert html.unescape(following.group(1)) == "?state=ready&page=2"
    second = board(signed_in, project, "?state=ready&page=2")
    assert groups(second) == {"ready": by_priority[20:]}
    assert "21\N{EN DASH}25 of 25" in second and 'rel="prev"' in second
    assert groups(board(signed_in, project, "?state=ready&page=9")) == {"ready": []}


def test_an_unknown_project_is_the_dashboards_404_page(signed_in: Dashboard) -> None:
    response = signed_in.get("/projects/prj_nothing/tasks")
    assert response.status_code == 404
    assert '<a href="/">' in response.text
    assert signed_in.get("/projects/prj_nothing/tasks/card/tsk_x").status_code == 404


def test_a_card_alone_honours_the_filters(
    signed_in: Dashboard, operator: Principal, project: str
) -> None:
    task = work.new_task(operator.api, project, title="Lonely", kind="GENERAL")
    other = work.create_project(operator.api, "Other project")
    foreign = work.new_task(operator.api, other, title="Not here")
    url = f"/projects/{project}/tasks/card/{task}"
    response = signed_in.get(url)
    assert response.status_code == 200
    assert response.text.strip().startswith(f'<li class="card" id="card-{task}" data-group="ready"')
    assert signed_in.get(url + "?kind=REVIEW").status_code == 204
    assert signed_in.get(url + "?state=closed").status_code == 204
    assert signed_in.get(url + "?kind=NONSENSE").status_code == 200
    assert signed_in.get(f"/projects/{project}/tasks/card/{foreign}").status_code == 404


def test_the_live_stream_names_each_task_an_event_is_about(
    signed_in: Dashboard,
    operator: Principal,
    agent: Callable[..., AgentSession],
    project: str,
) -> None:
    task = work.new_task(operator.api, project, title="Claim me")
    page = board(signed_in, project)
    found = re.search(r'data-live="([^"]+)"', page)
    assert found, page
    with signed_in.http.stream(
        "GET", html.unescape(found.group(1)), headers={"accept": "text/event-stream"},
        timeout=READ_TIMEOUT,
    ) as response:
        assert response.status_code == 200
        work.claimed(agent().api, project, task)
        event: dict[str, Any] = next_event(response.iter_lines())
    assert event["event"] == "task-changed"
    assert event["data"] == task
    moved = signed_in.get(f"/projects/{project}/tasks/card/{task}")
    assert 'data-group="in_progress"' in moved.text


def test_a_finished_task_also_names_the_tasks_waiting_on_it(
    signed_in: Dashboard, operator: Principal, project: str
) -> None:
    first = work.new_task(operator.api, project, title="Prerequisite")
    waiting = work.new_task(operator.api, project, title="Waits", prerequisiteIds=[first])
    assert groups(board(signed_in, project))["blocked"] == [waiting]
    found = re.search(r'data-live="([^"]+)"', board(signed_in, project))
    assert found
    with signed_in.http.stream(
        "GET", html.unescape(found.group(1)), headers={"accept": "text/event-stream"},
        timeout=READ_TIMEOUT,
    ) as response:
        # Closed as done outside hub: it no longer keeps its dependent waiting.
        closed = work.close_task(operator.api, first, "COMPLETED")
        assert closed["__typename"] == "TaskPayload", closed
        lines = response.iter_lines()
        named = [next_event(lines)["data"], next_event(lines)["data"]]
    assert named == [first, waiting]
    moved = signed_in.get(f"/projects/{project}/tasks/card/{waiting}")
    assert 'data-group="ready"' in moved.text


def test_signed_out_viewers_see_no_board(
    dashboard: Callable[[], Dashboard], project: str
) -> None:
    stranger = dashboard()
    assert stranger.get(f"/projects/{project}/tasks").status_code in (302, 303, 307)
    live = stranger.get(f"/projects/{project}/tasks/live",
                        headers={"accept": "text/event-stream"}, timeout=httpx.Timeout(5.0))
    assert live.status_code == 401

