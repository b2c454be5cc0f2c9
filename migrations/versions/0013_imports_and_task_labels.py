"""imports: reports, each source item's import state; task labels

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-10 10:00:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
import hub.storage.base
from sqlalchemy.dialects import postgresql

revision: str = '0013'
down_revision: str | None = '0012'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('import_reports',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('project_id', sa.String(length=40), nullable=False),
    sa.Column('principal_id', sa.String(length=40), nullable=False),
    sa.Column('session_id', sa.String(length=40), nullable=True),
    sa.Column('created_at', hub.storage.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('source', sa.String(length=200), nullable=False),
    sa.Column('dry_run', sa.Boolean(), nullable=False),
    sa.Column('partial', sa.Boolean(), nullable=False),
    sa.Column('created', sa.Integer(), nullable=False),
    sa.Column('updated', sa.Integer(), nullable=False),
    sa.Column('unchanged', sa.Integer(), nullable=False),
    sa.Column('conflicts', sa.Integer(), nullable=False),
    sa.Column('skipped_closed', sa.Integer(), nullable=False),
    sa.Column('invalid', sa.Integer(), nullable=False),
    sa.Column('items', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.ForeignKeyConstraint(['principal_id'], ['principals.id'], name=op.f('fk_import_reports_principal_id_principals')),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_import_reports_project_id_projects')),
    sa.ForeignKeyConstraint(['session_id'], ['agent_sessions.id'], name=op.f('fk_import_reports_session_id_agent_sessions')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_import_reports')),
    sa.UniqueConstraint('project_id', 'id', name=op.f('uq_import_reports_project_id_id'))
    )
    op.create_table('import_sources',
    sa.Column('project_id', sa.String(length=40), nullable=False),
    sa.Column('source_system', sa.String(length=100), nullable=False),
    sa.Column('source_id', sa.String(length=200), nullable=False),
    sa.Column('task_id', sa.String(length=40), nullable=False),
    sa.Column('fingerprint', sa.String(length=64), nullable=False),
    sa.Column('task_revision', sa.Integer(), nullable=False),
    sa.Column('report_id', sa.String(length=40), nullable=False),
    sa.Column('imported_at', hub.storage.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['project_id', 'report_id'], ['import_reports.project_id', 'import_reports.id'], name=op.f('fk_import_sources_project_id_report_id_import_reports')),
    sa.ForeignKeyConstraint(['project_id', 'task_id'], ['tasks.project_id', 'tasks.id'], name=op.f('fk_import_sources_project_id_task_id_tasks')),
    sa.PrimaryKeyConstraint('project_id', 'source_system', 'source_id', name=op.f('pk_import_sources'))
    )
    op.create_table('task_labels',
    sa.Column('task_id', sa.String(length=40), nullable=False),
    sa.Column('label', sa.String(length=100), nullable=False),
    sa.Column('project_id', sa.String(length=40), nullable=False),
    sa.ForeignKeyConstraint(['project_id', 'task_id'], ['tasks.project_id', 'tasks.id'], name=op.f('fk_task_labels_project_id_task_id_tasks')),
    sa.PrimaryKeyConstraint('task_id', 'label', name=op.f('pk_task_labels'))
    )
    with op.batch_alter_table('task_labels', schema=None) as batch_op:
        batch_op.create_index('ix_task_labels_project_id_label', ['project_id', 'label'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('task_labels', schema=None) as batch_op:
        batch_op.drop_index('ix_task_labels_project_id_label')

    op.drop_table('task_labels')
    op.drop_table('import_sources')
    op.drop_table('import_reports')
