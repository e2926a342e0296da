"""Lifecycle simulator: work queues, queue slots, the share tree's columns, and stored simulation runs.

Revision ID: sim_0005
Revises: levers_0004
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# Frozen copy of brokerage.store.models.UTCDateTime's column type; the Python-side UTC handling is the model's.
UTC_TIME = sa.DateTime(timezone=True)

revision: str = "sim_0005"
down_revision: str | None = "levers_0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create jedi_work_queue, queue_slots and sim_runs; give global_shares parent, value and throttled."""
    with op.batch_alter_table("global_shares") as batch:
        batch.add_column(sa.Column("parent", sa.String(), nullable=True))
        batch.add_column(sa.Column("value", sa.Double(), nullable=True))
        batch.add_column(sa.Column("throttled", sa.Boolean(), nullable=True))
    op.create_table(
        "jedi_work_queue",
        sa.Column("queue_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("queue_name", sa.String(), nullable=False),
        sa.Column("queue_type", sa.String(), nullable=False),
        sa.Column("vo", sa.String(), nullable=True),
        sa.Column("queue_order", sa.Integer(), nullable=True),
        sa.Column("criteria", sa.String(), nullable=True),
        sa.Column("variables", sa.Text(), nullable=True),
        sa.Column("queue_function", sa.String(), nullable=True),
        sa.Column("status", sa.String(), nullable=True),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("queue_id", name=op.f("pk_jedi_work_queue")),
    )
    op.create_table(
        "queue_slots",
        sa.Column("panda_queue", sa.String(), nullable=False),
        sa.Column("nslots", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("panda_queue", name=op.f("pk_queue_slots")),
    )
    op.create_table(
        "sim_runs",
        sa.Column("run_id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("created_at", UTC_TIME, nullable=False),
        sa.Column("label", sa.String(), nullable=False),
        sa.Column("snapshot_id", sa.String(), nullable=False),
        sa.Column("snapshot_version", sa.Integer(), nullable=False),
        sa.Column("config_version", sa.Integer(), nullable=True),
        sa.Column("config_fingerprint", sa.String(), nullable=False),
        sa.Column("overrides", sa.Text(), nullable=False),
        sa.Column("hours", sa.Double(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("headline", sa.Text(), nullable=False),
        sa.Column("nbytes", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", name=op.f("pk_sim_runs")),
    )
    op.create_index(op.f("ix_sim_runs_created_at"), "sim_runs", ["created_at"], unique=False)


def downgrade() -> None:
    """Drop sim_runs, queue_slots and jedi_work_queue, and the share tree's columns."""
    op.drop_index(op.f("ix_sim_runs_created_at"), table_name="sim_runs")
    op.drop_table("sim_runs")
    op.drop_table("queue_slots")
    op.drop_table("jedi_work_queue")
    with op.batch_alter_table("global_shares") as batch:
        batch.drop_column("throttled")
        batch.drop_column("value")
        batch.drop_column("parent")
