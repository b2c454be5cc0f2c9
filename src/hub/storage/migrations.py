"""Alembic, driven from code: one migration history for SQLite and PostgreSQL."""

from __future__ import annotations

from enum import StrEnum
from functools import lru_cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.script.revision import RevisionError
from alembic.util.exc import CommandError

from hub.bundled import data_dir
from hub.storage.database import Database


def migrations_dir() -> Path:
    """Where the migration scripts are: inside the package when installed (hub.bundled)."""
    return data_dir("migrations")


def alembic_config(database: Database) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    config.set_main_option(
        "sqlalchemy.url", database.url.render_as_string(hide_password=False).replace("%", "%%")
    )
    config.attributes["engine"] = database.engine
    return config


def upgrade_to_head(database: Database) -> None:
    command.upgrade(alembic_config(database), "head")


@lru_cache(maxsize=4)
def _scripts(location: Path) -> ScriptDirectory:
    """The migration scripts, read once: they do not change under a running process, and
    readiness probes and metric scrapes ask for the head every few seconds."""
    return ScriptDirectory(str(location))


def head_revision(database: Database) -> str | None:
    return _scripts(migrations_dir()).get_current_head()


def is_known_revision(database: Database, revision: str) -> bool:
    """Whether `revision` is in this hub's migration history."""
    try:
        return _scripts(migrations_dir()).get_revision(revision) is not None
    except (RevisionError, CommandError):
        return False


def current_revision(database: Database) -> str | None:
    with database.engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def is_at_head(database: Database) -> bool:
    return current_revision(database) == head_revision(database)


class SchemaState(StrEnum):
    """The database's schema as this hub's code sees it."""

    CURRENT = "current"  # at this code's head
    BEHIND = "behind"  # never migrated, or short of this code's head: `hub db upgrade`
    # At a revision this code does not know: a newer hub's `hub db upgrade` ran first, as
    # a rolling deploy does (docs/ops/deploying.md, "Migrations during a rolling
    # restart"). Its migrations only add what older code ignores, so this code serves.
    AHEAD = "ahead"


def schema_state(database: Database) -> SchemaState:
    current = current_revision(database)
    if current == head_revision(database):
        return SchemaState.CURRENT
    if current is None or is_known_revision(database, current):
        return SchemaState.BEHIND
    return SchemaState.AHEAD


def check_no_drift(database: Database) -> None:
    """Raise if the models and the migrated database differ (`alembic check`)."""
    command.check(alembic_config(database))
