"""Tasks carry their split rule (nEventsPerJob, nFilesPerJob, nGBPerJob): the simulator makes jobs of that size.

Revision ID: split_0008
Revises: vocounts_0007
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "split_0008"
down_revision: str | None = "vocounts_0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add jedi_tasks.neventsperjob, .nfilesperjob and .ngbperjob (null: not set, read as 0)."""
    with op.batch_alter_table("jedi_tasks") as batch:
        batch.add_column(sa.Column("neventsperjob", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("nfilesperjob", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("ngbperjob", sa.Double(), nullable=True))


def downgrade() -> None:
    """Drop the split rule columns."""
    with op.batch_alter_table("jedi_tasks") as batch:
        batch.drop_column("ngbperjob")
        batch.drop_column("nfilesperjob")
        batch.drop_column("neventsperjob")
