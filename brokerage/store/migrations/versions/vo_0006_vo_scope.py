"""Tasks carry their VO and cloud (the generic broker), relations their scope (analysis output endpoints).

Revision ID: vo_0006
Revises: sim_0005
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "vo_0006"
down_revision: str | None = "sim_0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add jedi_tasks.vo and .cloud; add panda_ddm_relation.scope ('default') to its primary key."""
    with op.batch_alter_table("jedi_tasks") as batch:
        batch.add_column(sa.Column("vo", sa.String(), nullable=True))
        batch.add_column(sa.Column("cloud", sa.String(), nullable=True))
    with op.batch_alter_table("panda_ddm_relation", recreate="always") as batch:
        batch.add_column(sa.Column("scope", sa.String(), server_default="default", nullable=False))
        batch.drop_constraint("pk_panda_ddm_relation", type_="primary")
        batch.create_primary_key("pk_panda_ddm_relation", ["panda_queue", "ddm_endpoint_name", "scope"])


def downgrade() -> None:
    """Drop the scope (keeping the default scope's rows), jedi_tasks.vo and .cloud."""
    op.execute("DELETE FROM panda_ddm_relation WHERE scope <> 'default'")
    with op.batch_alter_table("panda_ddm_relation", recreate="always") as batch:
        batch.drop_constraint("pk_panda_ddm_relation", type_="primary")
        batch.create_primary_key("pk_panda_ddm_relation", ["panda_queue", "ddm_endpoint_name"])
        batch.drop_column("scope")
    with op.batch_alter_table("jedi_tasks") as batch:
        batch.drop_column("cloud")
        batch.drop_column("vo")
