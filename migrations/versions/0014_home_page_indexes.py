"""home page: partial indexes for what waits on a person across projects

Tasks in progress (their lease may have run out), jobs still open (with a deadline, and
by attempt: where holds are), integrations whose publish is UNCERTAIN.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-12 10:00:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0014'
down_revision: str | None = '0013'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_IN_PROGRESS = "state = 'IN_PROGRESS'"
_OPEN = "status IN ('REGISTERED', 'RUNNING')"
_OPEN_WITH_DEADLINE = f"expected_deadline IS NOT NULL AND {_OPEN}"
_UNCERTAIN = "state = 'UNCERTAIN'"


def upgrade() -> None:
    op.create_index(
        'ix_tasks_in_progress', 'tasks', ['current_attempt_id'], unique=False,
        sqlite_where=sa.text(_IN_PROGRESS), postgresql_where=sa.text(_IN_PROGRESS),
    )
    op.create_index(
        'ix_jobs_open_deadline', 'jobs', ['expected_deadline'], unique=False,
        sqlite_where=sa.text(_OPEN_WITH_DEADLINE),
        postgresql_where=sa.text(_OPEN_WITH_DEADLINE),
    )
    op.create_index(
        'ix_jobs_open_attempt_id', 'jobs', ['attempt_id'], unique=False,
        sqlite_where=sa.text(_OPEN), postgresql_where=sa.text(_OPEN),
    )
    op.create_index(
        'ix_integrations_uncertain', 'integrations', ['updated_at'], unique=False,
        sqlite_where=sa.text(_UNCERTAIN), postgresql_where=sa.text(_UNCERTAIN),
    )


def downgrade() -> None:
    op.drop_index('ix_integrations_uncertain', table_name='integrations')
    op.drop_index('ix_jobs_open_attempt_id', table_name='jobs')
    op.drop_index('ix_jobs_open_deadline', table_name='jobs')
    op.drop_index('ix_tasks_in_progress', table_name='tasks')
