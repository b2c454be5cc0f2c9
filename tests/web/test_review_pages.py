"""Scenario 11 (docs/scenarios.md) on the dashboard: the review queue, the submission
page, the human decision.

Policy `AGENT_AND_HUMAN`: an independent agent has approved, so the task waits for a
human, with that reason, until a signed-in person approves the same current submission
through the form (CSRF-protected, POST-redirect-GET).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from hub.clock import ManualClock
from hub.settings import Settings
from tests.conftest import AgentSession, Principal
from tests.support import work
from tests.support.workflow import (
    Delivery,
    approve_by_new_reviewer,
    claim_review,
    deliver,
    review,
    sha,
    take_to_done,
)
from tests.web.conftest import Dashboard

WAITING_FOR_HUMAN = "waiting for a human reviewer (0 of 1 approvals)"


def text_of(markup: str) -> str:
    """What a reader sees: tags dropped, entities decoded, whitespace collapsed."""
    inline = re.sub(r"</?(?:a|code|strong|span|time)\b[^>]*>", "", markup)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", inline)).split())


def queue_row(page: str, submission: str) -> str | None:
    found = re.search(rf'<tr id="queue-{submission}"[^>]*>(.*?)</tr>', page, flags=re.S)
    return text_of(found.group(0)) if found else None


def human_review_status(operator: Principal, submission: str) -> dict[str, Any]:
    status: dict[str, Any] = operator.api(
        "query($s: ID!) { submission(id: $s) { status { humanApprovals approved rejected"
        " waitingReason } } }",
        s=submission,
    )["submission"]["status"]
    return status


@pytest.fixture
def signed_in(dashboard: Callable[[], Dashboard], operator: Principal) -> Dashboard:
    browser = dashboard()
    assert browser.login().status_code == 303
    return browser


@pytest.fixture
def waiting_for_human(
    operator: Principal, agent: Callable[..., AgentSession]
) -> Delivery:
    """A delivered implementation an independent agent approved, now waiting for a human."""
    project = work.create_project(operator.api, name="Billing")
    operator.api.mutate(
        "setProjectPolicy", {"projectId": project, "reviewPolicy": "AGENT_AND_HUMAN"}
    )
    delivery = deliver(
        operator.api, agent().api, project=project, title="Retry failed card payments <safely>"
    )
    approve_by_new_reviewer(agent().api, project, delivery.submission)
    return delivery


def test_queue_shows_what_waits_since_when_and_why(
    signed_in: Dashboard, waiting_for_human: Delivery
) -> None:
    overview = signed_in.get("/")
    assert 'href="/reviews"' in overview.text  # reachable from the nav and the overview

    page = signed_in.get("/reviews")
    assert page.status_code == 200
    row = queue_row(page.text, waiting_for_human.submission)
    assert row is not None, page.text
    assert "Retry failed card payments <safely>" in row
    assert "Billing" in row
    assert waiting_for_human.submission in row
    assert sha("b")[:12] in row  # the candidate revision
    assert WAITING_FOR_HUMAN in row
    assert "agent 1/1 · human 0/1" in row
    assert "0 s since 2026-01-01 12:00:00 UTC" in row  # coordinator time, relative and absolute
    assert "Escalated" not in row
    assert f'href="/submissions/{waiting_for_human.submission}"' in page.text


def test_queue_flags_a_submission_waiting_past_the_warning_threshold(
    signed_in: Dashboard, waiting_for_human: Delivery, clock: ManualClock, settings: Settings
) -> None:
    clock.advance(settings.review_wait_warning_seconds - 60)
    # A day later the reviewer signs in again (an idle sign-in does not last a day).
    assert signed_in.login().status_code == 303
    row = queue_row(signed_in.get("/reviews").text, waiting_for_human.submission)
    assert row is not None and "Escalated" not in row
    assert "23 h 59 min" in row

    clock.advance(60)
    page = signed_in.get("/reviews").text
    row = queue_row(page, waiting_for_human.submission)
    assert row is not None
    assert row.startswith("⚠ Escalated")  # said in words, not by colour alone
    assert WAITING_FOR_HUMAN in row  # escalation never weakens the policy
    assert "1 d" in row
    assert f'<tr id="queue-{waiting_for_human.submission}" class="escalated">' in page
    assert "1 escalated" in text_of(page)


def test_submission_page_shows_the_candidate_and_what_reviewers_found(
    signed_in: Dashboard,
    operator: Principal,
    agent: Callable[..., AgentSession],
) -> None:
    project = work.create_project(operator.api, name="Billing")
    operator.api.mutate(
        "setProjectPolicy", {"projectId": project, "reviewPolicy": "AGENT_AND_HUMAN"}
    )
    delivery = deliver(
        operator.api, agent().api, project=project, title="Retry <b>card</b> payments",
        acceptanceCriteria=["a failed charge is retried once", "no double charge"],
    )
    reviewer = agent()
    claim = claim_review(reviewer.api, project)
    reviewed = review(
        reviewer.api, claim["attempt"], delivery.submission, "APPROVE",
        [{"severity": "NOTE", "title": "log line is noisy", "remedy": "lower it to debug"}],
    )
    assert reviewed["__typename"] == "ReviewPayload", reviewed
    task = work.task(operator.api, delivery.task)
    edited = operator.api.mutate(
        "editTask",
        {"taskId": delivery.task, "expectedRevision": task["revision"],
         "acceptanceCriteria": ["a failed charge is retried once", "no double charge", "audited"]},
        "... on TaskPayload { task { criteriaRevision } }",
    )
    # Under review, the criteria it is judged against cannot change under it.
    assert edited["__typename"] == "InvalidTransition", edited

    page = signed_in.get(f"/submissions/{delivery.submission}")
    assert page.status_code == 200
    text = text_of(page.text)
    assert "<b>card</b>" not in page.text  # agents' text is escaped
    assert "Retry <b>card</b> payments" in text
    assert f"Submission {delivery.submission} of IMPLEMENTATION task {delivery.task}" in text
    assert "Waiting for a human reviewer (0 of 1 approvals)" in text  # why, in words
    assert "Review policy (pinned revision 2) AGENT_AND_HUMAN" in text
    assert "Agent approvals 1 of 1 required" in text
    assert "Human approvals 0 of 1 required" in text
    assert f"Candidate revision {sha('b')}" in text
    assert "Criteria revision used 1" in text
    assert "Policy revision pinned 2 (AGENT_AND_HUMAN)" in text
    assert "the criteria have changed since" not in text
    assert "audited" not in text
    assert "Handoff ready" in text and "Result done" in text
    assert f"progress {sha('b')} hub/{delivery.task[-6:]} Published" in text
    assert "Approved agent review by " + reviewer.principal.name in text
    assert "NOTE log line is noisy" in text and "Remedy: lower it to debug" in text
    assert "Evidence inspected: ran the tests locally" in text
    assert f'action="/submissions/{delivery.submission}/decision#decision"' in page.text
    assert 'name="csrftoken"' in page.text

    assert signed_in.get("/submissions/sub_does_not_exist").status_code == 404


def test_decision_form_without_its_csrf_token_is_refused(
    signed_in: Dashboard, operator: Principal, waiting_for_human: Delivery
) -> None:
    refused = signed_in.http.post(
        f"/submissions/{waiting_for_human.submission}/decision",
        data={"decision": "APPROVE", "summary": "looks right"},
    )
    assert refused.status_code == 403
    assert "Form expired" in refused.text
    assert human_review_status(operator, waiting_for_human.submission)["humanApprovals"] == 0
    assert work.task(operator.api, waiting_for_human.task)["state"] == "AWAITING_REVIEW"


def test_human_approves_through_the_form_and_the_task_moves_to_integration(
    signed_in: Dashboard, operator: Principal, waiting_for_human: Delivery
) -> None:
    path = f"/submissions/{waiting_for_human.submission}"
    note = {"findings-0-severity": "NOTE", "findings-0-title": "retry delay is fixed",
            "findings-0-remedy": "consider backoff later"}
    # Without JavaScript, "Add another finding" posts the form back: nothing is recorded,
    # the values stay, and a second fieldset appears.
    more = signed_in.post_form(
        f"{path}/decision",
        {"intent": "add-finding", "decision": "APPROVE", "summary": "read it", **note},
        token_from=path,
    )
    assert more.status_code == 200
    assert 'id="finding-1-title"' in more.text
    assert 'value="retry delay is fixed"' in more.text
    assert human_review_status(operator, waiting_for_human.submission)["humanApprovals"] == 0

    done = signed_in.post_form(
        f"{path}/decision",
        {"decision": "APPROVE", "summary": "read the diff and the CI run", **note,
         "findings-1-severity": "", "findings-1-title": "", "findings-1-remedy": "",
         "evidence": "https://ci.example.com/runs/42\nlocal: pytest -k retry"},
        token_from=path,
    )
    assert done.status_code == 303, done.text
    location = done.headers["location"]
    assert re.fullmatch(rf"{path}\?recorded=rev_\w+#review-status", location), location

    shown = signed_in.get(location)
    text = text_of(shown.text)
    assert "Your decision was recorded: approved" in text and "1 finding" in text
    assert "Approved: ready for integration" in text
    assert "Human approvals 1 of 1 required" in text
    assert "Task state AWAITING_INTEGRATION" in text
    assert "human review by operator" in text
    assert "NOTE retry delay is fixed" in text
    assert '<a href="https://ci.example.com/runs/42" rel="noopener noreferrer">' in shown.text
    # Settled: no second decision is offered.
    assert "No decision to record here." in text
    assert "/decision" not in shown.text
    assert work.task(operator.api, waiting_for_human.task)["state"] == "AWAITING_INTEGRATION"
    assert queue_row(signed_in.get("/reviews").text, waiting_for_human.submission) is None


def test_rejection_without_findings_shows_the_reason_and_changes_nothing(
    signed_in: Dashboard, operator: Principal, waiting_for_human: Delivery
) -> None:
    path = f"/submissions/{waiting_for_human.submission}"
    refused = signed_in.post_form(
        f"{path}/decision", {"decision": "REJECT", "summary": "not like this"}, token_from=path
    )
    assert refused.status_code == 422
    alert = re.search(r'<p class="error" role="alert" id="decision-error">(.*?)</p>',
                      refused.text, flags=re.S)
    assert alert, refused.text
    assert "Findings: a rejection names at least one finding" in text_of(alert.group(1))
    assert "not like this</textarea>" in refused.text  # what was typed is kept
    assert 'value="REJECT" checked' in refused.text

    # A finding without a remedy: the refusal points at that field.
    half = signed_in.post_form(
        f"{path}/decision",
        {"decision": "REJECT", "summary": "not like this", "findings-0-severity": "",
         "findings-0-title": "", "findings-1-severity": "MAJOR",
         "findings-1-title": "charges twice on timeout", "findings-1-remedy": ""},
        token_from=path,
    )
    assert half.status_code == 422
    assert "Finding 2, remedy: must not be empty" in text_of(half.text)
    remedy = re.search(r'<textarea id="finding-1-remedy"[^>]*>', half.text)
    assert remedy and 'aria-invalid="true"' in remedy.group(0)

    status = human_review_status(operator, waiting_for_human.submission)
    assert status["rejected"] is False and status["waitingReason"] == WAITING_FOR_HUMAN
    assert work.task(operator.api, waiting_for_human.task)["state"] == "AWAITING_REVIEW"


def test_rejection_with_a_finding_sends_the_task_back_and_the_old_submission_is_obsolete(
    signed_in: Dashboard,
    operator: Principal,
    agent: Callable[..., AgentSession],
) -> None:
    project = work.create_project(operator.api, name="Billing")
    operator.api.mutate("setProjectPolicy", {"projectId": project, "reviewPolicy": "HUMAN"})
    implementer = agent()
    first = deliver(operator.api, implementer.api, project=project)
    path = f"/submissions/{first.submission}"
    rejected = signed_in.post_form(
        f"{path}/decision",
        {"decision": "REJECT", "summary": "double charge", "findings-0-severity": "BLOCKER",
         "findings-0-title": "charges twice on timeout",
         "findings-0-remedy": "make the charge idempotent"},
        token_from=path,
    )
    assert rejected.status_code == 303, rejected.text
    assert work.task(operator.api, first.task)["state"] == "REVISION_NEEDED"

    second = deliver(operator.api, implementer.api, project=project,
                     repository=first.repository, task=first.task, candidate=sha("c"))
    old = signed_in.get(path)
    text = text_of(old.text)
    assert "Obsolete submission." in text
    assert f"Open the current submission, {second.submission}" in text
    assert "/decision" not in old.text
    # A stale form posted anyway is refused by the service, shown readably.
    stale = signed_in.post_form(
        f"{path}/decision", {"decision": "APPROVE", "summary": "ok now"},
        token_from=f"/submissions/{second.submission}",
    )
    assert stale.status_code == 409
    assert "is not the current candidate" in text_of(stale.text)
    assert "Traceback" not in stale.text

    current = text_of(signed_in.get(f"/submissions/{second.submission}").text)
    assert "Findings on earlier submissions of this task" in current
    assert "BLOCKER charges twice on timeout blocks integration until resolved" in current
    assert "Unresolved." in current


def test_agents_still_cannot_record_the_human_decision(
    server: str,
    operator: Principal,
    waiting_for_human: Delivery,
    make_principal: Callable[..., Principal],
) -> None:
    someone = make_principal(kind="agent")
    refused = someone.api.mutate(
        "recordHumanReview",
        {"submissionId": waiting_for_human.submission, "decision": "APPROVE", "summary": "ok"},
    )
    assert refused["__typename"] == "PermissionDenied", refused
    # Nor can an agent's token open the dashboard to use the form instead.
    with httpx.Client(base_url=server) as browser:
        token_page = browser.get("/login")
        csrf = re.search(r'name="csrftoken" value="([^"]+)"', token_page.text)
        assert csrf
        login = browser.post("/login", data={"csrftoken": csrf.group(1), "token": someone.token})
        assert login.status_code == 401
        assert browser.get(f"/submissions/{waiting_for_human.submission}").status_code == 303
    assert human_review_status(operator, waiting_for_human.submission)["humanApprovals"] == 0


def test_a_validated_submission_is_headed_done_not_ready_for_integration(
    signed_in: Dashboard, operator: Principal, agent: Callable[..., AgentSession]
) -> None:
    delivery = deliver(operator.api, agent().api)
    take_to_done(agent().api, agent().api, delivery)

    text = text_of(signed_in.get(f"/submissions/{delivery.submission}").text)
    assert "Integrated into main and validated: done" in text
    assert "ready for integration" not in text
    assert "Task state DONE" in text
