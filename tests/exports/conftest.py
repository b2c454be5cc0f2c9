"""A project with something in every module, for the export tests (docs/exports.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from hub.clock import ManualClock
from tests.conftest import AgentSession, Principal
from tests.support import artifacts, knowledge, review, work
from tests.support.workflow import claim_review, deliver, sha, take_to_done
from tests.support.workflow import review as submit_review


@dataclass
class Populated:
    """What `populated` made, by name."""

    project: str
    other_project: str
    tasks: dict[str, str]
    submission: str
    worker: AgentSession
    reviewer: AgentSession
    lesson: str
    artifact: str
    job: str


def populate(
    operator: Principal, agent: Callable[..., AgentSession], clock: ManualClock
) -> Populated:
    api = operator.api
    project = work.create_project(api, "Export me", aliases=["exported"])
    other = work.create_project(api, "Somebody else's")
    work.new_task(api, other, title="Not in the export")
    plan = {"sourceSystem": "markdown:plan.md"}
    epic = work.new_task(
        api, project, kind="OBJECTIVE", title="People log in", outcome="Tokens and passwords",
        sourceId="auth", **plan,
    )  # fmt: skip
    schema = work.new_task(
        api, project, kind="IMPLEMENTATION", title="Store the token table", parentId=epic,
        sourceId="db-schema", acceptanceCriteria=["a migration", "a rollback"], **plan,
    )  # fmt: skip
    login = work.new_task(
        api, project, kind="IMPLEMENTATION", title="Log in with a token", parentId=epic,
        prerequisiteIds=[schema], outcome="A bearer token opens a session", priority=5,
        sourceId="auth-login", **plan,
    )  # fmt: skip
    docs = work.new_task(api, project, kind="GENERAL", title="Write the login docs",
                         prerequisiteIds=[login])  # fmt: skip
    duplicate = work.new_task(api, project, kind="GENERAL", title="Let people sign in")
    closed = work.close_task(api, duplicate, "DUPLICATE", relatedTaskId=login, note="same ask")
    assert closed["__typename"] == "TaskPayload", closed
    later = work.new_task(api, project, kind="GENERAL", title="Single sign-on")
    deferred = work.close_task(api, later, "DEFERRED", reopenCondition="when SSO is bought")
    assert deferred["__typename"] == "TaskPayload", deferred
    assert work.link_tasks(api, docs, login, "RELATED")["__typename"] == "TaskPayload"

    worker = agent("worker")
    delivery = deliver(api, worker.api, project=project, task=schema)
    reviewer = agent("reviewer")
    claim = claim_review(reviewer.api, project)
    assert claim["__typename"] == "ClaimPayload", claim
    decided = submit_review(
        reviewer.api, claim["attempt"], delivery.submission, decision="REJECT",
        findings=review.one_of_each_severity(),
    )  # fmt: skip
    assert decided["__typename"] == "ReviewPayload", decided
    hashing = work.new_task(
        api, project, kind="IMPLEMENTATION", title="Hash the tokens", parentId=epic,
        sourceId="hash-tokens", **plan,
    )  # fmt: skip
    done = deliver(api, worker.api, project=project, repository=delivery.repository,
                   task=hashing, candidate=sha("d"))  # fmt: skip
    clock.advance(hours=2)  # claimed two hours before it is done
    take_to_done(agent("approver").api, agent("integrator").api, done)

    attempt, job = artifacts.working_job(api, worker.api, project)
    recorded = artifacts.evidence(worker.api, attempt, jobId=job["id"])
    assert recorded["__typename"] == "EvidencePayload", recorded
    lesson = knowledge.published(
        api, project, "Run the migrations before the tests",
        explanation="The token table is made by a migration", tags=["db"],
    )  # fmt: skip
    artifact = artifacts.link(api, project, taskId=login)
    return Populated(
        project=project,
        other_project=other,
        tasks={"epic": epic, "schema": schema, "login": login, "docs": docs,
               "duplicate": duplicate, "later": later, "hashing": hashing},
        submission=delivery.submission,
        worker=worker,
        reviewer=reviewer,
        lesson=lesson["id"],
        artifact=artifact["id"],
        job=job["id"],
    )  # fmt: skip


@pytest.fixture
def populated(
    operator: Principal, agent: Callable[..., AgentSession], clock: ManualClock
) -> Populated:
    return populate(operator, agent, clock)


def export_lines(server: str, token: str | None, project: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.get(f"{server}/api/projects/{project}/export", headers=headers, timeout=60)


def records(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text
    return [json.loads(line) for line in response.text.splitlines()]
