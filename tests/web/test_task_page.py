"""The task page (`/tasks/{id}`) after a real story, and the project's picture.

A task is claimed, its agent checkpoints, runs a job holding a resource and goes
silent; another agent recovers it (a disposition and a note), delivers with evidence,
and a reviewer rejects with findings. Its criteria are revised, it has a parent, a
child, a prerequisite it waited for, a dependent and a link. The page shows each part,
and every id on it is a link.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

import pytest

from hub.clock import ManualClock
from tests.conftest import Principal
from tests.support import jobs, work
from tests.support.workflow import claim_review, deliver, review
from tests.web.conftest import Dashboard
from tests.web.test_review_pages import text_of

HOSTILE = '<script>alert("title")</script>'


@dataclass
class Story:
    project: str
    task: str
    parent: str
    sibling: str  # the parent's other child
    prerequisite: str
    dependent: str
    related: str
    first_attempt: dict[str, Any]
    recovery: dict[str, Any]
    submission: str
    review: str
    findings: list[str]
    job: str
    evidence: str
    reservation: str
    sessions: list[str]
    agents: list[str]


@pytest.fixture
def signed_in(dashboard: Callable[[], Dashboard], operator: Principal) -> Dashboard:
    browser = dashboard()
    assert browser.login().status_code == 303
    return browser


@pytest.fixture
def story(operator: Principal, agent: Any, clock: ManualClock) -> Story:
    api = operator.api
    project = work.create_project(api, name="Payments")
    repository = work.add_repository(api, project)
    parent = work.new_task(api, project, kind="OBJECTIVE", title="Card payments epic")
    sibling = work.new_task(api, project, title="Retry metrics", parentId=parent, required=False)
    prerequisite = work.new_task(api, project, title=HOSTILE)
    # Done outside hub: it no longer keeps the task waiting.
    closed = work.close_task(api, prerequisite, "COMPLETED", note="shipped by hand")
    assert closed["__typename"] == "TaskPayload", closed
    task = work.new_task(
        api, project, kind="IMPLEMENTATION", title="Retry failed card payments",
        outcome="A failed charge is retried <once>.", parentId=parent, required=False,
        prerequisiteIds=[prerequisite],
    )
    dependent = work.new_task(api, project, title="Dunning emails", prerequisiteIds=[task])
    related = work.new_task(api, project, title="Refund flow")
    assert work.link_tasks(api, task, related, "RELATED")["__typename"] == "TaskPayload"
    revised = api.mutate(
        "editTask",
        {"taskId": task, "expectedRevision": work.task(api, task)["revision"],
         "acceptanceCriteria": ["retried once", "never charged twice"]},
        "... on TaskPayload { task { criteriaRevision } }",
    )
    assert revised["task"]["criteriaRevision"] == 2, revised

    first_agent, rescuer, reviewer = agent(), agent(), agent()
    attempt = work.claimed(first_agent.api, project, task)["attempt"]
    assert work.checkpoint(first_agent.api, attempt, "halfway", revision="c" * 40,
                           branch="hub/retry", published=True)["__typename"] == "AttemptPayload"
    resource = jobs.define_resource(api, project, "payments-sandbox")
    job = jobs.registered_job(first_agent.api, attempt, job_id="e2e-run")
    reservation = jobs.reserved(first_agent.api, attempt, resource)
    work.expire(clock, attempt)

    recovery = work.recovered(rescuer.api, task)["attempt"]
    work.dispose(rescuer.api, recovery, "RESTART", "the checkpoint was stale")
    note = first_agent.api.mutate(
        "addRecoveryNote",
        {"attemptId": attempt["id"], "note": "I had pushed <wip> to origin"},
        "... on AddRecoveryNotePayload { note { id } }",
    )
    assert note["__typename"] == "AddRecoveryNotePayload", note
    evidence = jobs.record_evidence(rescuer.api, recovery, revision="b" * 40)
    assert evidence["__typename"] == "EvidencePayload", evidence
    delivery = deliver(api, rescuer.api, project, repository, task=task, attempt=recovery)
    claim = claim_review(reviewer.api, project)
    reviewed = review(
        reviewer.api, claim["attempt"], delivery.submission, "REJECT",
        [{"severity": "BLOCKER", "title": "charges <twice>", "remedy": "add an idempotency key"}],
    )
    assert reviewed["__typename"] == "ReviewPayload", reviewed
    return Story(
        project=project, task=task, parent=parent, sibling=sibling, prerequisite=prerequisite,
        dependent=dependent, related=related, first_attempt=attempt, recovery=recovery,
        submission=delivery.submission, review=reviewed["review"]["id"],
        findings=[f["id"] for f in reviewed["review"]["findings"]], job=job["id"],
        evidence=evidence["evidence"]["id"], reservation=reservation,
        sessions=[first_agent.session_id, rescuer.session_id],
        agents=[first_agent.principal.id, rescuer.principal.id, reviewer.principal.id],
    )


def section(page: str, anchor: str) -> str:
    found = re.search(rf'<section[^>]*id="{anchor}"[^>]*>(.*?)</section>', page, flags=re.S)
    assert found, f"no section {anchor}"
    return found.group(1)


def linked(markup: str, href: str) -> bool:
    return f'href="{href}"' in markup


def test_the_task_page_shows_every_part_of_the_story(signed_in: Dashboard, story: Story) -> None:
    response = signed_in.get(f"/tasks/{story.task}")
    assert response.status_code == 200, response.text
    page = response.text
    text = text_of(page)
    assert "<script>alert" not in page  # titles are user text: escaped, in the SVG too
    assert "A failed charge is retried <once>." in text
    # The criteria now, and their history.
    assert "revision 2" in text and "never charged twice" in text
    assert 'id="criteria-1"' in page and "it works" in text

    family = section(page, "family")
    for task in (story.parent, story.prerequisite, story.dependent, story.related):
        assert linked(family, f"/tasks/{task}"), task
    assert "No children." in text_of(family)
    family_text = text_of(family)
    assert "closed" in family_text  # the prerequisite's state, in words
    assert "This task is related to" in family_text

    picture = section(page, "picture")
    assert "<svg" in picture and 'aria-labelledby="graph-' in picture
    # What it waits for (the prerequisite) and what waits for it (the dependent, the parent).
    for task in (story.task, story.parent, story.prerequisite, story.dependent):
        assert linked(picture, f"/tasks/{task}"), task
    assert story.related not in picture  # a link is not a dependency
    assert " style=" not in picture  # the CSP forbids inline style

    attempts = section(page, "attempts")
    for attempt in (story.first_attempt, story.recovery):
        assert f'id="attempt-{attempt["id"]}"' in attempts
    for session in story.sessions:
        assert linked(attempts, f"/agents#session-{session}")
    for agent in story.agents[:2]:
        assert linked(attempts, f"/agents#principal-{agent}")
    attempts_text = text_of(attempts)
    assert "Generation 1" in attempts_text and "Generation 2" in attempts_text
    assert "halfway" in attempts_text  # the checkpoint
    assert "RESTART: the checkpoint was stale" in attempts_text  # the recovery disposition
    first, second = attempts.split('<li class="attempt"')[1:]
    assert story.first_attempt["id"] in first and story.recovery["id"] in second
    assert "I had pushed <wip> to origin" in text_of(first)  # the late agent's note
    assert linked(attempts, f"#attempt-{story.first_attempt['id']}")  # "Recovers …"
    assert linked(attempts, f"/submissions/{story.submission}") or linked(
        attempts, f"#submission-{story.submission}"
    )

    submissions = section(page, "submissions")
    assert linked(submissions, f"/submissions/{story.submission}")
    assert f'id="review-{story.review}"' in submissions
    assert "charges <twice>" in text_of(submissions) and "Rejected" in submissions
    for finding in story.findings:
        assert f'id="finding-{finding}"' in submissions

    records = section(page, "jobs")
    assert linked(records, f"/projects/{story.project}/tasks/{story.task}/jobs#job-{story.job}")
    assert f'id="evidence-{story.evidence}"' in records and "e2e-run" in records
    held = section(page, "reservations")
    assert f'id="reservation-{story.reservation}"' in held and "payments-sandbox" in held

    events = section(page, "events")
    assert "task.created" in events or "task." in events
    assert linked(events, f"#attempt-{story.recovery['id']}")


def test_a_parent_lists_its_children_with_their_states(signed_in: Dashboard, story: Story) -> None:
    family = section(signed_in.get(f"/tasks/{story.parent}").text, "family")
    children = text_of(re.search(r'id="children">(.*?)</div>', family, re.S).group(1))
    assert story.task in children and story.sibling in children
    assert "awaiting review" in children or "revision needed" in children


class IdsInText(HTMLParser):
    """The hub ids a page's main part shows, and those not inside a link."""

    VOID = {"br", "input", "img", "meta", "link", "hr"}

    def __init__(self) -> None:
        super().__init__()
        self.open: list[tuple[str, bool]] = []  # (tag, is a link)
        self.shown: set[str] = set()
        self.unlinked: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in self.VOID:
            self.open.append((tag, tag == "a" and dict(attrs).get("href") is not None))

    def handle_endtag(self, tag: str) -> None:
        while self.open and self.open.pop()[0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        # An id shown as one (free text that mentions one, a path, a reason, is text).
        found = data.strip()
        if re.fullmatch(r"[a-z]{2,4}_[0-9a-z]{26}", found):
            self.shown.add(found)
            if not any(linked for _, linked in self.open):
                self.unlinked.add(found)


def test_every_id_on_the_task_page_is_a_link(signed_in: Dashboard, story: Story) -> None:
    page = signed_in.get(f"/tasks/{story.task}").text
    ids = IdsInText()
    ids.feed(page[page.index("<main"):page.index("</main>")])
    assert {story.task, story.submission, story.review, story.job, story.reservation} <= ids.shown
    assert {story.evidence, *story.sessions, story.recovery["id"], *story.findings} <= ids.shown
    assert ids.unlinked == set()


def test_an_operator_finds_the_task_s_actions_on_its_page(
    signed_in: Dashboard, story: Story
) -> None:
    page = signed_in.get(f"/tasks/{story.related}").text
    actions = page[page.index('class="operator-actions"'):]
    actions = actions[: actions.index("</ul>")]
    # What applies to the task's state is offered, each through its confirmation page.
    assert f'href="/tasks/{story.related}/close?next=' in actions
    assert f"/tasks/{story.related}/reopen" not in actions


def test_an_unknown_task_is_a_404_page_with_a_way_back(signed_in: Dashboard) -> None:
    for missing in ("tsk_00000000000000000000000000", "nonsense", "%3Cscript%3E"):
        response = signed_in.get(f"/tasks/{missing}")
        assert response.status_code == 404, missing
        assert "Not found" in response.text and 'href="/"' in response.text
        assert "Traceback" not in response.text


def test_the_task_page_needs_a_sign_in(dashboard: Any, story: Story) -> None:
    response = dashboard().get(f"/tasks/{story.task}")
    assert response.status_code == 303


def test_the_project_page_draws_the_whole_graph(signed_in: Dashboard, story: Story) -> None:
    page = signed_in.get(f"/projects/{story.project}").text
    picture = section(page, "project-graph")
    assert "<svg" in picture and "<script>alert" not in picture
    for task in (story.task, story.parent, story.sibling, story.prerequisite, story.related):
        assert linked(picture, f"/tasks/{task}"), task


def test_past_the_limit_the_project_page_links_to_the_board(
    signed_in: Dashboard, operator: Principal, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hub.web import tasks as task_pages

    project = work.create_project(operator.api, name="Big")
    for _ in range(3):
        work.new_task(operator.api, project)
    monkeypatch.setattr(task_pages, "PROJECT_GRAPH_LIMIT", 2)
    picture = section(signed_in.get(f"/projects/{project}").text, "project-graph")
    assert "<svg" not in picture
    assert "3 tasks" in text_of(picture)
    assert linked(picture, f"/projects/{project}/tasks")


def test_a_crowded_neighbourhood_is_cut_and_says_so(
    signed_in: Dashboard, operator: Principal, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hub.work import _family

    project = work.create_project(operator.api, name="Crowded")
    hub_task = work.new_task(operator.api, project, title="Shared schema")
    for index in range(5):
        work.new_task(operator.api, project, title=f"User {index}", prerequisiteIds=[hub_task])
    monkeypatch.setattr(_family, "MAX_NEIGHBOURHOOD", 4)
    picture = section(signed_in.get(f"/tasks/{hub_task}").text, "picture")
    svg = picture[picture.index("<svg"):picture.index("</svg>")]
    assert svg.count("<a ") == 4  # the task and three of its five dependents
    assert "2 more tasks left out" in text_of(picture)


def test_every_id_on_the_submission_page_is_a_link(signed_in: Dashboard, story: Story) -> None:
    page = signed_in.get(f"/submissions/{story.submission}").text
    ids = IdsInText()
    ids.feed(page[page.index("<main"):page.index("</main>")])
    # Its attempt, session, evidence and findings, each a link to where it is shown.
    assert {shown.partition("_")[0] for shown in ids.shown} >= {"att", "ses", "evd", "fnd"}
    assert ids.unlinked == set()
