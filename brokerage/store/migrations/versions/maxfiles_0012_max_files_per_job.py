"""The split rule nMaxFilesPerJob the simulator sizes jobs with: jedi_tasks.nmaxfilesperjob (files).

Revision ID: maxfiles_0012
Revises: jobsize_0011
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "maxfiles_0012"
down_revision: str | None = "jobsize_0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the column (null: not set, JEDI's 200 files)."""
    with op.batch_alter_table("jedi_tasks") as batch:
        batch.add_column(sa.Column("nmaxfilesperjob", sa.Integer(), nullable=True))


def downgrade() -> None:
    """Drop the column."""
    with op.batch_alter_table("jedi_tasks") as batch:
        batch.drop_column("nmaxfilesperjob")
