"""Rows written by prebuilt statements on the hot mutations (`hub.storage.row_writes`)
read and flush as if the ORM had written them: the row is stored and clean, later
changes to it are written, changes pending on it join the statement, and other rows'
pending changes reach the database first."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import event

from hub.ids import new_id
from hub.projects import service as projects
from hub.runtime import Runtime
from hub.storage.database import Database
from hub.storage.row_writes import insert_row, update_row
from hub.storage.unit_of_work import UnitOfWork
from hub.work.tables import Task
from hub.work.vocabulary import TaskKind, TaskState
from tests.storage.test_write_path import operator
from tests.support.sql import fetch_all, fetch_value

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


def new_task(project_id: str, created_by: str, title: str, **values: object) -> Task:
    """A task with a value for every defaulted column, as `insert_row` needs."""
    defaults: dict[str, object] = {
        "outcome": "",
        "priority": 0,
        "state": TaskState.OPEN,
        "required": True,
        "revision": 1,
        "criteria_revision": 1,
        "generation": 0,
        "blocked_count": 0,
        "search_text": "",
    }
    return Task(
        id=new_id("tsk"),
        project_id=project_id,
        kind=TaskKind.GENERAL,
        title=title,
        created_at=NOW,
        created_by=created_by,
        updated_at=NOW,
        **{**defaults, **values},
    )


@pytest.fixture
def project(runtime: Runtime) -> tuple[str, str]:
    actor = operator(runtime)
    made = runtime.write(lambda uow: projects.create_project(uow, actor, name="rows"))
    return made.id, actor.principal_id


def test_an_inserted_row_is_stored_clean_and_later_changes_flush(
    runtime: Runtime, database: Database, project: tuple[str, str]
) -> None:
    def write(uow: UnitOfWork) -> str:
        task = new_task(*project, "inserted", parent_id=None)
        insert_row(uow.session, task)
        assert uow.session.get(Task, task.id) is task
        assert not uow.session.dirty and not uow.session.new
        task.title = "changed after the insert"
        uow.session.flush()
        return task.id

    task_id = runtime.write(write)
    rows = fetch_all(
        database, "SELECT title, state, parent_id FROM tasks WHERE id = :id", id=task_id
    )
    assert rows == [{"title": "changed after the insert", "state": "OPEN", "parent_id": None}]


def test_a_row_missing_a_defaulted_value_is_refused_before_anything_is_written(
    runtime: Runtime, database: Database, project: tuple[str, str]
) -> None:
    def write(uow: UnitOfWork) -> None:
        task = new_task(*project, "incomplete")
        del task.priority  # a column with a default, not given
        insert_row(uow.session, task)

    with pytest.raises(TypeError, match="priority"):
        runtime.write(write)
    assert fetch_value(database, "SELECT count(*) FROM tasks WHERE title = 'incomplete'") == 0


def test_an_update_takes_the_rows_pending_changes_and_follows_the_others(
    runtime: Runtime, database: Database, project: tuple[str, str]
) -> None:
    def create(uow: UnitOfWork) -> tuple[str, str]:
        first, second = new_task(*project, "first"), new_task(*project, "second")
        insert_row(uow.session, first)
        insert_row(uow.session, second)
        return first.id, second.id

    first_id, second_id = runtime.write(create)
    updates: list[str] = []

    def change(uow: UnitOfWork) -> None:
        first, second = uow.session.get(Task, first_id), uow.session.get(Task, second_id)
        assert first is not None and second is not None
        second.title = "second, changed before"  # another row's pending change
        first.title = "first, pending"  # this row's own pending change
        connection = uow.session.connection()

        def saw(_c: object, _cur: object, statement: str, parameters: object, *_: object) -> None:
            if statement.startswith("UPDATE tasks"):
                updates.append(first_id if first_id in str(parameters) else second_id)

        event.listen(connection, "before_cursor_execute", saw)
        try:
            update_row(uow.session, first, {"priority": 7})
            uow.session.flush()  # nothing left to write
        finally:
            event.remove(connection, "before_cursor_execute", saw)
        assert (first.priority, first.title) == (7, "first, pending")
        assert not uow.session.dirty

    runtime.write(change)
    assert updates == [second_id, first_id]  # one statement for the row, after the other's
    rows = fetch_all(database, "SELECT title, priority FROM tasks ORDER BY priority, title")
    assert rows == [
        {"title": "second, changed before", "priority": 0},
        {"title": "first, pending", "priority": 7},
    ]


def test_an_update_in_a_failed_operation_leaves_nothing(
    runtime: Runtime, database: Database, project: tuple[str, str]
) -> None:
    task_id = runtime.write(lambda uow: _inserted(uow, new_task(*project, "kept")))

    def change(uow: UnitOfWork) -> None:
        task = uow.session.get(Task, task_id)
        assert task is not None
        update_row(uow.session, task, {"title": "never stored"})
        raise RuntimeError("the operation fails after the update")

    with pytest.raises(RuntimeError):
        runtime.write(change)
    assert fetch_value(database, "SELECT title FROM tasks WHERE id = :id", id=task_id) == "kept"


def _inserted(uow: UnitOfWork, task: Task) -> str:
    insert_row(uow.session, task)
    return task.id
