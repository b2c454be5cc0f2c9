"""metrics: indexes that keep a /metrics scrape off the large tables' rows

Attempts counted by state and project from an index alone; the agent sessions not ended
(the live ones are among them); the tasks awaiting review across projects, in the
review queue's order (docs/ops/monitoring.md).

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-14 10:00:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0017'
down_revision: str | None = '0016'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OPEN = "ended_at IS NULL"
_AWAITING_REVIEW = "state = 'AWAITING_REVIEW'"


def upgrade() -> None:
    op.create_index(
        'ix_attempts_state_project_id', 'attempts', ['state', 'project_id'], unique=False
    )
    op.create_index(
        'ix_agent_sessions_open', 'agent_sessions', ['principal_id'], unique=False,
        sqlite_where=sa.text(_OPEN), postgresql_where=sa.text(_OPEN),
    )
    op.create_index(
        'ix_tasks_awaiting_review', 'tasks', ['updated_at'], unique=False,
        sqlite_where=sa.text(_AWAITING_REVIEW), postgresql_where=sa.text(_AWAITING_REVIEW),
    )


def downgrade() -> None:
    op.drop_index('ix_tasks_awaiting_review', table_name='tasks')
    op.drop_index('ix_agent_sessions_open', table_name='agent_sessions')
    op.drop_index('ix_attempts_state_project_id', table_name='attempts')
