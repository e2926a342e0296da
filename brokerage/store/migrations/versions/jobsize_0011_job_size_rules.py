"""Split rules the simulator sizes jobs with: jedi_tasks.tgtmaxoutputforng (GB) and jedi_tasks.maxwalltime (hours).

Revision ID: jobsize_0011
Revises: simfields_0010
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "jobsize_0011"
down_revision: str | None = "simfields_0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the two split-rule columns (null: not set)."""
    with op.batch_alter_table("jedi_tasks") as batch:
        batch.add_column(sa.Column("tgtmaxoutputforng", sa.Double(), nullable=True))
        batch.add_column(sa.Column("maxwalltime", sa.Integer(), nullable=True))


def downgrade() -> None:
    """Drop the two columns."""
    with op.batch_alter_table("jedi_tasks") as batch:
        batch.drop_column("maxwalltime")
        batch.drop_column("tgtmaxoutputforng")
