"""Every path to DONE is one path: it unblocks dependents, counts toward the parent and
frees worktrees. A task that leaves active work without being done (closed, restarted)
frees its worktree too, but never counts as done: a closed required child keeps its
parent blocked until an operator drops the requirement, saying why."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest

from hub.clock import ManualClock
from tests.support import work
from tests.support.sql import fetch_all
from tests.support.workflow import (
    approve_by_new_reviewer,
    claim_integration,
    claim_review,
    deliver,
    report,
    review,
    sha,
    validate,
)

WORKTREE = "ws-1:/src/r/.git/worktrees/shared"


def dependent_of(operator: Any, project: str, prerequisite: str) -> str:
    dependent = work.new_task(operator.api, project, prerequisiteIds=[prerequisite])
    assert work.task(operator.api, dependent)["effectiveState"] == "BLOCKED"
    return dependent


def done_by_acceptance(operator: Any, agent: Callable[..., Any]) -> tuple[str, str, Callable]:
    project = work.create_project(operator.api)
    task = work.new_task(operator.api, project)

    def finish() -> None:
        a = agent()
        attempt = work.claimed(a.api, project, task)["attempt"]
        assert work.accept(a.api, attempt)["__typename"] == "AttemptPayload"
        assert work.submit(a.api, attempt)["task"]["state"] == "DONE"

    return project, task, finish


def done_review_task(operator: Any, agent: Callable[..., Any]) -> tuple[str, str, Callable]:
    delivery = deliver(operator.api, agent().api)
    (review_task,) = work.review_tasks(operator.api, delivery.submission)

    def finish() -> None:
        approve_by_new_reviewer(agent().api, delivery.project, delivery.submission)

    return delivery.project, review_task, finish


def done_integration_task(operator: Any, agent: Callable[..., Any]) -> tuple[str, str, Callable]:
    project = work.create_project(operator.api)
    operator.api.mutate("setProjectPolicy", {"projectId": project, "reviewPolicy": "NONE"})
    delivery = deliver(operator.api, agent().api, project=project)
    integrator = agent()
    claim = claim_integration(integrator.api, delivery.submission)

    def finish() -> None:
        report(integrator.api, claim, "PUBLISHED", base=sha("a"), result=sha("c"))
        assert validate(integrator.api, claim, sha("c"))["integration"]["state"] == "VALIDATED"

    return project, claim["task"]["id"], finish


def done_implementation(operator: Any, agent: Callable[..., Any]) -> tuple[str, str, Callable]:
    project = work.create_project(operator.api)
    operator.api.mutate("setProjectPolicy", {"projectId": project, "reviewPolicy": "NONE"})
    delivery = deliver(operator.api, agent().api, project=project)

    def finish() -> None:
        integrator = agent()
        claim = claim_integration(integrator.api, delivery.submission)
        report(integrator.api, claim, "PUBLISHED", base=sha("a"), result=sha("c"))
        validate(integrator.api, claim, sha("c"))

    return project, delivery.task, finish


PATHS = {
    "a non-code task accepted and submitted": done_by_acceptance,
    "a review task whose review is recorded": done_review_task,
    "an integration task whose validation passes": done_integration_task,
    "an implementation integrated and validated": done_implementation,
}


@pytest.mark.parametrize("path", sorted(PATHS))
def test_every_path_to_done_unblocks_dependents(operator, agent, path: str) -> None:
    project, prerequisite, finish = PATHS[path](operator, agent)
    dependent = dependent_of(operator, project, prerequisite)
    finish()
    assert work.task(operator.api, prerequisite)["state"] == "DONE"
    after = work.task(operator.api, dependent)
    assert after["effectiveState"] == "OPEN" and after["blockedCount"] == 0
    assert work.claimed(agent().api, project, dependent)["task"]["id"] == dependent


@pytest.mark.parametrize("reason", ["DEFERRED", "REJECTED"])
def test_a_closed_required_child_keeps_its_parent_blocked(
    operator, agent, make_principal, reason: str
) -> None:
    project = work.create_project(operator.api)
    parent = work.new_task(operator.api, project, kind="OBJECTIVE")
    child = work.new_task(operator.api, project, parentId=parent)
    closed = work.close_task(operator.api, child, reason, reopenCondition="after v2")
    assert closed["__typename"] == "TaskPayload", closed

    assert work.task(operator.api, parent)["effectiveState"] == "BLOCKED"
    refused = work.claim(agent().api, project, parent)
    assert refused["__typename"] == "DependencyNotMet" and child in refused["message"]

    # Only an operator, saying why, lets the parent go without it.
    other = make_principal(kind="human").api
    by_someone = other.mutate(
        "editTask", {"taskId": child, "expectedRevision": 1, "required": False, "reason": "nah"}
    )
    assert by_someone["__typename"] == "PermissionDenied", by_someone
    silent = operator.api.mutate(
        "editTask",
        {"taskId": child, "expectedRevision": 1, "required": False},
        "... on ValidationFailed { field }",
    )
    assert silent["__typename"] == "ValidationFailed" and silent["field"] == "reason"
    dropped = operator.api.mutate(
        "editTask",
        {"taskId": child, "expectedRevision": 1, "required": False,
         "reason": "out of scope for this objective"},
    )
    assert dropped["__typename"] == "TaskPayload", dropped
    assert work.task(operator.api, parent)["effectiveState"] == "OPEN"
    a = agent()
    attempt = work.claimed(a.api, project, parent)["attempt"]
    assert work.accept(a.api, attempt)["__typename"] == "AttemptPayload"
    assert work.submit(a.api, attempt)["task"]["state"] == "DONE"


def test_a_reopened_child_still_blocks_and_its_completion_frees_the_parent(
    operator, agent
) -> None:
    project = work.create_project(operator.api)
    parent = work.new_task(operator.api, project, kind="OBJECTIVE")
    child = work.new_task(operator.api, project, parentId=parent)
    work.close_task(operator.api, child, "DEFERRED", reopenCondition="next sprint")
    reopened = operator.api.mutate("reopenTask", {"taskId": child, "reason": "next sprint"})
    assert reopened["__typename"] == "TaskPayload", reopened
    assert work.task(operator.api, parent)["blockedCount"] == 1
    a = agent()
    attempt = work.claimed(a.api, project, child)["attempt"]
    work.accept(a.api, attempt)
    work.submit(a.api, attempt)
    assert work.task(operator.api, parent)["effectiveState"] == "OPEN"


def test_a_closed_task_frees_its_worktree(operator, agent, database) -> None:
    project = work.create_project(operator.api)
    repository = work.add_repository(operator.api, project)
    first = work.new_task(operator.api, project, kind="IMPLEMENTATION")
    second = work.new_task(operator.api, project, kind="IMPLEMENTATION")
    a, b = agent(), agent()
    attempt = work.claimed(a.api, project, first)["attempt"]
    assert work.register_worktree(a.api, attempt, repository, WORKTREE)["__typename"] == (
        "AttemptPayload"
    )
    work.relinquish(a.api, attempt)
    closed = work.close_task(operator.api, first, "REJECTED")
    assert closed["__typename"] == "TaskPayload", closed

    other = work.claimed(b.api, project, second)["attempt"]
    reused = work.register_worktree(b.api, other, repository, WORKTREE)
    assert reused["__typename"] == "AttemptPayload", reused  # was a Conflict
    released = fetch_all(
        database,
        "SELECT payload FROM events WHERE kind = 'worktree.released' AND subject_id = :task",
        task=first,
    )
    assert len(released) == 1


def test_a_recovery_restart_frees_the_saved_worktree(
    operator, agent, clock: ManualClock
) -> None:
    project = work.create_project(operator.api)
    repository = work.add_repository(operator.api, project)
    task = work.new_task(operator.api, project, kind="IMPLEMENTATION")
    other = work.new_task(operator.api, project, kind="IMPLEMENTATION")
    a, b, c = agent(), agent(), agent()
    attempt = work.claimed(a.api, project, task)["attempt"]
    work.register_worktree(a.api, attempt, repository, WORKTREE)
    clock.set(datetime.fromisoformat(attempt["expiresAt"]))
    recovery = b.api.mutate(
        "claimRecovery",
        {"taskId": task, "idempotencyKey": work.key()},
        "... on ClaimRecoveryPayload { attempt { id generation } }",
    )["attempt"]
    other_attempt = work.claimed(c.api, project, other)["attempt"]
    assert work.register_worktree(c.api, other_attempt, repository, WORKTREE)["__typename"] == (
        "Conflict"
    )  # resuming saved work would keep it
    restarted = b.api.mutate(
        "recordRecoveryDisposition",
        {"attemptId": recovery["id"], "generation": recovery["generation"],
         "disposition": "RESTART", "reason": "the saved work is on a dead disk"},
    )
    assert restarted["__typename"] == "AttemptPayload", restarted
    assert work.register_worktree(c.api, other_attempt, repository, WORKTREE)["__typename"] == (
        "AttemptPayload"
    )


def test_criteria_cannot_change_under_a_submission_in_review(operator, agent) -> None:
    delivery = deliver(operator.api, agent().api)
    edit = {"taskId": delivery.task, "expectedRevision": 1, "acceptanceCriteria": ["new"]}
    refused = operator.api.mutate("editTask", edit)
    assert refused["__typename"] == "InvalidTransition", refused
    assert work.task(operator.api, delivery.task)["criteriaRevision"] == 1
    # The way to change them: send the work back in review, then edit.
    reviewer = agent()
    claim = claim_review(reviewer.api, delivery.project)
    review(reviewer.api, claim["attempt"], delivery.submission, "REJECT",
           [{"severity": "MAJOR", "title": "criteria are wrong", "remedy": "rewrite them"}])
    revision = work.task(operator.api, delivery.task)["revision"]
    changed = operator.api.mutate("editTask", {**edit, "expectedRevision": revision})
    assert changed["__typename"] == "TaskPayload", changed
    assert work.task(operator.api, delivery.task)["criteriaRevision"] == 2
