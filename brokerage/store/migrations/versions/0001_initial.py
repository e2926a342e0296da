"""Initial schema: gdpconfig (CONFIG + versions + history), the grid tables and the task status log.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# Frozen copy of brokerage.store.models.UTCDateTime's column type; the Python-side UTC handling is the model's.
UTC_TIME = sa.DateTime(timezone=True)

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create every table."""
    op.create_table(
        "config",
        sa.Column("app", sa.String(length=64), nullable=False),
        sa.Column("component", sa.String(length=64), nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("vo", sa.String(length=16), nullable=False),
        sa.Column("value", sa.String(length=256), nullable=True),
        sa.Column("value_json", sa.Text(), nullable=True),
        sa.Column("type", sa.String(length=64), nullable=False),
        sa.Column("descr", sa.String(length=256), nullable=True),
        sa.PrimaryKeyConstraint("app", "component", "key", "vo", name=op.f("pk_config")),
    )
    op.create_table(
        "config_version",
        sa.Column("version", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("parent_version", sa.Integer(), nullable=True),
        sa.Column("who", sa.String(length=128), nullable=False),
        sa.Column("created_at", UTC_TIME, nullable=False),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("version", name=op.f("pk_config_version")),
    )
    op.create_table(
        "global_shares",
        sa.Column("gshare", sa.String(), nullable=False),
        sa.Column("usage_perc", sa.Double(), nullable=True),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("gshare", name=op.f("pk_global_shares")),
    )
    op.create_table(
        "jedi_tasks",
        sa.Column("jeditaskid", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("taskname", sa.String(), nullable=True),
        sa.Column("status", sa.String(), nullable=True),
        sa.Column("prodsourcelabel", sa.String(), nullable=True),
        sa.Column("processingtype", sa.String(), nullable=True),
        sa.Column("gshare", sa.String(), nullable=True),
        sa.Column("resource_type", sa.String(), nullable=True),
        sa.Column("currentpriority", sa.Integer(), nullable=False),
        sa.Column("taskpriority", sa.Integer(), nullable=False),
        sa.Column("username", sa.String(), nullable=True),
        sa.Column("workinggroup", sa.String(), nullable=True),
        sa.Column("corecount", sa.Integer(), nullable=False),
        sa.Column("maxcorecount", sa.Integer(), nullable=True),
        sa.Column("ramcount", sa.Integer(), nullable=False),
        sa.Column("ramunit", sa.String(), nullable=True),
        sa.Column("baseramcount", sa.Integer(), nullable=False),
        sa.Column("cputime", sa.Double(), nullable=True),
        sa.Column("cputimeunit", sa.String(), nullable=True),
        sa.Column("basewalltime", sa.Integer(), nullable=False),
        sa.Column("cpuefficiency", sa.Integer(), nullable=False),
        sa.Column("outdiskcount", sa.Double(), nullable=True),
        sa.Column("outdiskunit", sa.String(), nullable=True),
        sa.Column("workdiskcount", sa.Integer(), nullable=False),
        sa.Column("iointensity", sa.Double(), nullable=True),
        sa.Column("diskio", sa.Double(), nullable=True),
        sa.Column("ipconnectivity", sa.String(), nullable=True),
        sa.Column("allowinputlan", sa.String(), nullable=True),
        sa.Column("eventservice", sa.Boolean(), nullable=False),
        sa.Column("nucleus", sa.String(), nullable=True),
        sa.Column("site", sa.String(), nullable=True),
        sa.Column("architecture", sa.String(), nullable=True),
        sa.Column("transhome", sa.String(), nullable=True),
        sa.Column("container_name", sa.String(), nullable=True),
        sa.Column("onlytagsforfc", sa.Boolean(), nullable=False),
        sa.Column("parent_tid", sa.BigInteger(), nullable=True),
        sa.Column("fullchain", sa.String(), nullable=True),
        sa.Column("t1weight", sa.Integer(), nullable=True),
        sa.Column("taskbrokeronmaster", sa.Boolean(), nullable=False),
        sa.Column("inputprestaging", sa.Boolean(), nullable=False),
        sa.Column("includedsite", sa.String(), nullable=True),
        sa.Column("excludedsite", sa.String(), nullable=True),
        sa.Column("avoidvp", sa.Boolean(), nullable=False),
        sa.Column("task_class", sa.Integer(), nullable=True),
        sa.Column("is_scout", sa.Boolean(), nullable=False),
        sa.Column("is_merge", sa.Boolean(), nullable=False),
        sa.Column("chunk_nevents", sa.BigInteger(), nullable=False),
        sa.Column("chunk_input_mb", sa.Double(), nullable=True),
        sa.Column("chunk_njobs", sa.Integer(), nullable=False),
        sa.Column("frozentime", UTC_TIME, nullable=True),
        sa.Column("modificationtime", UTC_TIME, nullable=True),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("jeditaskid", name=op.f("pk_jedi_tasks")),
    )
    op.create_table(
        "network_matrix_kv",
        sa.Column("src", sa.String(), nullable=False),
        sa.Column("dst", sa.String(), nullable=False),
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("value", sa.Double(), nullable=False),
        sa.Column("ts", UTC_TIME, nullable=True),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("src", "dst", "key", name=op.f("pk_network_matrix_kv")),
    )
    op.create_table(
        "schedconfig_json",
        sa.Column("panda_queue", sa.String(), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.Column("last_update", UTC_TIME, nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("panda_queue", name=op.f("pk_schedconfig_json")),
    )
    op.create_table(
        "site",
        sa.Column("site_name", sa.String(), nullable=False),
        sa.Column("role", sa.String(), nullable=False),
        sa.Column("tier_level", sa.Integer(), nullable=False),
        sa.Column("cloud", sa.String(), nullable=True),
        sa.Column("state", sa.String(), nullable=True),
        sa.Column("bare_nucleus", sa.String(), nullable=True),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("site_name", name=op.f("pk_site")),
    )
    op.create_table(
        "snapshot_meta",
        sa.Column("snapshot_id", sa.String(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("taken_at", UTC_TIME, nullable=False),
        sa.Column("saved_at", UTC_TIME, nullable=False),
        sa.PrimaryKeyConstraint("snapshot_id", name=op.f("pk_snapshot_meta")),
    )
    op.create_table(
        "sw_tags",
        sa.Column("panda_queue", sa.String(), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.Column("last_update", UTC_TIME, nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("panda_queue", name=op.f("pk_sw_tags")),
    )
    op.create_table(
        "task_job_stats",
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("jeditaskid", sa.BigInteger(), nullable=False),
        sa.Column("panda_queue", sa.String(), nullable=False),
        sa.Column("jobstatus", sa.String(), nullable=False),
        sa.Column("modificationtime", UTC_TIME, nullable=False),
        sa.Column("njobs", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_task_job_stats")),
    )
    op.create_index(op.f("ix_task_job_stats_jeditaskid"), "task_job_stats", ["jeditaskid"])

    op.create_table(
        "users",
        sa.Column("produsername", sa.String(), nullable=False),
        sa.Column("running_slots_hi", sa.Integer(), nullable=False),
        sa.Column("disk_quota_exceeded", sa.Boolean(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("produsername", name=op.f("pk_users")),
    )
    op.create_table(
        "config_history",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("app", sa.String(length=64), nullable=False),
        sa.Column("component", sa.String(length=64), nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("vo", sa.String(length=16), nullable=False),
        sa.Column("type", sa.String(length=64), nullable=False),
        sa.Column("old_value", sa.Text(), nullable=True),
        sa.Column("new_value", sa.Text(), nullable=True),
        sa.Column("who", sa.String(length=128), nullable=False),
        sa.Column("changed_at", UTC_TIME, nullable=False),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["version"], ["config_version.version"], name=op.f("fk_config_history_version_config_version")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_config_history")),
    )
    op.create_index("ix_config_history_key", "config_history", ["app", "component", "key", "vo"])
    op.create_index(op.f("ix_config_history_version"), "config_history", ["version"])

    op.create_table(
        "ddm_endpoint",
        sa.Column("ddm_endpoint_name", sa.String(), nullable=False),
        sa.Column("site_name", sa.String(), nullable=False),
        sa.Column("type", sa.String(), nullable=True),
        sa.Column("is_tape", sa.Boolean(), nullable=False),
        sa.Column("space_total", sa.Double(), nullable=True),
        sa.Column("space_free", sa.Double(), nullable=True),
        sa.Column("space_expired", sa.Double(), nullable=True),
        sa.Column("read_lan", sa.String(), nullable=True),
        sa.Column("write_lan", sa.String(), nullable=True),
        sa.Column("read_wan", sa.String(), nullable=True),
        sa.Column("write_wan", sa.String(), nullable=True),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["site_name"], ["site.site_name"], name=op.f("fk_ddm_endpoint_site_name_site")),
        sa.PrimaryKeyConstraint("ddm_endpoint_name", name=op.f("pk_ddm_endpoint")),
    )
    op.create_index(op.f("ix_ddm_endpoint_site_name"), "ddm_endpoint", ["site_name"])

    op.create_table(
        "jedi_datasets",
        sa.Column("jeditaskid", sa.BigInteger(), nullable=False),
        sa.Column("datasetid", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("datasetname", sa.String(), nullable=True),
        sa.Column("is_master", sa.Boolean(), nullable=False),
        sa.Column("nfiles", sa.Integer(), nullable=False),
        sa.Column("size_gb", sa.Double(), nullable=True),
        sa.Column("nevents", sa.BigInteger(), nullable=False),
        sa.Column("neventsused", sa.BigInteger(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["jeditaskid"], ["jedi_tasks.jeditaskid"], name=op.f("fk_jedi_datasets_jeditaskid_jedi_tasks")
        ),
        sa.PrimaryKeyConstraint("jeditaskid", "datasetid", name=op.f("pk_jedi_datasets")),
    )
    op.create_table(
        "jobs_share_stats",
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("panda_queue", sa.String(), nullable=False),
        sa.Column("gshare", sa.String(), nullable=False),
        sa.Column("resource_type", sa.String(), nullable=True),
        sa.Column("jobstatus", sa.String(), nullable=False),
        sa.Column("njobs", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["panda_queue"],
            ["schedconfig_json.panda_queue"],
            name=op.f("fk_jobs_share_stats_panda_queue_schedconfig_json"),
        ),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_jobs_share_stats")),
    )
    op.create_index(op.f("ix_jobs_share_stats_panda_queue"), "jobs_share_stats", ["panda_queue"])

    op.create_table(
        "jobs_user_stats",
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("panda_queue", sa.String(), nullable=False),
        sa.Column("gshare", sa.String(), nullable=False),
        sa.Column("produsername", sa.String(), nullable=False),
        sa.Column("workinggroup", sa.String(), nullable=True),
        sa.Column("jobstatus", sa.String(), nullable=False),
        sa.Column("njobs", sa.Integer(), nullable=False),
        sa.Column("ncores", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["panda_queue"],
            ["schedconfig_json.panda_queue"],
            name=op.f("fk_jobs_user_stats_panda_queue_schedconfig_json"),
        ),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_jobs_user_stats")),
    )
    op.create_index(op.f("ix_jobs_user_stats_panda_queue"), "jobs_user_stats", ["panda_queue"])

    op.create_table(
        "task_status_log",
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("jeditaskid", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("modificationtime", UTC_TIME, nullable=False),
        sa.ForeignKeyConstraint(
            ["jeditaskid"], ["jedi_tasks.jeditaskid"], name=op.f("fk_task_status_log_jeditaskid_jedi_tasks")
        ),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_task_status_log")),
    )
    op.create_index("ix_task_status_log_task", "task_status_log", ["jeditaskid", "modificationtime"])

    op.create_table(
        "dataset_replicas",
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("jeditaskid", sa.BigInteger(), nullable=False),
        sa.Column("datasetid", sa.BigInteger(), nullable=False),
        sa.Column("ddm_endpoint_name", sa.String(), nullable=False),
        sa.Column("nfiles", sa.Integer(), nullable=False),
        sa.Column("size_gb", sa.Double(), nullable=True),
        sa.ForeignKeyConstraint(
            ["ddm_endpoint_name"],
            ["ddm_endpoint.ddm_endpoint_name"],
            name=op.f("fk_dataset_replicas_ddm_endpoint_name_ddm_endpoint"),
        ),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_dataset_replicas")),
    )
    op.create_index("ix_dataset_replicas_dataset", "dataset_replicas", ["jeditaskid", "datasetid"])

    op.create_table(
        "panda_ddm_relation",
        sa.Column("panda_queue", sa.String(), nullable=False),
        sa.Column("ddm_endpoint_name", sa.String(), nullable=False),
        sa.Column("default_write", sa.Boolean(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["ddm_endpoint_name"],
            ["ddm_endpoint.ddm_endpoint_name"],
            name=op.f("fk_panda_ddm_relation_ddm_endpoint_name_ddm_endpoint"),
        ),
        sa.ForeignKeyConstraint(
            ["panda_queue"],
            ["schedconfig_json.panda_queue"],
            name=op.f("fk_panda_ddm_relation_panda_queue_schedconfig_json"),
        ),
        sa.PrimaryKeyConstraint("panda_queue", "ddm_endpoint_name", name=op.f("pk_panda_ddm_relation")),
    )


def downgrade() -> None:
    """Drop every table of the initial schema (children first)."""
    for table in (
        "panda_ddm_relation",
        "dataset_replicas",
        "task_status_log",
        "jobs_user_stats",
        "jobs_share_stats",
        "jedi_datasets",
        "ddm_endpoint",
        "config_history",
        "users",
        "task_job_stats",
        "sw_tags",
        "snapshot_meta",
        "site",
        "schedconfig_json",
        "network_matrix_kv",
        "jedi_tasks",
        "global_shares",
        "config_version",
        "config",
    ):
        op.drop_table(table)
