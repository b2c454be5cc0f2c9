"""Concurrency smoke for the storage layer: real threads, real transactions, both backends.

32 threads each run 20 write units of work through the projects service (aliases and
policy revisions) against one project. Every unit commits; the project's event sequence
is dense 1..N without duplicates; no policy revision is lost."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from hub.errors import Conflict
from hub.events import service as events
from hub.identity import service as identity
from hub.identity.views import Actor
from hub.projects import service as projects
from hub.runtime import Runtime
from hub.storage.database import Database
from hub.storage.unit_of_work import UnitOfWork
from tests.support.sql import fetch_all, fetch_value

THREADS = 32
UNITS = 20


@pytest.mark.slow
def test_concurrent_writers_all_commit_and_event_sequence_stays_dense(
    runtime: Runtime, database: Database
) -> None:
    principal = runtime.write(
        lambda uow: identity.create_principal(uow, name="olga", kind="human", operator=True)
    )
    actor = Actor(
        principal_id=principal.id,
        principal_name=principal.name,
        kind="human",
        is_operator=True,
        credential="personal",
    )
    project = runtime.write(lambda uow: projects.create_project(uow, actor, name="busy"))

    def unit(thread: int, step: int) -> Callable[[UnitOfWork], object]:
        if (thread + step) % 4 == 0:
            change = projects.PolicyChange(required_agent_approvals=1 + (thread + step) % 3)
            return lambda uow: projects.set_project_policy(
                uow, actor, project_id=project.id, change=change
            )
        return lambda uow: projects.add_alias(
            uow, actor, project_id=project.id, alias=f"t{thread}-s{step}"
        )

    start = threading.Barrier(THREADS)
    failures: list[BaseException] = []
    committed = [0] * THREADS

    def writer(thread: int) -> None:
        try:
            start.wait()
            for step in range(UNITS):
                runtime.write(unit(thread, step))
                committed[thread] += 1
        except BaseException as exc:  # reported below, with every other failure
            failures.append(exc)

    workers = [threading.Thread(target=writer, args=(n,)) for n in range(THREADS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=240)
    assert not any(worker.is_alive() for worker in workers), "a writer hung"
    assert failures == []
    assert committed == [UNITS] * THREADS

    policy_units = sum(1 for t in range(THREADS) for s in range(UNITS) if (t + s) % 4 == 0)
    alias_units = THREADS * UNITS - policy_units
    total = 1 + THREADS * UNITS  # project.created, then one event per unit

    # Read as followers read them: on PostgreSQL the last events may not have stored
    # numbers yet (docs/architecture.md, "The event log").
    sequences = [
        record.seq
        for record in runtime.read(
            lambda uow: events.list_events(uow, stream=project.id, limit=total + 1)
        )
    ]
    assert sequences == list(range(1, total + 1))
    assert runtime.read(lambda uow: events.last_sequence(uow, stream=project.id)) == total
    assert (
        fetch_value(
            database, "SELECT count(*) FROM project_aliases WHERE project_id = :p", p=project.id
        )
        == alias_units
    )
    revisions = [
        row["revision"]
        for row in fetch_all(
            database,
            "SELECT revision FROM project_policies WHERE project_id = :p ORDER BY revision",
            p=project.id,
        )
    ]
    assert revisions == list(range(1, policy_units + 2))
    assert runtime.read(lambda uow: projects.get_project(uow, project.id)).policy_revision == (
        policy_units + 1
    )


def test_racing_writers_adding_one_alias_get_one_success_and_conflicts(
    runtime: Runtime, database: Database
) -> None:
    principal = runtime.write(
        lambda uow: identity.create_principal(uow, name="olga", kind="human", operator=True)
    )
    actor = Actor(
        principal_id=principal.id,
        principal_name=principal.name,
        kind="human",
        is_operator=True,
        credential="personal",
    )
    project = runtime.write(lambda uow: projects.create_project(uow, actor, name="contended"))
    racers = 16
    start = threading.Barrier(racers)
    outcomes: list[str] = []

    def racer() -> None:
        start.wait()
        try:
            runtime.write(
                lambda uow: projects.add_alias(uow, actor, project_id=project.id, alias="same")
            )
            outcomes.append("added")
        except Conflict:
            outcomes.append("conflict")
        except BaseException as exc:  # anything untyped is the failure this test looks for
            outcomes.append(f"{type(exc).__name__}: {exc}")

    workers = [threading.Thread(target=racer) for _ in range(racers)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert sorted(outcomes) == ["added"] + ["conflict"] * (racers - 1)
    assert (
        fetch_value(
            database, "SELECT count(*) FROM project_aliases WHERE project_id = :p", p=project.id
        )
        == 1
    )
    assert (
        fetch_value(
            database,
            "SELECT count(*) FROM events WHERE stream = :s AND kind = 'project.alias_added'",
            s=project.id,
        )
        == 1
    )
