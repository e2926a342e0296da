"""User job counts per VO (jobs_user_stats.vo, JOBSACTIVE4.VO): a user is a (name, VO) pair.

Revision ID: uservo_0009
Revises: split_0008
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "uservo_0009"
down_revision: str | None = "split_0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add jobs_user_stats.vo (stored user counts were ATLAS': 'atlas')."""
    with op.batch_alter_table("jobs_user_stats") as batch:
        batch.add_column(sa.Column("vo", sa.String(), server_default="atlas", nullable=False))


def downgrade() -> None:
    """Drop jobs_user_stats.vo (user counts of every VO are then summed)."""
    with op.batch_alter_table("jobs_user_stats") as batch:
        batch.drop_column("vo")
