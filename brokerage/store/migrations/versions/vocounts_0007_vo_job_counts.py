"""Job counts per VO (jobs_share_stats.vo, as PanDA's JOBS_SHARE_STATS), tasks' walltime (GenJobBroker's check).

Revision ID: vocounts_0007
Revises: vo_0006
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "vocounts_0007"
down_revision: str | None = "vo_0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add jobs_share_stats.vo (stored counts were ATLAS': 'atlas'), jedi_tasks.walltime and .walltimeunit."""
    with op.batch_alter_table("jobs_share_stats") as batch:
        batch.add_column(sa.Column("vo", sa.String(), server_default="atlas", nullable=False))
    with op.batch_alter_table("jedi_tasks") as batch:
        batch.add_column(sa.Column("walltime", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("walltimeunit", sa.String(), nullable=True))


def downgrade() -> None:
    """Drop jedi_tasks.walltimeunit, .walltime and jobs_share_stats.vo (counts of every VO are then summed)."""
    with op.batch_alter_table("jedi_tasks") as batch:
        batch.drop_column("walltimeunit")
        batch.drop_column("walltime")
    with op.batch_alter_table("jobs_share_stats") as batch:
        batch.drop_column("vo")
