"""events: on PostgreSQL, placed just before commit and numbered below the horizon

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-13 12:00:00.000000

PostgreSQL: a writing transaction takes one place in the log from the sequence
`event_positions` just before it commits (`hub_event_ticket`) and writes its events with
that place (`log_position`) and no number (`seq` NULL). The *horizon*
(`hub_event_horizon`) is the lowest place still held by a running transaction; readers
number the events placed below it densely per stream in (place, id) order after the
stream's last stored number, and `hub_number_events` stores those numbers
(docs/architecture.md, "The event log"). Events already written keep their numbers;
`event_streams.last_seq` stays the last stored number of each stream. SQLite keeps
numbering in the writing transaction; only `seq` becomes nullable there, so the model is
one for both.
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0016'
down_revision: str | None = '0015'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Advisory lock keys (bigint): a transaction holding place n holds `PLACE_BASE + n`
# until it ends; the lock's high 32 bits (`classid` in pg_locks) identify the range
# (places below 2^40). `TICKET` is held, for one statement, by whoever takes a place or
# reads the horizon, so that no reader looks between a place's `nextval` and its lock.
PLACE_CLASS = 0x48554245
PLACE_BASE = PLACE_CLASS << 32
TICKET = PLACE_BASE - 1

POSTGRESQL_UPGRADE = [
    "ALTER TABLE events ALTER COLUMN seq DROP NOT NULL",
    "ALTER TABLE events ADD COLUMN log_position bigint",
    "CREATE SEQUENCE event_positions AS bigint",
    "CREATE INDEX ix_events_unnumbered ON events (stream, log_position, id) WHERE seq IS NULL",
    # A writer's place. The ticket is a session lock (a transaction lock would be held to
    # the commit, which is the queue this design removes), so it is released on every
    # path out, errors and cancellation included.
    f"""
    CREATE FUNCTION hub_event_ticket() RETURNS bigint
    LANGUAGE plpgsql AS $$
    DECLARE
        taken bigint;
    BEGIN
        PERFORM pg_advisory_lock({TICKET});
        BEGIN
            taken := nextval('event_positions');
            PERFORM pg_advisory_xact_lock({PLACE_BASE} + taken);
        EXCEPTION WHEN OTHERS OR query_canceled THEN
            PERFORM pg_advisory_unlock({TICKET});
            RAISE;
        END;
        PERFORM pg_advisory_unlock({TICKET});
        RETURN taken;
    END
    $$
    """,
    # The lowest place a running transaction of this database holds, or the next place
    # if none: every place below it belongs to a transaction that has ended (committed:
    # visible to any snapshot taken after this call; aborted: its rows never are).
    f"""
    CREATE FUNCTION hub_event_horizon() RETURNS bigint
    LANGUAGE plpgsql AS $$
    DECLARE
        running bigint;
        top bigint;
    BEGIN
        PERFORM pg_advisory_lock_shared({TICKET});
        BEGIN
            SELECT min(((l.classid::bigint << 32) | l.objid::bigint) - {PLACE_BASE})
            INTO running
            FROM pg_locks l
            WHERE l.locktype = 'advisory' AND l.objsubid = 1
              AND l.classid::bigint BETWEEN {PLACE_CLASS} AND {PLACE_CLASS + 255}
              AND l.database = (SELECT oid FROM pg_database
                                WHERE datname = current_database());
            SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END
            INTO top FROM event_positions;
        EXCEPTION WHEN OTHERS OR query_canceled THEN
            PERFORM pg_advisory_unlock_shared({TICKET});
            RAISE;
        END;
        PERFORM pg_advisory_unlock_shared({TICKET});
        RETURN COALESCE(running, top + 1);
    END
    $$
    """,  # noqa: S608 (constants of this file, no input)
    # Stores the numbers readers compute. Under a try-lock: whoever finds it taken skips
    # (the holder numbers, and readers number for themselves meanwhile), so no writer
    # ever waits here. The horizon is read first and the events after, in a statement
    # of its own (a newer snapshot): everything placed below it that committed is seen.
    """
    CREATE FUNCTION hub_number_events(target text) RETURNS bigint
    LANGUAGE plpgsql AS $$
    DECLARE
        below bigint;
        numbered bigint;
    BEGIN
        IF NOT pg_try_advisory_xact_lock(hashtextextended('hub:event-numbers:' || target, 0))
        THEN
            RETURN 0;
        END IF;
        below := hub_event_horizon();
        WITH base AS (
            SELECT COALESCE((SELECT last_seq FROM event_streams WHERE stream = target), 0)
                AS last_seq
        ), ranked AS (
            SELECT e.id, row_number() OVER (ORDER BY e.log_position, e.id) AS rank
            FROM events e
            WHERE e.stream = target AND e.seq IS NULL AND e.log_position < below
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
    "DROP FUNCTION hub_event_horizon()",
    "DROP FUNCTION hub_event_ticket()",
    "DROP INDEX ix_events_unnumbered",
    "DROP SEQUENCE event_positions",
    "ALTER TABLE events DROP COLUMN log_position",
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
