"""The asynchronous write path (`Runtime.awrite`): on SQLite, concurrent operations are
committed in groups (one fsync each); on PostgreSQL they run side by side. Either way
each operation stands alone: one that fails leaves nothing behind and costs the others
nothing, after-commit work runs only once the data is durable, and an operation whose
group cannot commit is reported failed, never successful."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from sqlalchemy import text

from hub.errors import ValidationFailed
from hub.events import service as events
from hub.identity import service as identity
from hub.identity.views import Actor
from hub.projects import service as projects
from hub.runtime import Runtime
from hub.storage.database import Database
from hub.storage.unit_of_work import UnitOfWork
from tests.support.sql import fetch_all, fetch_value

OPERATIONS = 60


def operator(runtime: Runtime) -> Actor:
    principal = runtime.write(
        lambda uow: identity.create_principal(uow, name="olga", kind="human", operator=True)
    )
    return Actor(
        principal_id=principal.id,
        principal_name=principal.name,
        kind="human",
        is_operator=True,
        credential="personal",
    )


def test_concurrent_writes_stand_alone_and_report_only_what_committed(
    runtime: Runtime, database: Database
) -> None:
    actor = operator(runtime)
    project = runtime.write(lambda uow: projects.create_project(uow, actor, name="busy"))
    seen_after_commit: list[str] = []

    def add(index: int) -> Callable[[UnitOfWork], str]:
        def operation(uow: UnitOfWork) -> str:
            alias = f"a{index}"
            projects.add_alias(uow, actor, project_id=project.id, alias=alias)
            if index % 7 == 3:
                # Fails after writing: its alias and its event must vanish with it.
                raise ValidationFailed("alias", f"refused {index} after writing")
            uow.after_commit(lambda: seen_after_commit.append(alias))
            return alias

        return operation

    async def run_all() -> list[object]:
        results = await asyncio.gather(
            *(runtime.awrite(add(index)) for index in range(OPERATIONS)), return_exceptions=True
        )
        return list(results)

    results = asyncio.run(run_all())

    refused = {index for index in range(OPERATIONS) if index % 7 == 3}
    for index, result in enumerate(results):
        if index in refused:
            assert isinstance(result, ValidationFailed), result
        else:
            assert result == f"a{index}"
    stored = {row["alias"] for row in fetch_all(
        database, "SELECT alias FROM project_aliases WHERE project_id = :p", p=project.id
    )}
    assert stored == {f"a{index}" for index in range(OPERATIONS) if index not in refused}
    assert sorted(seen_after_commit) == sorted(stored)
    # The event log stayed dense: refused operations took no sequence numbers.
    # Read as followers read them (on PostgreSQL the last may have no stored number yet).
    sequences = [record.seq for record in runtime.read(
        lambda uow: events.list_events(uow, stream=project.id)
    )]
    assert sequences == list(range(1, len(stored) + 2))  # project.created, then one per alias


def test_a_failed_commit_fails_every_operation_it_would_have_committed(
    runtime: Runtime, database: Database, backend: str
) -> None:
    """SQLite's deferred foreign keys fail the COMMIT itself. An operation grouped with
    the one that breaks it is reported failed too (nothing of it was stored), never
    successful. On PostgreSQL operations commit separately: only the broken one fails
    (there, at its statement)."""
    actor = operator(runtime)
    project = runtime.write(lambda uow: projects.create_project(uow, actor, name="doomed"))
    started, release = threading.Event(), threading.Event()

    def blocker(uow: UnitOfWork) -> str:
        projects.add_alias(uow, actor, project_id=project.id, alias="first")
        started.set()
        release.wait(30)
        return "first"

    def good(uow: UnitOfWork) -> str:
        projects.add_alias(uow, actor, project_id=project.id, alias="good")
        return "good"

    def breaks_at_commit(uow: UnitOfWork) -> str:
        connection = uow.session.connection()
        if backend == "sqlite":
            connection.execute(text("PRAGMA defer_foreign_keys = ON"))
        projects.add_alias(uow, actor, project_id=project.id, alias="dangling")
        connection.execute(
            text("UPDATE project_aliases SET project_id = 'prj_missing' WHERE alias = 'dangling'")
        )
        return "dangling"

    async def run() -> list[object]:
        first = asyncio.ensure_future(runtime.awrite(blocker))
        await asyncio.get_running_loop().run_in_executor(None, started.wait, 30)
        # Queued while the writer is busy with `first`: on SQLite they form one group.
        second = asyncio.ensure_future(runtime.awrite(good))
        third = asyncio.ensure_future(runtime.awrite(breaks_at_commit))
        await asyncio.sleep(0.2)
        release.set()
        return list(await asyncio.gather(first, second, third, return_exceptions=True))

    first, second, third = asyncio.run(run())

    assert first == "first"
    assert isinstance(third, BaseException)
    stored = {row["alias"] for row in fetch_all(
        database, "SELECT alias FROM project_aliases WHERE project_id = :p", p=project.id
    )}
    if backend == "sqlite":
        assert isinstance(second, BaseException)
        assert stored == {"first"}
    else:
        assert second == "good"
        assert stored == {"first", "good"}
    assert fetch_value(
        database, "SELECT count(*) FROM project_aliases WHERE alias = 'dangling'"
    ) == 0
    assert fetch_value(
        database, "SELECT count(*) FROM events WHERE stream = :s", s=project.id
    ) == len(stored) + 1


def test_awrite_answers_once_other_connections_see_the_change(
    runtime: Runtime, database: Database
) -> None:
    actor = operator(runtime)
    project = runtime.write(lambda uow: projects.create_project(uow, actor, name="visible"))

    async def run() -> None:
        for index in range(5):
            await runtime.awrite(
                lambda uow, index=index: projects.add_alias(
                    uow, actor, project_id=project.id, alias=f"v{index}"
                )
            )
            assert fetch_value(
                database, "SELECT count(*) FROM project_aliases WHERE alias = :a", a=f"v{index}"
            ) == 1

    asyncio.run(run())


def test_failing_after_commit_work_neither_fails_the_write_nor_stops_the_writer(
    runtime: Runtime, database: Database
) -> None:
    """After-commit work (event wakes, cache fills) runs once the data is durable; if it
    fails, the write is still reported as done, and later writes still run."""
    actor = operator(runtime)
    project = runtime.write(lambda uow: projects.create_project(uow, actor, name="after"))

    def broken_wake() -> None:
        raise RuntimeError("the wake failed")

    def add(alias: str, *, failing: bool) -> Callable[[UnitOfWork], str]:
        def operation(uow: UnitOfWork) -> str:
            projects.add_alias(uow, actor, project_id=project.id, alias=alias)
            if failing:
                uow.after_commit(broken_wake)
            return alias

        return operation

    async def run() -> list[str]:
        first = await runtime.awrite(add("broken-wake", failing=True))
        second = await runtime.awrite(add("next", failing=False))
        return [first, second]

    assert asyncio.run(run()) == ["broken-wake", "next"]
    assert runtime.write(add("sync", failing=True)) == "sync"
    stored = {row["alias"] for row in fetch_all(
        database, "SELECT alias FROM project_aliases WHERE project_id = :p", p=project.id
    )}
    assert stored == {"broken-wake", "next", "sync"}
