"""knowledge search: the full-text index of lesson versions, one per database

Written by hand (autogenerate knows neither object; `migrations/env.py` leaves them out
of its comparison):

- SQLite: `lesson_search`, an FTS5 table whose content is `lesson_versions`
  (external content: the text is stored once), kept in step by triggers on
  `lesson_versions`. Porter stemming over the unicode61 tokenizer.
- PostgreSQL: `lesson_versions.search_vector`, a stored generated `tsvector` of
  `search_text` (the `english` configuration), with a GIN index.

`search_text` is the version's words as `hub.storage.fulltext` writes them (lower-case,
no stop words), so both databases index the same words. A later migration that copies
`lesson_versions` on SQLite (a batch alteration) drops these triggers with the old table
and may renumber its rows: it recreates the triggers and rebuilds the index
(`INSERT INTO lesson_search(lesson_search) VALUES ('rebuild')`).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02 10:00:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = '0008'
down_revision: str | None = '0007'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQLITE_UPGRADE = [
    """
    CREATE VIRTUAL TABLE lesson_search USING fts5(
        search_text,
        content='lesson_versions',
        content_rowid='rowid',
        tokenize='porter unicode61 remove_diacritics 0'
    )
    """,
    """
    CREATE TRIGGER lesson_search_insert AFTER INSERT ON lesson_versions BEGIN
        INSERT INTO lesson_search(rowid, search_text) VALUES (new.rowid, new.search_text);
    END
    """,
    """
    CREATE TRIGGER lesson_search_delete AFTER DELETE ON lesson_versions BEGIN
        INSERT INTO lesson_search(lesson_search, rowid, search_text)
        VALUES ('delete', old.rowid, old.search_text);
    END
    """,
    # Versions are never changed; should one be (a data repair), the index follows.
    """
    CREATE TRIGGER lesson_search_update AFTER UPDATE OF search_text ON lesson_versions BEGIN
        INSERT INTO lesson_search(lesson_search, rowid, search_text)
        VALUES ('delete', old.rowid, old.search_text);
        INSERT INTO lesson_search(rowid, search_text) VALUES (new.rowid, new.search_text);
    END
    """,
    # The versions stored before this migration.
    "INSERT INTO lesson_search(lesson_search) VALUES ('rebuild')",
]

SQLITE_DOWNGRADE = [
    "DROP TRIGGER lesson_search_update",
    "DROP TRIGGER lesson_search_delete",
    "DROP TRIGGER lesson_search_insert",
    "DROP TABLE lesson_search",
]

POSTGRESQL_UPGRADE = [
    """
    ALTER TABLE lesson_versions ADD COLUMN search_vector tsvector
        GENERATED ALWAYS AS (to_tsvector('english'::regconfig, search_text)) STORED
    """,
    "CREATE INDEX ix_lesson_versions_search_vector ON lesson_versions USING gin (search_vector)",
]

POSTGRESQL_DOWNGRADE = [
    "DROP INDEX ix_lesson_versions_search_vector",
    "ALTER TABLE lesson_versions DROP COLUMN search_vector",
]


def upgrade() -> None:
    for statement in _per_dialect(SQLITE_UPGRADE, POSTGRESQL_UPGRADE):
        op.execute(statement)


def downgrade() -> None:
    for statement in _per_dialect(SQLITE_DOWNGRADE, POSTGRESQL_DOWNGRADE):
        op.execute(statement)


def _per_dialect(sqlite: list[str], postgresql: list[str]) -> list[str]:
    name = op.get_context().dialect.name
    if name == "sqlite":
        return sqlite
    if name == "postgresql":
        return postgresql
    raise RuntimeError(f"no full-text index for {name}")
