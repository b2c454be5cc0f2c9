"""workflow edges: lease revocation, integration report attempts and operator releases,
evidence ids on reviews, proposed finding resolutions, job reservations; and the data
rules that changed (ended attempts' leases end with them; a closed child still blocks
its parent)

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 14:33:25.014708
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
import hub.storage.base
from sqlalchemy.dialects import postgresql

revision: str = '0006'
down_revision: str | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql')
OLD_OUTCOMES = "outcome IN ('PUBLISHED', 'TARGET_MOVED', 'CONFLICT', 'UNCERTAIN', 'ABANDONED', 'RECONCILED')"
NEW_OUTCOMES = "outcome IN ('PUBLISHED', 'TARGET_MOVED', 'CONFLICT', 'UNCERTAIN', 'ABANDONED', 'RECONCILED', 'RELEASED')"


def upgrade() -> None:
    with op.batch_alter_table('attempts', schema=None) as batch_op:
        batch_op.add_column(sa.Column('revoked_at', hub.storage.base.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('revoked_by', sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column('revoke_reason', sa.Text(), nullable=True))
        batch_op.create_foreign_key(batch_op.f('fk_attempts_revoked_by_principals'), 'principals', ['revoked_by'], ['id'])

    with op.batch_alter_table('findings', schema=None) as batch_op:
        batch_op.add_column(sa.Column('proposed_resolution', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('proposed_evidence', JSON, nullable=True))
        batch_op.add_column(sa.Column('proposed_by', sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column('proposed_at', hub.storage.base.UTCDateTime(timezone=True), nullable=True))
        batch_op.create_foreign_key(batch_op.f('fk_findings_proposed_by_principals'), 'principals', ['proposed_by'], ['id'])

    with op.batch_alter_table('integration_reports', schema=None) as batch_op:
        batch_op.add_column(sa.Column('attempt_id', sa.String(length=40), nullable=True))
        batch_op.drop_constraint(op.f('ck_integration_reports_outcome'), type_='check')
        batch_op.create_check_constraint('outcome', NEW_OUTCOMES)

    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('reservation_ids', JSON, nullable=False, server_default=sa.text("'[]'")))
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.alter_column('reservation_ids', server_default=None)

    with op.batch_alter_table('reviews', schema=None) as batch_op:
        batch_op.add_column(sa.Column('evidence_ids', JSON, nullable=True))

    # An ended attempt's lease ends with it (it was left running until expiry before).
    op.execute(
        "UPDATE attempts SET expires_at = ended_at "
        "WHERE ended_at IS NOT NULL AND expires_at > ended_at"
    )
    # blocked_count counts incomplete prerequisites plus required children not DONE:
    # children closed without being done used to stop counting; now they keep blocking.
    op.execute(
        """
        UPDATE tasks SET blocked_count =
            (SELECT COUNT(*) FROM task_prerequisites p JOIN tasks t ON t.id = p.prerequisite_id
             WHERE p.task_id = tasks.id AND t.state <> 'DONE')
          + (SELECT COUNT(*) FROM tasks c
             WHERE c.parent_id = tasks.id AND c.required AND c.state <> 'DONE')
        WHERE tasks.state NOT IN ('DONE', 'CLOSED')
        """
    )


def downgrade() -> None:
    with op.batch_alter_table('reviews', schema=None) as batch_op:
        batch_op.drop_column('evidence_ids')

    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_column('reservation_ids')

    op.execute("DELETE FROM integration_reports WHERE outcome = 'RELEASED'")
    with op.batch_alter_table('integration_reports', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('ck_integration_reports_outcome'), type_='check')
        batch_op.create_check_constraint('outcome', OLD_OUTCOMES)
        batch_op.drop_column('attempt_id')

    with op.batch_alter_table('findings', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('fk_findings_proposed_by_principals'), type_='foreignkey')
        batch_op.drop_column('proposed_at')
        batch_op.drop_column('proposed_by')
        batch_op.drop_column('proposed_evidence')
        batch_op.drop_column('proposed_resolution')

    with op.batch_alter_table('attempts', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('fk_attempts_revoked_by_principals'), type_='foreignkey')
        batch_op.drop_column('revoke_reason')
        batch_op.drop_column('revoked_by')
        batch_op.drop_column('revoked_at')
