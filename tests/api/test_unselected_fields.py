"""A mutation's answer leaves out what the request does not select and would cost a read
of its own (`hub.api.operations._unread`, `UnitOfWork.reads`): an attempt mutation whose
request selects no `task` does not read the task's view, and one that selects it, in
any fragment or under an alias, gets it whole."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pytest
import sqlalchemy as sa

from hub.storage.database import Database
from tests.support import work

if TYPE_CHECKING:  # imported for types only: pytest would try to collect them
    from tests.conftest import AgentSession, Principal

RENEW = """
mutation($input: RenewLeaseInput!) {
  renewLease(input: $input) { __typename %s }
}
"""
SHOWN = "fragment Shown on AttemptPayload { task { id state acceptanceCriteria } }"

SELECTIONS = {
    "no task": "... on AttemptPayload { lease { expiresAt } serverTime }",
    "inline fragment": (
        "... on AttemptPayload { task { id state acceptanceCriteria } lease { expiresAt } }"
    ),
    "fragment spread": "...Shown",
    "alias": "... on AttemptPayload { held: task { id state acceptanceCriteria } }",
}


@contextmanager
def task_view_reads(database: Database) -> Iterator[list[str]]:
    """The statements reading a task's view (its criteria joined to it) while open."""
    seen: list[str] = []

    def on_statement(*args: Any) -> None:
        if "FROM tasks" in str(args[2]) and "task_criteria" in str(args[2]):
            seen.append(str(args[2]))

    sa.event.listen(database.engine, "before_cursor_execute", on_statement)
    try:
        yield seen
    finally:
        sa.event.remove(database.engine, "before_cursor_execute", on_statement)


@pytest.mark.parametrize("selection", list(SELECTIONS))
def test_the_task_is_read_only_when_the_answer_shows_it(
    database: Database,
    operator: Principal,
    agent: Callable[..., AgentSession],
    selection: str,
) -> None:
    project = work.create_project(operator.api)
    task = work.new_task(operator.api, project, acceptanceCriteria=["it works"])
    a = agent()
    attempt = work.claimed(a.api, project, task)["attempt"]
    document = RENEW % SELECTIONS[selection] + (SHOWN if selection == "fragment spread" else "")
    renewal = {
        "attemptId": attempt["id"],
        "generation": attempt["generation"],
    }

    with task_view_reads(database) as reads:
        answer = a.api(document, input={**renewal, "idempotencyKey": work.key()})["renewLease"]

    assert answer["__typename"] == "AttemptPayload", answer
    shown = answer.get("task") or answer.get("held")
    if selection == "no task":
        assert shown is None and answer["lease"]["expiresAt"]
        assert reads == []
    else:
        assert shown == {"id": task, "state": "IN_PROGRESS", "acceptanceCriteria": ["it works"]}
        assert len(reads) == 1


def test_a_claim_without_the_task_answers_the_attempt_and_the_task_is_claimed(
    operator: Principal, agent: Callable[..., AgentSession]
) -> None:
    project = work.create_project(operator.api)
    task = work.new_task(operator.api, project)
    a = agent()

    claim = a.api.mutate(
        "claimTask",
        {"projectId": project, "idempotencyKey": work.key()},
        "... on ClaimPayload { attempt { id taskId generation } }",
    )

    assert claim["attempt"]["taskId"] == task and claim["attempt"]["generation"] == 1
    assert work.task(operator.api, task)["state"] == "IN_PROGRESS"
