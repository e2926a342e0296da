"""The simulator's snapshot fields: job_ages (per job group its oldest, median and newest creation and modification
times), global_shares.stretchable and jedi_work_queue.partitionid (seed 003's STRETCHABLE and PARTITIONID).

Revision ID: simfields_0010
Revises: uservo_0009
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# Frozen copy of brokerage.store.models.UTCDateTime's column type; the Python-side UTC handling is the model's.
UTC_TIME = sa.DateTime(timezone=True)
_TIMES = tuple(
    f"{rank}_{clock}" for clock in ("creationtime", "modificationtime") for rank in ("oldest", "median", "newest")
)

revision: str = "simfields_0010"
down_revision: str | None = "uservo_0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create job_ages; add global_shares.stretchable and jedi_work_queue.partitionid (null: not set)."""
    op.create_table(
        "job_ages",
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("panda_queue", sa.String(), nullable=False),
        sa.Column("gshare", sa.String(), nullable=False),
        sa.Column("resource_type", sa.String(), nullable=True),
        sa.Column("jobstatus", sa.String(), nullable=False),
        sa.Column("vo", sa.String(), server_default="atlas", nullable=False),
        *(sa.Column(name, UTC_TIME, nullable=True) for name in _TIMES),
        sa.ForeignKeyConstraint(
            ["panda_queue"], ["schedconfig_json.panda_queue"], name=op.f("fk_job_ages_panda_queue_schedconfig_json")
        ),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_job_ages")),
    )
    op.create_index(op.f("ix_job_ages_panda_queue"), "job_ages", ["panda_queue"])
    with op.batch_alter_table("global_shares") as batch:
        batch.add_column(sa.Column("stretchable", sa.Boolean(), nullable=True))
    with op.batch_alter_table("jedi_work_queue") as batch:
        batch.add_column(sa.Column("partitionid", sa.Integer(), nullable=True))


def downgrade() -> None:
    """Drop job_ages and the two columns."""
    with op.batch_alter_table("jedi_work_queue") as batch:
        batch.drop_column("partitionid")
    with op.batch_alter_table("global_shares") as batch:
        batch.drop_column("stretchable")
    op.drop_index(op.f("ix_job_ages_panda_queue"), table_name="job_ages")
    op.drop_table("job_ages")
