"""Snapshot versions: every stored grid version kept whole, so two versions can be compared and old ones pruned.

Revision ID: levers_0004
Revises: 0003
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# Frozen copy of brokerage.store.models.UTCDateTime's column type; the Python-side UTC handling is the model's.
UTC_TIME = sa.DateTime(timezone=True)

revision: str = "levers_0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create snapshot_versions (the grid stored at the time is archived by the next write, not here)."""
    op.create_table(
        "snapshot_versions",
        sa.Column("version", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("snapshot_id", sa.String(), nullable=False),
        sa.Column("taken_at", UTC_TIME, nullable=False),
        sa.Column("saved_at", UTC_TIME, nullable=False),
        sa.Column("nbytes", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("version", name=op.f("pk_snapshot_versions")),
    )
    op.create_index(op.f("ix_snapshot_versions_saved_at"), "snapshot_versions", ["saved_at"], unique=False)


def downgrade() -> None:
    """Drop snapshot_versions."""
    op.drop_index(op.f("ix_snapshot_versions_saved_at"), table_name="snapshot_versions")
    op.drop_table("snapshot_versions")
