"""events: on PostgreSQL, numbered after commit below the visibility horizon

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-13 12:00:00.000000

PostgreSQL: an event is written with no number (`seq` NULL) and the id of the
transaction that wrote it (`txid`, filled by its default); readers number the finished
events below the horizon in (txid, id) order (the view `event_log`), and
`hub_number_events` stores those numbers (docs/architecture.md, "The event log").
Events already written keep their numbers; `event_streams.last_seq` stays the last
stored number of each stream. SQLite keeps numbering in the writing transaction; only
`seq` becomes nullable there, so the model is one for both.
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0016'
down_revision: str | None = '0015'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The horizon, `pg_snapshot_xmin(pg_current_snapshot())`: the transactions below it have
# all finished (those that committed are visible to the statement reading it), and no
# new one can take an id below it.

POSTGRESQL_UPGRADE = [
    "ALTER TABLE events ALTER COLUMN seq DROP NOT NULL",
    # Added without the default first: the events already numbered need no transaction id.
    "ALTER TABLE events ADD COLUMN txid xid8",
    "ALTER TABLE events ALTER COLUMN txid SET DEFAULT pg_current_xact_id()",
    "CREATE INDEX ix_events_unnumbered ON events (stream, txid, id) WHERE seq IS NULL",
    """
    CREATE VIEW event_log AS
    SELECT id, stream, seq, project_id, kind, subject_id, actor_id, occurred_at, payload
    FROM events WHERE seq IS NOT NULL
    UNION ALL
    SELECT ranked.id, ranked.stream, COALESCE(streams.last_seq, 0) + ranked.rank,
           ranked.project_id, ranked.kind, ranked.subject_id, ranked.actor_id,
           ranked.occurred_at, ranked.payload
    FROM (
        SELECT e.id, e.stream, e.project_id, e.kind, e.subject_id, e.actor_id,
               e.occurred_at, e.payload,
               row_number() OVER (PARTITION BY e.stream ORDER BY e.txid, e.id) AS rank
        FROM events e
        WHERE e.seq IS NULL AND e.txid < (SELECT pg_snapshot_xmin(pg_current_snapshot()))
    ) AS ranked
    LEFT JOIN event_streams streams ON streams.stream = ranked.stream
    """,
    # Stores what `event_log` computes. Under a try-lock: whoever finds it taken skips
    # (the holder numbers, and readers number for themselves meanwhile), so no writer
    # ever waits here. Each statement after the lock sees the previous holder's numbers.
    """
    CREATE FUNCTION hub_number_events(target text) RETURNS bigint
    LANGUAGE plpgsql AS $$
    DECLARE
        numbered bigint;
    BEGIN
        IF NOT pg_try_advisory_xact_lock(hashtextextended('hub:event-numbers:' || target, 0))
        THEN
            RETURN 0;
        END IF;
        WITH base AS (
            SELECT COALESCE((SELECT last_seq FROM event_streams WHERE stream = target), 0)
                AS last_seq
        ), ranked AS (
            SELECT e.id, row_number() OVER (ORDER BY e.txid, e.id) AS rank
            FROM events e
            WHERE e.stream = target AND e.seq IS NULL
              AND e.txid < (SELECT pg_snapshot_xmin(pg_current_snapshot()))
        )
        UPDATE events SET seq = base.last_seq + ranked.rank
        FROM base, ranked WHERE events.id = ranked.id;
        GET DIAGNOSTICS numbered = ROW_COUNT;
        IF numbered > 0 THEN
            INSERT INTO event_streams AS s (stream, last_seq) VALUES (target, numbered)
            ON CONFLICT (stream) DO UPDATE SET last_seq = s.last_seq + numbered;
        END IF;
        RETURN numbered;
    END
    $$
    """,
]

POSTGRESQL_DOWNGRADE = [
    # Whatever is finished gets its number; an event of a transaction still open then
    # would be left without one, so the column is made NOT NULL only after.
    "SELECT hub_number_events(stream) FROM (SELECT DISTINCT stream FROM events"
    " WHERE seq IS NULL) AS pending",
    "DROP FUNCTION hub_number_events(text)",
    "DROP VIEW event_log",
    "DROP INDEX ix_events_unnumbered",
    "ALTER TABLE events DROP COLUMN txid",
    "ALTER TABLE events ALTER COLUMN seq SET NOT NULL",
]


def upgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        for statement in POSTGRESQL_UPGRADE:
            op.execute(statement)
        return
    with op.batch_alter_table('events') as batch:
        batch.alter_column('seq', existing_type=sa.BigInteger(), nullable=True)


def downgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        for statement in POSTGRESQL_DOWNGRADE:
            op.execute(statement)
        return
    with op.batch_alter_table('events') as batch:
        batch.alter_column('seq', existing_type=sa.BigInteger(), nullable=False)
