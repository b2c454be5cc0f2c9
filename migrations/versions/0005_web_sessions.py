"""dashboard sign-ins kept on the server

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 09:00:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
import hub.storage.base

revision: str = '0005'
down_revision: str | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('web_sessions',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('secret_hash', sa.String(length=64), nullable=False),
    sa.Column('principal_id', sa.String(length=40), nullable=False),
    sa.Column('signed_in_with_token_id', sa.String(length=40), nullable=True),
    sa.Column('created_at', hub.storage.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('last_seen_at', hub.storage.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('ended_at', hub.storage.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('end_reason', sa.String(length=200), nullable=True),
    sa.ForeignKeyConstraint(['principal_id'], ['principals.id'], name=op.f('fk_web_sessions_principal_id_principals')),
    sa.ForeignKeyConstraint(['signed_in_with_token_id'], ['api_tokens.id'], name=op.f('fk_web_sessions_signed_in_with_token_id_api_tokens')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_web_sessions')),
    sa.UniqueConstraint('secret_hash', name=op.f('uq_web_sessions_secret_hash'))
    )
    with op.batch_alter_table('web_sessions', schema=None) as batch_op:
        batch_op.create_index('ix_web_sessions_principal_id', ['principal_id'], unique=False)
        batch_op.create_index('ix_web_sessions_signed_in_with_token_id', ['signed_in_with_token_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('web_sessions', schema=None) as batch_op:
        batch_op.drop_index('ix_web_sessions_signed_in_with_token_id')
        batch_op.drop_index('ix_web_sessions_principal_id')

    op.drop_table('web_sessions')
