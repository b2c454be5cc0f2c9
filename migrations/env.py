"""Alembic environment: one history for SQLite and PostgreSQL.

`render_as_batch` lets SQLite alter tables (copy-and-move); the naming convention on
`Base.metadata` keeps constraint names identical on both backends.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from hub.tables import metadata
from hub.storage.database import normalise_database_url

config = context.config

# Objects the models do not declare, written by hand in their migrations, which
# autogenerate must neither compare nor offer to drop:
# - expression indexes (e.g. `priority DESC`), which reflect differently on each backend;
# - the full-text indexes of lesson versions (0008) and of tasks (0012), one per
#   database: on SQLite the FTS5 tables `lesson_search` and `task_search` (and the shadow
#   tables FTS5 keeps for them), on PostgreSQL the generated columns `search_vector` of
#   `lesson_versions` and `tasks` and their GIN indexes;
# - the event log's PostgreSQL-only numbering (0016): the column `events.log_position`
#   and the partial index of unnumbered events (its sequence and functions are not
#   compared: alembic compares neither).
HAND_WRITTEN_INDEXES = {
    "ix_tasks_ready",
    "ix_tasks_board",
    "ix_tasks_board_blocked",
    "ix_lesson_versions_search_vector",
    "ix_tasks_search_vector",
    "ix_events_unnumbered",
}
HAND_WRITTEN_TABLES = ("lesson_search", "task_search")
HAND_WRITTEN_COLUMNS = {
    ("lesson_versions", "search_vector"),
    ("tasks", "search_vector"),
    ("events", "log_position"),
}


def include_object(obj: object, name: str | None, type_: str, reflected: bool, compare_to: object) -> bool:
    if type_ == "index":
        return name not in HAND_WRITTEN_INDEXES
    if type_ == "table":
        return not any(
            name == table or (name or "").startswith(f"{table}_") for table in HAND_WRITTEN_TABLES
        )
    if type_ == "column":
        table = getattr(getattr(obj, "table", None), "name", None)
        return (table, name) not in HAND_WRITTEN_COLUMNS
    return True


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=metadata,
        literal_binds=True,
        render_as_batch=True,
        compare_type=True,
        include_object=include_object,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = config.attributes.get("engine")
    if engine is None:
        engine = create_engine(normalise_database_url(config.get_main_option("sqlalchemy.url") or ""))
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=metadata,
            render_as_batch=True,
            compare_type=True,
            include_object=include_object,
        )
        with context.begin_transaction():
            context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
