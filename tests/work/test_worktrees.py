"""One worktree identity serves one unfinished implementation task at a time."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hub.storage.database import Database
from tests.support import work
from tests.support.sql import fetch_all
from tests.support.workflow import deliver, take_to_done

WORKTREE = "ws-1:/src/r/.git/worktrees/shared"


def _holders(database: Database, identity: str = WORKTREE) -> list[dict[str, Any]]:
    """The stored registrations of one worktree identity that are not released."""
    return fetch_all(
        database,
        "SELECT id, task_id, attempt_id, path FROM worktrees"
        " WHERE identity = :i AND released_at IS NULL",
        i=identity,
    )


def _implementing(operator: Any, session: Any, project: str) -> tuple[str, dict[str, Any]]:
    task_id = work.new_task(operator.api, project, kind="IMPLEMENTATION")
    return task_id, work.claimed(session.api, project, task_id)["attempt"]


def test_a_worktree_of_an_unfinished_task_is_refused_to_another_task(
    operator, agent, database
) -> None:
    project = work.create_project(operator.api)
    repository = work.add_repository(operator.api, project)
    a, b = agent(), agent()
    first, first_attempt = _implementing(operator, a, project)
    second, second_attempt = _implementing(operator, b, project)
    assert work.register_worktree(a.api, first_attempt, repository, WORKTREE)["worktree"]

    reused = work.register_worktree(b.api, second_attempt, repository, WORKTREE)
    assert reused["__typename"] == "Conflict", reused
    assert first in reused["message"]
    assert [row["task_id"] for row in _holders(database)] == [first]
    assert work.register_worktree(b.api, second_attempt, repository, "ws-1:/src/r2/.git")[
        "worktree"
    ]["taskId"] == second


def test_re_registering_the_same_worktree_on_the_same_task_is_fine(
    operator, agent, database, clock
) -> None:
    project = work.create_project(operator.api)
    repository = work.add_repository(operator.api, project)
    a = agent()
    task_id, attempt = _implementing(operator, a, project)
    first = work.register_worktree(a.api, attempt, repository, WORKTREE, path="/src/one")
    again = work.register_worktree(a.api, attempt, repository, WORKTREE, path="/src/two")
    assert again["__typename"] == "AttemptPayload", again
    assert again["worktree"]["id"] == first["worktree"]["id"]

    work.expire(clock, attempt)  # a recovery of the same task picks the same checkout up
    b = agent()
    recovery = work.recovered(b.api, task_id)["attempt"]
    work.dispose(b.api, recovery, "RESUME_SAVED_WORK", "the checkout is intact")
    resumed = work.register_worktree(b.api, recovery, repository, WORKTREE, path="/src/three")
    assert resumed["__typename"] == "AttemptPayload", resumed
    assert _holders(database) == [
        {"id": first["worktree"]["id"], "task_id": task_id, "attempt_id": recovery["id"],
         "path": "/src/three"}
    ]


def test_a_relinquished_task_still_holds_its_worktree(operator, agent, database) -> None:
    project = work.create_project(operator.api)
    repository = work.add_repository(operator.api, project)
    a, b = agent(), agent()
    first, first_attempt = _implementing(operator, a, project)
    _, second_attempt = _implementing(operator, b, project)
    work.register_worktree(a.api, first_attempt, repository, WORKTREE)
    given_back = a.api.mutate(
        "relinquishAttempt",
        {
            "attemptId": first_attempt["id"],
            "generation": 1,
            "reason": "out of budget",
            "idempotencyKey": work.key(),
        },
    )
    assert given_back["__typename"] == "AttemptPayload", given_back

    assert work.task(operator.api, first)["state"] == "OPEN"  # unfinished
    reused = work.register_worktree(b.api, second_attempt, repository, WORKTREE)
    assert reused["__typename"] == "Conflict", reused


def test_the_identity_is_physical_so_another_project_cannot_reuse_it(operator, agent) -> None:
    one, two = work.create_project(operator.api), work.create_project(operator.api, "Two")
    a, b = agent(), agent()
    _, in_one = _implementing(operator, a, one)
    _, in_two = _implementing(operator, b, two)
    work.register_worktree(a.api, in_one, work.add_repository(operator.api, one), WORKTREE)

    reused = work.register_worktree(
        b.api, in_two, work.add_repository(operator.api, two), WORKTREE
    )
    assert reused["__typename"] == "Conflict", reused


def test_a_done_task_releases_its_worktree_for_the_next_task(operator, agent, database) -> None:
    project = work.create_project(operator.api)
    delivery = deliver(operator.api, agent().api, project=project, worktree=WORKTREE)
    b = agent()
    _, next_attempt = _implementing(operator, b, project)
    assert work.register_worktree(b.api, next_attempt, delivery.repository, WORKTREE)[
        "__typename"
    ] == "Conflict"

    take_to_done(agent().api, agent().api, delivery)
    assert work.task(operator.api, delivery.task)["state"] == "DONE"
    reused = work.register_worktree(b.api, next_attempt, delivery.repository, WORKTREE)
    assert reused["__typename"] == "AttemptPayload", reused
    assert [row["attempt_id"] for row in _holders(database)] == [next_attempt["id"]]


def test_racing_registrations_of_one_worktree_leave_one_holder(operator, agent, database) -> None:
    project = work.create_project(operator.api)
    repository = work.add_repository(operator.api, project)
    sessions = [agent(workstation=f"ws-{i}") for i in range(8)]
    attempts = [_implementing(operator, session, project)[1] for session in sessions]
    start = threading.Barrier(len(sessions))

    def register(index: int) -> dict[str, Any]:
        start.wait()
        return work.register_worktree(sessions[index].api, attempts[index], repository, WORKTREE)

    with ThreadPoolExecutor(len(sessions)) as pool:
        results = list(pool.map(register, range(len(sessions))))

    assert sorted(r["__typename"] for r in results) == ["AttemptPayload"] + ["Conflict"] * 7
    [winner] = [r for r in results if r["__typename"] == "AttemptPayload"]
    assert [row["id"] for row in _holders(database)] == [winner["worktree"]["id"]]
