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

# Expression indexes (e.g. `priority DESC`) reflect differently on each backend, so
# autogenerate cannot compare them; their migrations are written by hand.
HAND_WRITTEN_INDEXES = {"ix_tasks_ready"}


def include_object(obj: object, name: str | None, type_: str, reflected: bool, compare_to: object) -> bool:
    return not (type_ == "index" and name in HAND_WRITTEN_INDEXES)


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
