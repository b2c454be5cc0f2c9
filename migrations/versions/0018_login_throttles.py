"""identity: dashboard sign-in attempts counted per name and per address

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-07 23:30:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
import hub.storage.base

revision: str = '0018'
down_revision: str | None = '0017'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('login_throttles',
    sa.Column('throttled_by', sa.String(length=16), nullable=False),
    sa.Column('key', sa.String(length=200), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('window_started_at', hub.storage.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('locked_until', hub.storage.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('expires_at', hub.storage.base.UTCDateTime(timezone=True), nullable=False),
    sa.CheckConstraint("throttled_by IN ('account', 'address')", name=op.f('ck_login_throttles_throttled_by')),
    sa.PrimaryKeyConstraint('throttled_by', 'key', name=op.f('pk_login_throttles'))
    )
    with op.batch_alter_table('login_throttles', schema=None) as batch_op:
        batch_op.create_index('ix_login_throttles_expires_at', ['expires_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('login_throttles', schema=None) as batch_op:
        batch_op.drop_index('ix_login_throttles_expires_at')

    op.drop_table('login_throttles')
