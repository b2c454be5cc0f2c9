"""A request for a human review keeps its context: the API returns every request, and
the dashboard's review queue and submission page show what was asked and by whom."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from hub.clock import ManualClock
from tests.conftest import AgentSession, Principal
from tests.support import work
from tests.support.review import request_human_review, status
from tests.support.workflow import Delivery, approve_by_new_reviewer, deliver, human_review
from tests.web.conftest import Dashboard
from tests.web.test_review_pages import queue_row, text_of

BILLING = "Touches <b>billing</b>: please check the refund path by hand."
FLAKY = "The retry test is flaky on CI; a human should judge the timing change."


@pytest.fixture
def signed_in(server: str, operator: Principal) -> Iterator[Dashboard]:
    """The dashboard, without JavaScript, signed in as the operator."""
    browser = Dashboard(server)
    assert browser.login().status_code == 303
    yield browser
    browser.close()


def waiting_for_human(
    operator: Principal, agent: Callable[..., AgentSession]
) -> tuple[Delivery, AgentSession]:
    """An implementation an independent agent approved, waiting for a human; and its
    implementer."""
    project = work.create_project(operator.api, name="Billing")
    work.set_policy(operator.api, project, reviewPolicy="AGENT_AND_HUMAN")
    implementer = agent("implementer-ann")
    delivery = deliver(operator.api, implementer.api, project=project, title="Refunds")
    approve_by_new_reviewer(agent().api, project, delivery.submission)
    return delivery, implementer


def test_every_request_keeps_its_context_and_requester(
    operator: Principal, agent: Callable[..., AgentSession], clock: ManualClock
) -> None:
    delivery, implementer = waiting_for_human(operator, agent)
    asked_at = clock.now().isoformat()
    first = request_human_review(implementer.api, delivery.submission, BILLING)
    assert first["status"]["humanReviewRequested"] is True
    [made] = first["status"]["humanReviewRequests"]
    assert made == {
        "id": made["id"],
        "submissionId": delivery.submission,
        "requestedBy": implementer.principal.id,
        "context": BILLING,
        "createdAt": asked_at,
    }

    clock.advance(300)
    colleague = agent()
    second = request_human_review(colleague.api, delivery.submission, FLAKY)
    requests = second["status"]["humanReviewRequests"]
    assert [(r["requestedBy"], r["context"]) for r in requests] == [
        (implementer.principal.id, BILLING),
        (colleague.principal.id, FLAKY),
    ]
    assert requests[1]["createdAt"] == clock.now().isoformat()
    assert status(operator.api, delivery.submission)["humanReviewRequests"] == requests
    queue = operator.api(
        "{ reviewQueue { submission { id } status { humanReviewRequests { context } } } }"
    )["reviewQueue"]
    assert [r["context"] for r in queue[0]["status"]["humanReviewRequests"]] == [BILLING, FLAKY]

    empty = request_human_review(implementer.api, delivery.submission, "   ")
    assert (empty["__typename"], empty["field"]) == ("ValidationFailed", "context")
    assert len(status(operator.api, delivery.submission)["humanReviewRequests"]) == 2

    # The requests stay with their submission once a human has decided.
    assert human_review(operator.api, delivery.submission)["status"]["approved"] is True
    assert status(operator.api, delivery.submission)["humanReviewRequests"] == requests


def test_the_dashboard_shows_what_was_asked_and_by_whom(
    signed_in: Dashboard, operator: Principal, agent: Callable[..., AgentSession]
) -> None:
    delivery, implementer = waiting_for_human(operator, agent)
    asked = request_human_review(implementer.api, delivery.submission, BILLING)
    assert asked["__typename"] == "ReviewStatusPayload", asked

    queue = signed_in.get("/reviews").text
    row = queue_row(queue, delivery.submission)
    assert row is not None, queue
    assert f"Asked by implementer-ann 2026-01-01 12:00:00 UTC: {BILLING}" in row
    assert "<b>billing</b>" not in queue  # an agent's markup stays text
    assert "&lt;b&gt;billing&lt;/b&gt;" in queue

    page = signed_in.get(f"/submissions/{delivery.submission}").text
    assert "Human review requests Asked by implementer-ann" in text_of(page)
    assert f"2026-01-01 12:00:00 UTC: {BILLING}" in text_of(page)
    assert "<b>billing</b>" not in page
    assert "&lt;b&gt;billing&lt;/b&gt;" in page
