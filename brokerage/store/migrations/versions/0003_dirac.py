"""DIRAC task-queue matching tables: waiting jobs, group shares, site mask, CEs, running limits, counts, delays.

Revision ID: 0003
Revises: 0001
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create the dirac_ tables."""
    op.create_table(
        "dirac_jobs",
        sa.Column("JobID", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("Owner", sa.String(), nullable=False),
        sa.Column("OwnerGroup", sa.String(), nullable=False),
        sa.Column("VO", sa.String(), nullable=True),
        sa.Column("CPUTime", sa.BigInteger(), nullable=True),
        sa.Column("Sites", sa.Text(), nullable=True),
        sa.Column("BannedSites", sa.Text(), nullable=True),
        sa.Column("GridCEs", sa.Text(), nullable=True),
        sa.Column("Platforms", sa.Text(), nullable=True),
        sa.Column("JobTypes", sa.Text(), nullable=True),
        sa.Column("Tags", sa.Text(), nullable=True),
        sa.Column("Priority", sa.Integer(), nullable=True),
        sa.Column("Status", sa.String(), nullable=True),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("JobID", name=op.f("pk_dirac_jobs")),
    )
    op.create_table(
        "dirac_group_shares",
        sa.Column("OwnerGroup", sa.String(), nullable=False),
        sa.Column("VO", sa.String(), nullable=True),
        sa.Column("JobShare", sa.Double(), nullable=True),
        sa.Column("JobSharing", sa.Boolean(), nullable=True),
        sa.Column("AllowBackgroundTQs", sa.Boolean(), nullable=True),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("OwnerGroup", name=op.f("pk_dirac_group_shares")),
    )
    op.create_table(
        "dirac_site_mask",
        sa.Column("Site", sa.String(), nullable=False),
        sa.Column("Status", sa.String(), nullable=True),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("Site", name=op.f("pk_dirac_site_mask")),
    )
    op.create_table(
        "dirac_ces",
        sa.Column("Site", sa.String(), nullable=False),
        sa.Column("GridCE", sa.String(), nullable=False),
        sa.Column("Queue", sa.String(), nullable=False),
        sa.Column("Platform", sa.String(), nullable=True),
        sa.Column("CPUTime", sa.BigInteger(), nullable=True),
        sa.Column("Tags", sa.Text(), nullable=True),
        sa.Column("RequiredTags", sa.Text(), nullable=True),
        sa.Column("NumberOfProcessors", sa.Integer(), nullable=True),
        sa.Column("MaxRAM", sa.Integer(), nullable=True),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("Site", "GridCE", "Queue", name=op.f("pk_dirac_ces")),
    )
    op.create_table(
        "dirac_running_limits",
        sa.Column("Site", sa.String(), nullable=False),
        sa.Column("GridCE", sa.String(), nullable=False),
        sa.Column("Attribute", sa.String(), nullable=False),
        sa.Column("Value", sa.String(), nullable=False),
        sa.Column("Limit", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("Site", "GridCE", "Attribute", "Value", name=op.f("pk_dirac_running_limits")),
    )
    op.create_table(
        "dirac_running_counts",
        sa.Column("Site", sa.String(), nullable=False),
        sa.Column("Attribute", sa.String(), nullable=False),
        sa.Column("Value", sa.String(), nullable=False),
        sa.Column("Running", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("Site", "Attribute", "Value", name=op.f("pk_dirac_running_counts")),
    )
    op.create_table(
        "dirac_matching_delays",
        sa.Column("Site", sa.String(), nullable=False),
        sa.Column("Attribute", sa.String(), nullable=False),
        sa.Column("Value", sa.String(), nullable=False),
        sa.Column("Delay", sa.Integer(), nullable=False),
        sa.Column("SinceLastMatch", sa.Double(), nullable=True),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("Site", "Attribute", "Value", name=op.f("pk_dirac_matching_delays")),
    )


def downgrade() -> None:
    """Drop the dirac_ tables."""
    for name in ("dirac_matching_delays", "dirac_running_counts", "dirac_running_limits", "dirac_ces",
                 "dirac_site_mask", "dirac_group_shares", "dirac_jobs"):  # fmt: skip
        op.drop_table(name)
