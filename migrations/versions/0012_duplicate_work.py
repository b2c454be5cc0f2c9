"""duplicate work: the full-text index of tasks; already-satisfied submissions cite evidence

- `tasks.search_text`: the words of a task's title, outcome and current acceptance
  criteria, as `hub.storage.fulltext` writes them (lower-case, no stop words), kept by
  the work module on every create and edit; backfilled here for the tasks stored before
  (workflow tasks, opened for a submission, are not searched and keep '').
- The full-text index of tasks, one per database, written by hand as migration 0008's
  lesson index is (autogenerate knows neither object; `migrations/env.py` leaves them out
  of its comparison): on SQLite `task_search`, an FTS5 table whose content is `tasks`,
  kept by triggers on `tasks`; on PostgreSQL `tasks.search_vector`, a stored generated
  `tsvector` of `search_text`, with a GIN index. A later migration that copies `tasks`
  on SQLite (a batch alteration) drops these triggers with the old table and may
  renumber its rows: it recreates the triggers and rebuilds the index
  (`INSERT INTO task_search(task_search) VALUES ('rebuild')`).
- `submissions.outcome` widens to 24 characters (`ALREADY_SATISFIED`), and
  `submissions.evidence_ids` holds the evidence records a submission cites.

The backfill computes the words with its own copy of the word rules, so this migration
does the same whatever later code does.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-10 10:00:00.000000
"""
from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0012'
down_revision: str | None = '0011'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQLITE_UPGRADE = [
    """
    CREATE VIRTUAL TABLE task_search USING fts5(
        search_text,
        content='tasks',
        content_rowid='rowid',
        tokenize='porter unicode61 remove_diacritics 0'
    )
    """,
    """
    CREATE TRIGGER task_search_insert AFTER INSERT ON tasks BEGIN
        INSERT INTO task_search(rowid, search_text) VALUES (new.rowid, new.search_text);
    END
    """,
    """
    CREATE TRIGGER task_search_delete AFTER DELETE ON tasks BEGIN
        INSERT INTO task_search(task_search, rowid, search_text)
        VALUES ('delete', old.rowid, old.search_text);
    END
    """,
    # Tasks are edited (title, outcome, criteria): the index follows each new text.
    """
    CREATE TRIGGER task_search_update AFTER UPDATE OF search_text ON tasks BEGIN
        INSERT INTO task_search(task_search, rowid, search_text)
        VALUES ('delete', old.rowid, old.search_text);
        INSERT INTO task_search(rowid, search_text) VALUES (new.rowid, new.search_text);
    END
    """,
    # The tasks stored before this migration (their text backfilled first).
    "INSERT INTO task_search(task_search) VALUES ('rebuild')",
]

SQLITE_DOWNGRADE = [
    "DROP TRIGGER task_search_update",
    "DROP TRIGGER task_search_delete",
    "DROP TRIGGER task_search_insert",
    "DROP TABLE task_search",
]

POSTGRESQL_UPGRADE = [
    """
    ALTER TABLE tasks ADD COLUMN search_vector tsvector
        GENERATED ALWAYS AS (to_tsvector('english'::regconfig, search_text)) STORED
    """,
    "CREATE INDEX ix_tasks_search_vector ON tasks USING gin (search_vector)",
]

POSTGRESQL_DOWNGRADE = [
    "DROP INDEX ix_tasks_search_vector",
    "ALTER TABLE tasks DROP COLUMN search_vector",
]

# hub.storage.fulltext's word rules as they were when this migration was written.
_WORD = re.compile(r"[^\W_]+")
_STOP_WORDS = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves what
    which who whom this that these those am is are was were be been being have has had
    having do does did doing a an the and but if or because as until while of at by for
    with about against between into through during before after above below to from up
    down in out on off over under again further then once here there when where why how
    all any both each few more most other some such no nor not only own same so than too
    very s t can will just don should now
    """.split()
)


def _words(text: str) -> str:
    return " ".join(
        word for word in _WORD.findall(text.lower()) if word not in _STOP_WORDS and len(word) <= 100
    )


def _search_text(title: str, outcome: str, criteria: Any) -> str:
    if isinstance(criteria, str):  # JSON as text on SQLite
        criteria = json.loads(criteria)
    return "\n".join(_words(part) for part in (title, outcome or "", *(criteria or [])))


def upgrade() -> None:
    op.add_column('tasks', sa.Column('search_text', sa.Text(), server_default='', nullable=False))
    connection = op.get_bind()
    rows = connection.execute(
        sa.text(
            "SELECT tasks.id, tasks.title, tasks.outcome, task_criteria.criteria FROM tasks"
            " JOIN task_criteria ON task_criteria.task_id = tasks.id"
            " AND task_criteria.revision = tasks.criteria_revision"
            " WHERE tasks.subject_submission_id IS NULL"
        )
    ).all()
    texts = [
        {"id": task_id, "text": _search_text(title, outcome, criteria)}
        for task_id, title, outcome, criteria in rows
    ]
    if texts:
        connection.execute(sa.text("UPDATE tasks SET search_text = :text WHERE id = :id"), texts)
    for statement in _per_dialect(SQLITE_UPGRADE, POSTGRESQL_UPGRADE):
        op.execute(statement)

    with op.batch_alter_table('submissions', schema=None) as batch_op:
        batch_op.alter_column(
            'outcome',
            existing_type=sa.String(length=16),
            type_=sa.String(length=24),
            existing_nullable=False,
        )
        batch_op.add_column(
            sa.Column(
                'evidence_ids',
                sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'),
                server_default='[]',
                nullable=False,
            )
        )


def downgrade() -> None:
    with op.batch_alter_table('submissions', schema=None) as batch_op:
        batch_op.drop_column('evidence_ids')
        batch_op.alter_column(
            'outcome',
            existing_type=sa.String(length=24),
            type_=sa.String(length=16),
            existing_nullable=False,
        )
    for statement in _per_dialect(SQLITE_DOWNGRADE, POSTGRESQL_DOWNGRADE):
        op.execute(statement)
    op.drop_column('tasks', 'search_text')


def _per_dialect(sqlite: list[str], postgresql: list[str]) -> list[str]:
    name = op.get_context().dialect.name
    if name == "sqlite":
        return sqlite
    if name == "postgresql":
        return postgresql
    raise RuntimeError(f"no full-text index for {name}")
