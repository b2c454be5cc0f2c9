"""Linking tasks, closing them with a durable reason, and reopening them."""

from __future__ import annotations

from typing import Any

import pytest

from hub.storage.database import Database
from tests.support import work
from tests.support.client import GraphQLErrors
from tests.support.sql import events_of, fetch_all


def _links(database: Database) -> list[tuple[str, str, str]]:
    rows = fetch_all(
        database, "SELECT task_id, other_id, kind FROM task_links ORDER BY task_id, kind"
    )
    return [(row["task_id"], row["other_id"], row["kind"]) for row in rows]


def _tasks(operator: Any, count: int) -> tuple[str, list[str]]:
    project = work.create_project(operator.api)
    return project, [work.new_task(operator.api, project) for _ in range(count)]


# --- linkTasks -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["DUPLICATE_OF", "RELATED", "SUPERSEDES"])
def test_linking_two_tasks_stores_the_link_once(operator, database, kind) -> None:
    _, (task, other) = _tasks(operator, 2)

    for _ in range(2):  # linking twice is harmless
        linked = work.link_tasks(operator.api, task, other, kind)
        assert linked["__typename"] == "TaskPayload", linked
    assert _links(database) == [(task, other, kind)]
    assert [e["other"] for e in events_of(database, "task.linked")] == [other]
    assert work.task(operator.api, task)["state"] == "OPEN"  # a link moves nothing


def test_one_pair_may_carry_several_kinds_of_link(operator, database) -> None:
    _, (task, other) = _tasks(operator, 2)
    work.link_tasks(operator.api, task, other, "RELATED")
    work.link_tasks(operator.api, task, other, "SUPERSEDES")
    assert _links(database) == [(task, other, "RELATED"), (task, other, "SUPERSEDES")]


def test_a_task_cannot_be_linked_to_itself_or_to_another_projects_task(
    operator, database
) -> None:
    _, (task,) = _tasks(operator, 1)
    _, (foreign,) = _tasks(operator, 1)

    to_itself = work.link_tasks(operator.api, task, task, "RELATED")
    assert (to_itself["__typename"], to_itself["field"]) == ("ValidationFailed", "otherTaskId")
    across = work.link_tasks(operator.api, task, foreign, "DUPLICATE_OF")
    assert (across["__typename"], across["field"]) == ("ValidationFailed", "otherTaskId")
    unknown = work.link_tasks(operator.api, task, "tsk_00000000000000000000000000", "RELATED")
    assert unknown["__typename"] == "NotFound", unknown
    assert _links(database) == []


# --- closeTask -----------------------------------------------------------------------


def test_close_reasons_are_validated_and_a_refused_close_changes_nothing(
    operator, database
) -> None:
    _, (task,) = _tasks(operator, 1)

    with pytest.raises(GraphQLErrors):  # not a close reason at all: the schema refuses it
        work.close_task(operator.api, task, "DONE_ENOUGH")
    for fields, field in (
        ({"reason": "DEFERRED"}, "reopenCondition"),
        ({"reason": "DEFERRED", "reopenCondition": "   "}, "reopenCondition"),
        ({"reason": "SUPERSEDED"}, "relatedTaskId"),
        ({"reason": "DUPLICATE"}, "relatedTaskId"),
    ):
        refused = work.close_task(operator.api, task, **fields)
        assert (refused["__typename"], refused["field"]) == ("ValidationFailed", field), fields
    assert work.task(operator.api, task)["state"] == "OPEN"
    assert _links(database) == []


def test_a_related_task_of_another_project_is_refused_naming_related_task_id(
    operator, database
) -> None:
    _, (task,) = _tasks(operator, 1)
    _, (foreign,) = _tasks(operator, 1)
    for reason in ("DUPLICATE", "SUPERSEDED", "REJECTED"):
        refused = work.close_task(operator.api, task, reason, relatedTaskId=foreign)
        assert refused["__typename"] == "ValidationFailed", refused
        assert work.task(operator.api, task)["state"] == "OPEN"
        assert _links(database) == []
        assert refused["field"] == "relatedTaskId", refused


@pytest.mark.parametrize("reason", ["DUPLICATE", "SUPERSEDED", "REJECTED"])
def test_a_task_cannot_be_closed_naming_itself_as_the_related_task(
    operator, database, reason
) -> None:
    _, (task,) = _tasks(operator, 1)
    refused = work.close_task(operator.api, task, reason, relatedTaskId=task)
    assert (refused["__typename"], refused.get("field")) == ("ValidationFailed", "relatedTaskId")
    assert work.task(operator.api, task)["state"] == "OPEN"
    assert _links(database) == []


def test_deferred_close_keeps_its_reopen_condition(operator) -> None:
    _, (task,) = _tasks(operator, 1)
    closed = work.close_task(
        operator.api, task, "DEFERRED", note="not this quarter", reopenCondition="after v2 ships"
    )
    assert closed["task"] == {
        "id": task, "state": "CLOSED", "effectiveState": "CLOSED", "closeReason": "DEFERRED",
        "closeNote": "not this quarter", "reopenCondition": "after v2 ships",
    }
    assert work.task(operator.api, task)["state"] == "CLOSED"


@pytest.mark.parametrize(
    ("reason", "link"),
    [("SUPERSEDED", "{other} SUPERSEDES {task}"), ("DUPLICATE", "{task} DUPLICATE_OF {other}")],
)
def test_superseded_and_duplicate_closes_link_the_related_task(
    operator, database, reason, link
) -> None:
    project, (task, other) = _tasks(operator, 2)
    closed = work.close_task(operator.api, task, reason, relatedTaskId=other)
    assert closed["task"]["closeReason"] == reason

    [(source, target, kind)] = _links(database)
    assert f"{source} {kind} {target}" == link.format(task=task, other=other)
    assert work.candidates(operator.api, project) == [other]


def test_a_rejected_close_naming_a_task_links_it_as_related(operator, database) -> None:
    _, (task, other) = _tasks(operator, 2)
    work.close_task(operator.api, task, "REJECTED", note="won't do", relatedTaskId=other)
    assert _links(database) == [(task, other, "RELATED")]


def test_a_task_with_a_current_attempt_cannot_be_closed(operator, agent, clock) -> None:
    project, (task,) = _tasks(operator, 1)
    attempt = work.claimed(agent().api, project, task)["attempt"]

    refused = work.close_task(operator.api, task, "REJECTED")
    assert refused["__typename"] == "InvalidTransition", refused
    work.expire(clock, attempt)  # an expired attempt is still the current one until recovered
    assert work.close_task(operator.api, task, "REJECTED")["__typename"] == "InvalidTransition"
    assert work.task(operator.api, task)["currentAttemptId"] == attempt["id"]


def test_closing_twice_is_refused(operator) -> None:
    _, (task,) = _tasks(operator, 1)
    assert work.close_task(operator.api, task, "REJECTED", note="first")["task"]["state"] == (
        "CLOSED"
    )
    again = work.close_task(operator.api, task, "DEFERRED", reopenCondition="later")
    assert again["__typename"] == "InvalidTransition", again
    assert work.reopen_task(operator.api, task)["task"]["state"] == "OPEN"


# --- reopenTask ----------------------------------------------------------------------


def test_reopening_clears_the_close_and_offers_the_task_again(operator, agent, database) -> None:
    project, (task,) = _tasks(operator, 1)
    work.close_task(operator.api, task, "DEFERRED", note="later", reopenCondition="after v2")
    assert work.candidates(operator.api, project) == []

    reopened = work.reopen_task(operator.api, task, "v2 shipped")
    # The close reason and note go; the condition it waited for stays in view.
    assert reopened["task"] == {
        "id": task, "state": "OPEN", "effectiveState": "OPEN", "closeReason": None,
        "closeNote": None, "reopenCondition": "after v2",
    }
    [event] = events_of(database, "task.reopened")
    assert (event["reason"], event["previousCloseReason"]) == ("v2 shipped", "DEFERRED")
    assert (event["previousCloseNote"], event["reopenCondition"]) == ("later", "after v2")
    assert work.candidates(operator.api, project) == [task]
    assert work.claim(agent().api, project, task)["__typename"] == "ClaimPayload"


def test_only_a_closed_task_can_be_reopened(operator, agent) -> None:
    project, (open_task, claimed, done) = _tasks(operator, 3)
    work.claimed(agent().api, project, claimed)
    finisher = agent()
    attempt = work.claimed(finisher.api, project, done)["attempt"]
    work.accept(finisher.api, attempt)
    work.submit(finisher.api, attempt)

    for task, state in ((open_task, "OPEN"), (claimed, "IN_PROGRESS"), (done, "DONE")):
        refused = work.reopen_task(operator.api, task)
        assert refused["__typename"] == "InvalidTransition", refused
        assert work.task(operator.api, task)["state"] == state


def test_reopening_needs_a_reason(operator) -> None:
    _, (task,) = _tasks(operator, 1)
    work.close_task(operator.api, task, "REJECTED")
    refused = work.reopen_task(operator.api, task, " ")
    assert (refused["__typename"], refused["field"]) == ("ValidationFailed", "reason")
    assert work.task(operator.api, task)["state"] == "CLOSED"
