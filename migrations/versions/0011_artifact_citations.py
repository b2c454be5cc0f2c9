"""artifact citations: evidence and reviews cite artifacts; EVIDENCE retention without evidence yet

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-08 10:00:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
import hub.storage.base

revision: str = '0011'
down_revision: str | None = '0010'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # An EVIDENCE artifact may now be stored before the evidence that cites it exists.
    with op.batch_alter_table('artifacts', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('ck_artifacts_evidence_retention'), type_='check')

    op.create_table('artifact_citations',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('project_id', sa.String(length=40), nullable=False),
    sa.Column('artifact_id', sa.String(length=40), nullable=False),
    sa.Column('evidence_id', sa.String(length=40), nullable=True),
    sa.Column('review_id', sa.String(length=40), nullable=True),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('cited_at', hub.storage.base.UTCDateTime(timezone=True), nullable=False),
    sa.CheckConstraint('(evidence_id IS NULL) <> (review_id IS NULL)', name=op.f('ck_artifact_citations_one_citer')),
    sa.ForeignKeyConstraint(['project_id', 'artifact_id'], ['artifacts.project_id', 'artifacts.id'], name=op.f('fk_artifact_citations_project_id_artifact_id_artifacts')),
    sa.ForeignKeyConstraint(['project_id', 'evidence_id'], ['evidence.project_id', 'evidence.id'], name=op.f('fk_artifact_citations_project_id_evidence_id_evidence')),
    sa.ForeignKeyConstraint(['project_id', 'review_id'], ['reviews.project_id', 'reviews.id'], name=op.f('fk_artifact_citations_project_id_review_id_reviews')),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_artifact_citations_project_id_projects')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_artifact_citations')),
    sa.UniqueConstraint('evidence_id', 'artifact_id', name=op.f('uq_artifact_citations_evidence_id_artifact_id')),
    sa.UniqueConstraint('review_id', 'artifact_id', name=op.f('uq_artifact_citations_review_id_artifact_id'))
    )
    with op.batch_alter_table('artifact_citations', schema=None) as batch_op:
        batch_op.create_index('ix_artifact_citations_artifact_id', ['artifact_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('artifact_citations', schema=None) as batch_op:
        batch_op.drop_index('ix_artifact_citations_artifact_id')

    op.drop_table('artifact_citations')

    with op.batch_alter_table('artifacts', schema=None) as batch_op:
        batch_op.create_check_constraint(
            batch_op.f('ck_artifacts_evidence_retention'),
            "retention <> 'EVIDENCE' OR evidence_id IS NOT NULL",
        )
