"""Migration 0012 backfills the full-text index of tasks stored before it, on both
databases, and its downgrade removes the index and the text."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa
from alembic import command

from hub.clock import ManualClock
from hub.identity import service as identity
from hub.projects import service as projects
from hub.runtime import Runtime
from hub.storage import migrations
from hub.storage.unit_of_work import UnitOfWork
from hub.work import service as work
from tests.conftest import runtime_settings
from tests.support.sql import fetch_all

if TYPE_CHECKING:
    from tests.conftest import TestDatabase


def test_tasks_stored_before_the_index_are_found_after_it(
    fresh_database: TestDatabase, tmp_path: Path
) -> None:
    database = fresh_database.database
    migrations.upgrade_to_head(database)
    runtime = Runtime(
        runtime_settings(fresh_database.url, tmp_path), database=database, clock=ManualClock()
    )
    try:

        def setup(uow: UnitOfWork) -> str:
            person = identity.create_principal(uow, name="op", kind="human", operator=True)
            token = identity.create_token(uow, principal=person.id).plaintext
            return token

        token = runtime.write(setup)
        actor = runtime.read(lambda uow: identity.authenticate(uow, token))
        project = runtime.write(lambda uow: projects.create_project(uow, actor, name="p")).id

        def create(title: str, criteria: list[str]) -> str:
            command_ = work.NewTask(
                project_id=project, kind="GENERAL", title=title, acceptance_criteria=criteria
            )
            made = runtime.write(lambda uow: work.create_task(uow, actor, command_))
            return made.value.task.id

        login = create("Log in with a token", ["tokens from a file work"])
        create("Dark mode", ["every page"])

        # Back to before the index: the text goes with it.
        command.downgrade(migrations.alembic_config(database), "0011")
        columns = {c["name"] for c in sa.inspect(database.engine).get_columns("tasks")}
        assert "search_text" not in columns and "search_vector" not in columns
        assert "task_search" not in sa.inspect(database.engine).get_table_names()

        migrations.upgrade_to_head(database)
        migrations.check_no_drift(database)
        rows = fetch_all(database, "SELECT id, search_text FROM tasks ORDER BY title")
        # Title, outcome (empty here) and criteria, as the work module writes them.
        assert [row["search_text"] for row in rows] == [
            "dark mode\n\nevery page",
            "log token\n\ntokens file work",
        ]
        found = runtime.read(
            lambda uow: work.similar_tasks(uow, project_id=project, text="file tokens")
        )
        assert [(match.task.id, match.shared_words) for match in found] == [(login, 2)]
    finally:
        runtime.release_threads()
