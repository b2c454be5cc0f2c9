"""knowledge: lessons (versions, tags, disputes, ratings), binding rules (versions) and
rule delegations

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 19:45:42.679263
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
import hub.storage.base
from sqlalchemy.dialects import postgresql

revision: str = '0007'
down_revision: str | None = '0006'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql')


def upgrade() -> None:
    op.create_table('rule_delegations',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('project_id', sa.String(length=40), nullable=False),
    sa.Column('scope', sa.String(length=12), nullable=False),
    sa.Column('principal_id', sa.String(length=40), nullable=True),
    sa.Column('note', sa.Text(), nullable=False),
    sa.Column('granted_by', sa.String(length=40), nullable=False),
    sa.Column('granted_at', hub.storage.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('revoked_by', sa.String(length=40), nullable=True),
    sa.Column('revoked_at', hub.storage.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('revoke_reason', sa.Text(), nullable=True),
    sa.CheckConstraint("(scope = 'PRINCIPAL') = (principal_id IS NOT NULL)", name=op.f('ck_rule_delegations_principal')),
    sa.CheckConstraint("scope IN ('PRINCIPAL', 'ALL_AGENTS')", name=op.f('ck_rule_delegations_scope')),
    sa.CheckConstraint('(revoked_at IS NULL) = (revoked_by IS NULL)', name=op.f('ck_rule_delegations_revoked')),
    sa.ForeignKeyConstraint(['granted_by'], ['principals.id'], name=op.f('fk_rule_delegations_granted_by_principals')),
    sa.ForeignKeyConstraint(['principal_id'], ['principals.id'], name=op.f('fk_rule_delegations_principal_id_principals')),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_rule_delegations_project_id_projects')),
    sa.ForeignKeyConstraint(['revoked_by'], ['principals.id'], name=op.f('fk_rule_delegations_revoked_by_principals')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_rule_delegations')),
    sa.UniqueConstraint('project_id', 'id', name=op.f('uq_rule_delegations_project_id_id'))
    )
    with op.batch_alter_table('rule_delegations', schema=None) as batch_op:
        batch_op.create_index('uq_rule_delegations_active_all_agents', ['project_id'], unique=True, sqlite_where=sa.text("revoked_at IS NULL AND scope = 'ALL_AGENTS'"), postgresql_where=sa.text("revoked_at IS NULL AND scope = 'ALL_AGENTS'"))
        batch_op.create_index('uq_rule_delegations_active_principal', ['project_id', 'principal_id'], unique=True, sqlite_where=sa.text("revoked_at IS NULL AND scope = 'PRINCIPAL'"), postgresql_where=sa.text("revoked_at IS NULL AND scope = 'PRINCIPAL'"))

    op.create_table('rules',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('project_id', sa.String(length=40), nullable=False),
    sa.Column('topic', sa.String(length=80), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('created_at', hub.storage.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('created_by', sa.String(length=40), nullable=False),
    sa.Column('updated_at', hub.storage.base.UTCDateTime(timezone=True), nullable=False),
    sa.CheckConstraint('version >= 1', name=op.f('ck_rules_version')),
    sa.ForeignKeyConstraint(['created_by'], ['principals.id'], name=op.f('fk_rules_created_by_principals')),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_rules_project_id_projects')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_rules')),
    sa.UniqueConstraint('project_id', 'id', name=op.f('uq_rules_project_id_id')),
    sa.UniqueConstraint('project_id', 'topic', name=op.f('uq_rules_project_id_topic'))
    )
    op.create_table('rule_versions',
    sa.Column('rule_id', sa.String(length=40), nullable=False),
    sa.Column('version', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('project_id', sa.String(length=40), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('paths', JSON, nullable=False),
    sa.Column('components', JSON, nullable=False),
    sa.Column('retired', sa.Boolean(), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('author_id', sa.String(length=40), nullable=False),
    sa.Column('session_id', sa.String(length=40), nullable=True),
    sa.Column('delegation_id', sa.String(length=40), nullable=True),
    sa.Column('created_at', hub.storage.base.UTCDateTime(timezone=True), nullable=False),
    sa.CheckConstraint('version >= 1', name=op.f('ck_rule_versions_version')),
    sa.ForeignKeyConstraint(['author_id'], ['principals.id'], name=op.f('fk_rule_versions_author_id_principals')),
    sa.ForeignKeyConstraint(['project_id', 'delegation_id'], ['rule_delegations.project_id', 'rule_delegations.id'], name=op.f('fk_rule_versions_project_id_delegation_id_rule_delegations')),
    sa.ForeignKeyConstraint(['project_id', 'rule_id'], ['rules.project_id', 'rules.id'], name=op.f('fk_rule_versions_project_id_rule_id_rules')),
    sa.ForeignKeyConstraint(['session_id'], ['agent_sessions.id'], name=op.f('fk_rule_versions_session_id_agent_sessions')),
    sa.PrimaryKeyConstraint('rule_id', 'version', name=op.f('pk_rule_versions'))
    )
    op.create_table('lessons',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('project_id', sa.String(length=40), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('source_task_id', sa.String(length=40), nullable=True),
    sa.Column('source_submission_id', sa.String(length=40), nullable=True),
    sa.Column('source_revision', sa.String(length=64), nullable=True),
    sa.Column('successor_id', sa.String(length=40), nullable=True),
    sa.Column('superseded_at', hub.storage.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('superseded_by', sa.String(length=40), nullable=True),
    sa.Column('supersede_reason', sa.Text(), nullable=True),
    sa.Column('open_disputes', sa.Integer(), nullable=False),
    sa.Column('useful_votes', sa.Integer(), nullable=False),
    sa.Column('not_useful_votes', sa.Integer(), nullable=False),
    sa.Column('author_id', sa.String(length=40), nullable=False),
    sa.Column('session_id', sa.String(length=40), nullable=True),
    sa.Column('created_at', hub.storage.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', hub.storage.base.UTCDateTime(timezone=True), nullable=False),
    sa.CheckConstraint("(state = 'SUPERSEDED') = (successor_id IS NOT NULL)", name=op.f('ck_lessons_successor')),
    sa.CheckConstraint("state IN ('CURRENT', 'SUPERSEDED', 'WITHDRAWN')", name=op.f('ck_lessons_state')),
    sa.CheckConstraint('successor_id <> id', name=op.f('ck_lessons_not_own_successor')),
    sa.CheckConstraint('version >= 1 AND open_disputes >= 0 AND useful_votes >= 0 AND not_useful_votes >= 0', name=op.f('ck_lessons_counts')),
    sa.ForeignKeyConstraint(['author_id'], ['principals.id'], name=op.f('fk_lessons_author_id_principals')),
    sa.ForeignKeyConstraint(['project_id', 'source_submission_id'], ['submissions.project_id', 'submissions.id'], name=op.f('fk_lessons_project_id_source_submission_id_submissions')),
    sa.ForeignKeyConstraint(['project_id', 'source_task_id'], ['tasks.project_id', 'tasks.id'], name=op.f('fk_lessons_project_id_source_task_id_tasks')),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_lessons_project_id_projects')),
    sa.ForeignKeyConstraint(['session_id'], ['agent_sessions.id'], name=op.f('fk_lessons_session_id_agent_sessions')),
    sa.ForeignKeyConstraint(['successor_id'], ['lessons.id'], name=op.f('fk_lessons_successor_id_lessons')),
    sa.ForeignKeyConstraint(['superseded_by'], ['principals.id'], name=op.f('fk_lessons_superseded_by_principals')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_lessons')),
    sa.UniqueConstraint('project_id', 'id', name=op.f('uq_lessons_project_id_id'))
    )
    with op.batch_alter_table('lessons', schema=None) as batch_op:
        batch_op.create_index('ix_lessons_source_submission_id', ['source_submission_id'], unique=False)
        batch_op.create_index('ix_lessons_successor_id', ['successor_id'], unique=False)

    op.create_table('lesson_disputes',
    sa.Column('id', sa.String(length=40), nullable=False),
    sa.Column('project_id', sa.String(length=40), nullable=False),
    sa.Column('lesson_id', sa.String(length=40), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('evidence', JSON, nullable=False),
    sa.Column('state', sa.String(length=16), nullable=False),
    sa.Column('raised_by', sa.String(length=40), nullable=False),
    sa.Column('session_id', sa.String(length=40), nullable=True),
    sa.Column('raised_at', hub.storage.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('resolved_by', sa.String(length=40), nullable=True),
    sa.Column('resolved_at', hub.storage.base.UTCDateTime(timezone=True), nullable=True),
    sa.Column('resolution_note', sa.Text(), nullable=True),
    sa.CheckConstraint("(state = 'OPEN') = (resolved_at IS NULL AND resolved_by IS NULL)", name=op.f('ck_lesson_disputes_resolved')),
    sa.CheckConstraint("state IN ('OPEN', 'CORRECTED', 'UPHELD', 'DISMISSED')", name=op.f('ck_lesson_disputes_state')),
    sa.ForeignKeyConstraint(['project_id', 'lesson_id'], ['lessons.project_id', 'lessons.id'], name=op.f('fk_lesson_disputes_project_id_lesson_id_lessons')),
    sa.ForeignKeyConstraint(['raised_by'], ['principals.id'], name=op.f('fk_lesson_disputes_raised_by_principals')),
    sa.ForeignKeyConstraint(['resolved_by'], ['principals.id'], name=op.f('fk_lesson_disputes_resolved_by_principals')),
    sa.ForeignKeyConstraint(['session_id'], ['agent_sessions.id'], name=op.f('fk_lesson_disputes_session_id_agent_sessions')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_lesson_disputes'))
    )
    with op.batch_alter_table('lesson_disputes', schema=None) as batch_op:
        batch_op.create_index('ix_lesson_disputes_lesson_id', ['lesson_id'], unique=False)
        batch_op.create_index('uq_lesson_disputes_open_per_principal', ['lesson_id', 'raised_by'], unique=True, sqlite_where=sa.text("state = 'OPEN'"), postgresql_where=sa.text("state = 'OPEN'"))

    op.create_table('lesson_ratings',
    sa.Column('lesson_id', sa.String(length=40), nullable=False),
    sa.Column('principal_id', sa.String(length=40), nullable=False),
    sa.Column('project_id', sa.String(length=40), nullable=False),
    sa.Column('useful', sa.Boolean(), nullable=False),
    sa.Column('session_id', sa.String(length=40), nullable=True),
    sa.Column('rated_at', hub.storage.base.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['principal_id'], ['principals.id'], name=op.f('fk_lesson_ratings_principal_id_principals')),
    sa.ForeignKeyConstraint(['project_id', 'lesson_id'], ['lessons.project_id', 'lessons.id'], name=op.f('fk_lesson_ratings_project_id_lesson_id_lessons')),
    sa.ForeignKeyConstraint(['session_id'], ['agent_sessions.id'], name=op.f('fk_lesson_ratings_session_id_agent_sessions')),
    sa.PrimaryKeyConstraint('lesson_id', 'principal_id', name=op.f('pk_lesson_ratings'))
    )
    op.create_table('lesson_tags',
    sa.Column('lesson_id', sa.String(length=40), nullable=False),
    sa.Column('component', sa.String(length=80), nullable=False),
    sa.Column('project_id', sa.String(length=40), nullable=False),
    sa.Column('versions', sa.String(length=200), nullable=False),
    sa.ForeignKeyConstraint(['project_id', 'lesson_id'], ['lessons.project_id', 'lessons.id'], name=op.f('fk_lesson_tags_project_id_lesson_id_lessons')),
    sa.PrimaryKeyConstraint('lesson_id', 'component', name=op.f('pk_lesson_tags'))
    )
    with op.batch_alter_table('lesson_tags', schema=None) as batch_op:
        batch_op.create_index('ix_lesson_tags_component', ['component'], unique=False)

    op.create_table('lesson_versions',
    sa.Column('lesson_id', sa.String(length=40), nullable=False),
    sa.Column('version', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('project_id', sa.String(length=40), nullable=False),
    sa.Column('statement', sa.String(length=500), nullable=False),
    sa.Column('explanation', sa.Text(), nullable=False),
    sa.Column('tags', JSON, nullable=False),
    sa.Column('evidence', JSON, nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('author_id', sa.String(length=40), nullable=False),
    sa.Column('session_id', sa.String(length=40), nullable=True),
    sa.Column('created_at', hub.storage.base.UTCDateTime(timezone=True), nullable=False),
    sa.Column('search_text', sa.Text(), nullable=False),
    sa.CheckConstraint('version >= 1', name=op.f('ck_lesson_versions_version')),
    sa.ForeignKeyConstraint(['author_id'], ['principals.id'], name=op.f('fk_lesson_versions_author_id_principals')),
    sa.ForeignKeyConstraint(['project_id', 'lesson_id'], ['lessons.project_id', 'lessons.id'], name=op.f('fk_lesson_versions_project_id_lesson_id_lessons')),
    sa.ForeignKeyConstraint(['session_id'], ['agent_sessions.id'], name=op.f('fk_lesson_versions_session_id_agent_sessions')),
    sa.PrimaryKeyConstraint('lesson_id', 'version', name=op.f('pk_lesson_versions'))
    )


def downgrade() -> None:
    op.drop_table('lesson_versions')
    with op.batch_alter_table('lesson_tags', schema=None) as batch_op:
        batch_op.drop_index('ix_lesson_tags_component')

    op.drop_table('lesson_tags')
    op.drop_table('lesson_ratings')
    with op.batch_alter_table('lesson_disputes', schema=None) as batch_op:
        batch_op.drop_index('uq_lesson_disputes_open_per_principal', sqlite_where=sa.text("state = 'OPEN'"), postgresql_where=sa.text("state = 'OPEN'"))
        batch_op.drop_index('ix_lesson_disputes_lesson_id')

    op.drop_table('lesson_disputes')
    with op.batch_alter_table('lessons', schema=None) as batch_op:
        batch_op.drop_index('ix_lessons_successor_id')
        batch_op.drop_index('ix_lessons_source_submission_id')

    op.drop_table('lessons')
    op.drop_table('rule_versions')
    op.drop_table('rules')
    with op.batch_alter_table('rule_delegations', schema=None) as batch_op:
        batch_op.drop_index('uq_rule_delegations_active_principal', sqlite_where=sa.text("revoked_at IS NULL AND scope = 'PRINCIPAL'"), postgresql_where=sa.text("revoked_at IS NULL AND scope = 'PRINCIPAL'"))
        batch_op.drop_index('uq_rule_delegations_active_all_agents', sqlite_where=sa.text("revoked_at IS NULL AND scope = 'ALL_AGENTS'"), postgresql_where=sa.text("revoked_at IS NULL AND scope = 'ALL_AGENTS'"))

    op.drop_table('rule_delegations')
