"""work: the board's indexes (a group's page in its order)

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-12 06:30:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0015'
down_revision: str | None = '0014'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        'ix_tasks_board', 'tasks', ['project_id', 'state', sa.text('priority DESC'), 'id'],
        unique=False,
    )
    op.create_index(
        'ix_tasks_board_recent', 'tasks', ['project_id', 'state', 'updated_at'], unique=False
    )
    blocked = "blocked_count > 0"
    op.create_index(
        'ix_tasks_board_blocked', 'tasks', ['project_id', 'state', sa.text('priority DESC'), 'id'],
        unique=False, sqlite_where=sa.text(blocked), postgresql_where=sa.text(blocked),
    )


def downgrade() -> None:
    op.drop_index('ix_tasks_board_blocked', table_name='tasks')
    op.drop_index('ix_tasks_board_recent', table_name='tasks')
    op.drop_index('ix_tasks_board', table_name='tasks')
