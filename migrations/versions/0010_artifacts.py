"""artifacts: metadata of uploaded files and external links

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 22:22:32.237703
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
import hub.storage.base

revision: str = '0010'
down_revision: str | None = '0009'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # First the target of the artifacts' composite reference to their review.
    with op.batch_alter_table('reviews', schema=None) as batch_op:
        batch_op.create_unique_constraint(batch_op.f('uq_reviews_project_id_id'), ['project_id', 'id'])

    op.create_table('artifacts',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('project_id', sa.String(length=40), nullable=False),
    sa.Column('kind', sa.String(length=8), nullable=False),
    sa.Column('state', sa.String(length=12), nullable=False),
    sa.Column('task_id', sa.String(length=40), nullable=True),
    sa.Column('attempt_id', sa.String(length=40), nullable=True),
    sa.Column('job_id', sa.String(length=40), nullable=True),
    sa.Column('evidence_id', sa.String(length=40), nullable=True),
    sa.Column('review_id', sa.String(length=40), nullable=True),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('media_type', sa.String(length=255), nullable=False),
    sa.Column('sniffed_media_type', sa.String(length=255), nullable=True),
    sa.Column('media_type_mismatch', sa.Boolean(), nullable=False),
    sa.Column('size_bytes', sa.BigInteger(), nullable=True),
    sa.Column('sha256', sa.String(length=64), nullable=True),
    sa.Column('reserved_bytes', sa.BigInteger(), nullable=False),
    sa.Column('storage_key', sa.String(length=200), nullable=True),
    sa.Column('url', sa.String(length=2000), nullable=True),
    sa.Column('accessibility', sa.String(length=12), nullable=True),
    sa.Column('retention', sa.String(length=12), nullable=False),
    sa.Column('author_id', sa.String(length=40), nullable=False),
    sa.Column('session_id', sa.String(length=40), nullable=True),
    sa.Column('created_at', hub.storage.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('available_at', hub.storage.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('expires_at', hub.storage.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('gone_at', hub.storage.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('gone_reason', sa.Text(), nullable=True),
    sa.Column('gone_by', sa.String(length=40), nullable=True),
    sa.CheckConstraint("(kind = 'FILE') = (storage_key IS NOT NULL)", name=op.f('ck_artifacts_file')),
    sa.CheckConstraint("(kind = 'LINK') = (url IS NOT NULL AND accessibility IS NOT NULL)", name=op.f('ck_artifacts_link')),
    sa.CheckConstraint("(state IN ('DELETED', 'EXPIRED')) = (gone_at IS NOT NULL AND gone_reason IS NOT NULL)", name=op.f('ck_artifacts_gone')),
    sa.CheckConstraint("accessibility IN ('SHARED', 'LOCAL_ONLY', 'UNAVAILABLE')", name=op.f('ck_artifacts_accessibility')),
    sa.CheckConstraint("kind IN ('FILE', 'LINK')", name=op.f('ck_artifacts_kind')),
    sa.CheckConstraint("reserved_bytes >= 0 AND (state = 'STAGED' OR reserved_bytes = 0)", name=op.f('ck_artifacts_reserved')),
    sa.CheckConstraint("retention <> 'EVIDENCE' OR evidence_id IS NOT NULL", name=op.f('ck_artifacts_evidence_retention')),
    sa.CheckConstraint("retention IN ('LOG', 'REPORT', 'EVIDENCE')", name=op.f('ck_artifacts_retention')),
    sa.CheckConstraint("state <> 'AVAILABLE' OR kind = 'LINK' OR (size_bytes IS NOT NULL AND sha256 IS NOT NULL)", name=op.f('ck_artifacts_stored')),
    sa.CheckConstraint("state <> 'DELETED' OR gone_by IS NOT NULL", name=op.f('ck_artifacts_deleted_by')),
    sa.CheckConstraint("state IN ('STAGED', 'AVAILABLE', 'DELETED', 'EXPIRED')", name=op.f('ck_artifacts_state')),
    sa.ForeignKeyConstraint(['author_id'], ['principals.id'], name=op.f('fk_artifacts_author_id_principals')),
    sa.ForeignKeyConstraint(['gone_by'], ['principals.id'], name=op.f('fk_artifacts_gone_by_principals')),
    sa.ForeignKeyConstraint(['project_id', 'attempt_id'], ['attempts.project_id', 'attempts.id'], name=op.f('fk_artifacts_project_id_attempt_id_attempts')),
    sa.ForeignKeyConstraint(['project_id', 'evidence_id'], ['evidence.project_id', 'evidence.id'], name=op.f('fk_artifacts_project_id_evidence_id_evidence')),
    sa.ForeignKeyConstraint(['project_id', 'job_id'], ['jobs.project_id', 'jobs.id'], name=op.f('fk_artifacts_project_id_job_id_jobs')),
    sa.ForeignKeyConstraint(['project_id', 'review_id'], ['reviews.project_id', 'reviews.id'], name=op.f('fk_artifacts_project_id_review_id_reviews')),
    sa.ForeignKeyConstraint(['project_id', 'task_id'], ['tasks.project_id', 'tasks.id'], name=op.f('fk_artifacts_project_id_task_id_tasks')),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_artifacts_project_id_projects')),
    sa.ForeignKeyConstraint(['session_id'], ['agent_sessions.id'], name=op.f('fk_artifacts_session_id_agent_sessions')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_artifacts')),
    sa.UniqueConstraint('project_id', 'id', name=op.f('uq_artifacts_project_id_id'))
    )
    with op.batch_alter_table('artifacts', schema=None) as batch_op:
        batch_op.create_index('ix_artifacts_evidence_id', ['evidence_id'], unique=False)
        batch_op.create_index('ix_artifacts_job_id', ['job_id'], unique=False)
        batch_op.create_index('ix_artifacts_project_id_state', ['project_id', 'state'], unique=False)
        batch_op.create_index('ix_artifacts_review_id', ['review_id'], unique=False)
        batch_op.create_index('ix_artifacts_state_expires_at', ['state', 'expires_at'], unique=False)
        batch_op.create_index('ix_artifacts_task_id', ['task_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('artifacts', schema=None) as batch_op:
        batch_op.drop_index('ix_artifacts_task_id')
        batch_op.drop_index('ix_artifacts_state_expires_at')
        batch_op.drop_index('ix_artifacts_review_id')
        batch_op.drop_index('ix_artifacts_project_id_state')
        batch_op.drop_index('ix_artifacts_job_id')
        batch_op.drop_index('ix_artifacts_evidence_id')

    op.drop_table('artifacts')

    with op.batch_alter_table('reviews', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('uq_reviews_project_id_id'), type_='unique')
