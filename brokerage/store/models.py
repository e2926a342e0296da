"""SQLAlchemy models of the PanDA-shaped tables that hold a grid snapshot, gdpconfig and task status logs."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class UTCDateTime(sa.types.TypeDecorator[datetime]):
    """A timezone-aware UTC datetime on every backend (SQLite keeps naive UTC text, PostgreSQL timestamptz)."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# Named constraints, so later migrations can alter them on SQLite (batch mode) and PostgreSQL alike.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Declarative base; Python types map to portable column types."""

    metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {  # noqa: RUF012 - SQLAlchemy reads this class attribute
        str: sa.String(),
        int: sa.Integer(),
        float: sa.Double(),
        bool: sa.Boolean(),
        datetime: UTCDateTime(),
    }


BigId = sa.BigInteger()
JsonText = sa.Text()


# --- gdpconfig -------------------------------------------------------------------------------------------


class ConfigEntry(Base):
    """CONFIG: one gdpconfig value (PanDA's ATLAS_PANDA.CONFIG); vo '' stands for NULL inside the key."""

    __tablename__ = "config"

    app: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    component: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    key: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    vo: Mapped[str] = mapped_column(sa.String(16), primary_key=True, default="")
    value: Mapped[str | None] = mapped_column(sa.String(256))
    value_json: Mapped[str | None] = mapped_column(JsonText)
    type: Mapped[str] = mapped_column(sa.String(64), default="str")
    descr: Mapped[str | None] = mapped_column(sa.String(256))


class ConfigVersion(Base):
    """CONFIG_VERSION: one saved set of gdpconfig changes; version 0 is the empty starting point."""

    __tablename__ = "config_version"

    version: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    parent_version: Mapped[int | None]
    who: Mapped[str] = mapped_column(sa.String(128))
    created_at: Mapped[datetime]
    comment: Mapped[str] = mapped_column(sa.Text(), default="")


class ConfigHistory(Base):
    """CONFIG_HISTORY: one key changed by a version; NULL old/new value = the row did not exist / was removed."""

    __tablename__ = "config_history"
    __table_args__ = (sa.Index("ix_config_history_key", "app", "component", "key", "vo"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    version: Mapped[int] = mapped_column(sa.ForeignKey("config_version.version"), index=True)
    app: Mapped[str] = mapped_column(sa.String(64))
    component: Mapped[str] = mapped_column(sa.String(64))
    key: Mapped[str] = mapped_column(sa.String(64))
    vo: Mapped[str] = mapped_column(sa.String(16))
    type: Mapped[str] = mapped_column(sa.String(64))
    old_value: Mapped[str | None] = mapped_column(sa.Text())
    new_value: Mapped[str | None] = mapped_column(sa.Text())
    who: Mapped[str] = mapped_column(sa.String(128))
    changed_at: Mapped[datetime]
    comment: Mapped[str] = mapped_column(sa.Text(), default="")


# --- snapshot identity -----------------------------------------------------------------------------------


class SnapshotMeta(Base):
    """SNAPSHOT_META: which grid the tables hold; the version grows with every write so caches can key on it."""

    __tablename__ = "snapshot_meta"

    snapshot_id: Mapped[str] = mapped_column(primary_key=True)
    version: Mapped[int]
    taken_at: Mapped[datetime]
    saved_at: Mapped[datetime]


class SnapshotVersion(Base):
    """SNAPSHOT_VERSIONS: every stored grid version, kept whole (gzip'd snapshot JSON) so old ones can be replayed."""

    __tablename__ = "snapshot_versions"

    version: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    snapshot_id: Mapped[str]
    taken_at: Mapped[datetime]
    saved_at: Mapped[datetime] = mapped_column(index=True)
    nbytes: Mapped[int]
    data: Mapped[bytes] = mapped_column(sa.LargeBinary())


class SimRun(Base):
    """SIM_RUNS: one stored simulation run (gzip'd result JSON) with the snapshot and gdpconfig it ran on."""

    __tablename__ = "sim_runs"

    run_id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    created_at: Mapped[datetime] = mapped_column(index=True)
    label: Mapped[str]
    snapshot_id: Mapped[str]
    snapshot_version: Mapped[int]
    config_version: Mapped[int | None]
    config_fingerprint: Mapped[str]
    overrides: Mapped[str] = mapped_column(JsonText)
    hours: Mapped[float]
    seed: Mapped[int] = mapped_column(sa.BigInteger())
    headline: Mapped[str] = mapped_column(JsonText)
    nbytes: Mapped[int]
    data: Mapped[bytes] = mapped_column(sa.LargeBinary())


# --- grid tables: one per snapshot table; seq keeps the snapshot's row order ------------------------------


class SchedconfigJson(Base):
    """SCHEDCONFIG_JSON: a queue's CRIC description as JSON (the snapshot's queues columns)."""

    __tablename__ = "schedconfig_json"

    panda_queue: Mapped[str] = mapped_column(primary_key=True)
    data: Mapped[str] = mapped_column(JsonText)
    last_update: Mapped[datetime]
    seq: Mapped[int]


class Site(Base):
    """SITE: an ATLAS site and its role (nucleus or satellite)."""

    __tablename__ = "site"

    site_name: Mapped[str] = mapped_column(primary_key=True)
    role: Mapped[str]
    tier_level: Mapped[int]
    cloud: Mapped[str | None]
    state: Mapped[str | None]
    bare_nucleus: Mapped[str | None]
    seq: Mapped[int]


class DdmEndpoint(Base):
    """DDM_ENDPOINT: a storage endpoint (RSE) with its space and detailed status per activity."""

    __tablename__ = "ddm_endpoint"

    ddm_endpoint_name: Mapped[str] = mapped_column(primary_key=True)
    site_name: Mapped[str] = mapped_column(sa.ForeignKey("site.site_name"), index=True)
    type: Mapped[str | None]
    is_tape: Mapped[bool]
    space_total: Mapped[float | None]
    space_free: Mapped[float | None]
    space_expired: Mapped[float | None]
    read_lan: Mapped[str | None]
    write_lan: Mapped[str | None]
    read_wan: Mapped[str | None]
    write_wan: Mapped[str | None]
    seq: Mapped[int]


class PandaDdmRelation(Base):
    """PANDA_DDM_RELATION: which endpoints a queue reads from and writes to."""

    __tablename__ = "panda_ddm_relation"

    panda_queue: Mapped[str] = mapped_column(sa.ForeignKey("schedconfig_json.panda_queue"), primary_key=True)
    ddm_endpoint_name: Mapped[str] = mapped_column(sa.ForeignKey("ddm_endpoint.ddm_endpoint_name"), primary_key=True)
    default_write: Mapped[bool]
    scope: Mapped[str] = mapped_column(primary_key=True, server_default="default")
    seq: Mapped[int]


class NetworkMatrixKv(Base):
    """NETWORK_MATRIX_KV: one network metric between two sites."""

    __tablename__ = "network_matrix_kv"

    src: Mapped[str] = mapped_column(primary_key=True)
    dst: Mapped[str] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(primary_key=True)
    value: Mapped[float]
    ts: Mapped[datetime | None]
    seq: Mapped[int]


class JobsShareStats(Base):
    """JOBS_SHARE_STATS-like job counts per queue, global share, resource type, job status and VO."""

    __tablename__ = "jobs_share_stats"

    seq: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    panda_queue: Mapped[str] = mapped_column(sa.ForeignKey("schedconfig_json.panda_queue"), index=True)
    gshare: Mapped[str]
    resource_type: Mapped[str | None]
    jobstatus: Mapped[str]
    njobs: Mapped[int]
    vo: Mapped[str] = mapped_column(server_default="atlas")


class JobsUserStats(Base):
    """Job counts per queue, share, user, working group and VO (user caps, the Analysis Stabilizer's inputs)."""

    __tablename__ = "jobs_user_stats"

    seq: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    panda_queue: Mapped[str] = mapped_column(sa.ForeignKey("schedconfig_json.panda_queue"), index=True)
    gshare: Mapped[str]
    produsername: Mapped[str]
    workinggroup: Mapped[str | None]
    jobstatus: Mapped[str]
    njobs: Mapped[int]
    ncores: Mapped[int]
    vo: Mapped[str] = mapped_column(server_default="atlas")


class TaskJobStats(Base):
    """Ended jobs of a task per queue, status and hour."""

    __tablename__ = "task_job_stats"

    seq: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    jeditaskid: Mapped[int] = mapped_column(BigId, index=True)
    panda_queue: Mapped[str]
    jobstatus: Mapped[str]
    modificationtime: Mapped[datetime]
    njobs: Mapped[int]


class Users(Base):
    """USERS: per-user facts the analysis brokerage reads."""

    __tablename__ = "users"

    produsername: Mapped[str] = mapped_column(primary_key=True)
    running_slots_hi: Mapped[int]
    disk_quota_exceeded: Mapped[bool]
    seq: Mapped[int]


class GlobalShares(Base):
    """GLOBAL_SHARES: the share tree (parent, value, throttled) and the usage of each global share."""

    __tablename__ = "global_shares"

    gshare: Mapped[str] = mapped_column(primary_key=True)
    usage_perc: Mapped[float | None]
    seq: Mapped[int]
    parent: Mapped[str | None]
    value: Mapped[float | None]
    throttled: Mapped[bool | None]
    stretchable: Mapped[bool | None]


class WorkQueues(Base):
    """JEDI_WORK_QUEUE: work queues with their order and criteria."""

    __tablename__ = "jedi_work_queue"

    queue_id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    queue_name: Mapped[str]
    queue_type: Mapped[str]
    vo: Mapped[str | None]
    queue_order: Mapped[int | None]
    criteria: Mapped[str | None]
    variables: Mapped[str | None] = mapped_column(JsonText)
    queue_function: Mapped[str | None]
    status: Mapped[str | None]
    seq: Mapped[int]
    partitionid: Mapped[int | None]


class JobAges(Base):
    """Per job group of JOBS_SHARE_STATS' keys, the oldest, median and newest creation and modification times of its
    jobs (jobsActive4 and jobsDefined4): the simulator starts the snapshot's jobs at those ages."""

    __tablename__ = "job_ages"

    seq: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    panda_queue: Mapped[str] = mapped_column(sa.ForeignKey("schedconfig_json.panda_queue"), index=True)
    gshare: Mapped[str]
    resource_type: Mapped[str | None]
    jobstatus: Mapped[str]
    vo: Mapped[str] = mapped_column(server_default="atlas")
    oldest_creationtime: Mapped[datetime | None]
    median_creationtime: Mapped[datetime | None]
    newest_creationtime: Mapped[datetime | None]
    oldest_modificationtime: Mapped[datetime | None]
    median_modificationtime: Mapped[datetime | None]
    newest_modificationtime: Mapped[datetime | None]


class QueueSlots(Base):
    """QUEUE_SLOTS: how many jobs each queue's pilots run at most (the simulator's capacity)."""

    __tablename__ = "queue_slots"

    panda_queue: Mapped[str] = mapped_column(primary_key=True)
    nslots: Mapped[int]
    seq: Mapped[int]


class JediTasks(Base):
    """JEDI_TASKS: the task columns brokerage reads (lower-cased JEDI names)."""

    __tablename__ = "jedi_tasks"

    jeditaskid: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=False)
    taskname: Mapped[str | None]
    status: Mapped[str | None]
    prodsourcelabel: Mapped[str | None]
    processingtype: Mapped[str | None]
    gshare: Mapped[str | None]
    resource_type: Mapped[str | None]
    currentpriority: Mapped[int]
    taskpriority: Mapped[int]
    username: Mapped[str | None]
    workinggroup: Mapped[str | None]
    corecount: Mapped[int]
    maxcorecount: Mapped[int | None]
    ramcount: Mapped[int]
    ramunit: Mapped[str | None]
    baseramcount: Mapped[int]
    cputime: Mapped[float | None]
    cputimeunit: Mapped[str | None]
    basewalltime: Mapped[int]
    walltime: Mapped[int | None]
    walltimeunit: Mapped[str | None]
    cpuefficiency: Mapped[int]
    outdiskcount: Mapped[float | None]
    outdiskunit: Mapped[str | None]
    workdiskcount: Mapped[int]
    iointensity: Mapped[float | None]
    diskio: Mapped[float | None]
    ipconnectivity: Mapped[str | None]
    allowinputlan: Mapped[str | None]
    eventservice: Mapped[bool]
    nucleus: Mapped[str | None]
    site: Mapped[str | None]
    vo: Mapped[str | None]
    cloud: Mapped[str | None]
    architecture: Mapped[str | None]
    transhome: Mapped[str | None]
    container_name: Mapped[str | None]
    onlytagsforfc: Mapped[bool]
    parent_tid: Mapped[int | None] = mapped_column(BigId)
    fullchain: Mapped[str | None]
    t1weight: Mapped[int | None]
    taskbrokeronmaster: Mapped[bool]
    inputprestaging: Mapped[bool]
    includedsite: Mapped[str | None]
    excludedsite: Mapped[str | None]
    avoidvp: Mapped[bool]
    task_class: Mapped[int | None]
    is_scout: Mapped[bool]
    is_merge: Mapped[bool]
    chunk_nevents: Mapped[int] = mapped_column(BigId)
    chunk_input_mb: Mapped[float | None]
    chunk_njobs: Mapped[int]
    neventsperjob: Mapped[int | None] = mapped_column(BigId)
    nfilesperjob: Mapped[int | None]
    ngbperjob: Mapped[float | None]
    tgtmaxoutputforng: Mapped[float | None]
    maxwalltime: Mapped[int | None]
    nmaxfilesperjob: Mapped[int | None]
    frozentime: Mapped[datetime | None]
    modificationtime: Mapped[datetime | None]
    seq: Mapped[int]


class JediDatasets(Base):
    """JEDI_DATASETS: the input datasets of tasks."""

    __tablename__ = "jedi_datasets"

    jeditaskid: Mapped[int] = mapped_column(BigId, sa.ForeignKey("jedi_tasks.jeditaskid"), primary_key=True)
    datasetid: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=False)
    datasetname: Mapped[str | None]
    is_master: Mapped[bool]
    nfiles: Mapped[int]
    size_gb: Mapped[float | None]
    nevents: Mapped[int] = mapped_column(BigId)
    neventsused: Mapped[int] = mapped_column(BigId)
    seq: Mapped[int]


class DatasetReplicas(Base):
    """Where the files of each input dataset are (Rucio replicas summed per endpoint)."""

    __tablename__ = "dataset_replicas"
    __table_args__ = (sa.Index("ix_dataset_replicas_dataset", "jeditaskid", "datasetid"),)

    seq: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    jeditaskid: Mapped[int] = mapped_column(BigId)
    datasetid: Mapped[int] = mapped_column(BigId)
    ddm_endpoint_name: Mapped[str] = mapped_column(sa.ForeignKey("ddm_endpoint.ddm_endpoint_name"))
    nfiles: Mapped[int]
    size_gb: Mapped[float | None]


class SwTags(Base):
    """SW_TAGS: the software a queue publishes (cmtconfigs, containers, cvmfs, architectures, tags) as JSON."""

    __tablename__ = "sw_tags"

    panda_queue: Mapped[str] = mapped_column(primary_key=True)
    data: Mapped[str] = mapped_column(JsonText)
    last_update: Mapped[datetime]
    seq: Mapped[int]


class TaskStatusLog(Base):
    """TASK_STATUS_LOG: every status a task entered and when (PanDA keeps this in TASKS_STATUSLOG)."""

    __tablename__ = "task_status_log"
    __table_args__ = (sa.Index("ix_task_status_log_task", "jeditaskid", "modificationtime"),)

    seq: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    jeditaskid: Mapped[int] = mapped_column(BigId, sa.ForeignKey("jedi_tasks.jeditaskid"))
    status: Mapped[str]
    modificationtime: Mapped[datetime]


# --- DIRAC task-queue matching (seed 004): list columns hold JSON arrays as text ----------------------------


class DiracJobs(Base):
    """DIRAC_JOBS: waiting jobs with the requirements TaskQueueDB groups them by (JobDB's JobRequirements)."""

    __tablename__ = "dirac_jobs"

    JobID: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=False)
    Owner: Mapped[str]
    OwnerGroup: Mapped[str]
    VO: Mapped[str | None]
    CPUTime: Mapped[int | None] = mapped_column(BigId)
    Sites: Mapped[str | None] = mapped_column(JsonText)
    BannedSites: Mapped[str | None] = mapped_column(JsonText)
    GridCEs: Mapped[str | None] = mapped_column(JsonText)
    Platforms: Mapped[str | None] = mapped_column(JsonText)
    JobTypes: Mapped[str | None] = mapped_column(JsonText)
    Tags: Mapped[str | None] = mapped_column(JsonText)
    Priority: Mapped[int | None]
    Status: Mapped[str | None]
    seq: Mapped[int]


class DiracGroupShares(Base):
    """DIRAC_GROUP_SHARES: /Registry/Groups/<g> JobShare, JobSharing property and AllowBackgroundTQs."""

    __tablename__ = "dirac_group_shares"

    OwnerGroup: Mapped[str] = mapped_column(primary_key=True)
    VO: Mapped[str | None]
    JobShare: Mapped[float | None]
    JobSharing: Mapped[bool | None]
    AllowBackgroundTQs: Mapped[bool | None]
    seq: Mapped[int]


class DiracSiteMask(Base):
    """DIRAC_SITE_MASK: the RSS status of each site (Active and Degraded sites take every job type)."""

    __tablename__ = "dirac_site_mask"

    Site: Mapped[str] = mapped_column(primary_key=True)
    Status: Mapped[str | None]
    seq: Mapped[int]


class DiracCes(Base):
    """DIRAC_CES: the resource description a pilot at each CE queue sends (for "pilot from a site")."""

    __tablename__ = "dirac_ces"

    Site: Mapped[str] = mapped_column(primary_key=True)
    GridCE: Mapped[str] = mapped_column(primary_key=True)
    Queue: Mapped[str] = mapped_column(primary_key=True, default="")
    Platform: Mapped[str | None]
    CPUTime: Mapped[int | None] = mapped_column(BigId)
    Tags: Mapped[str | None] = mapped_column(JsonText)
    RequiredTags: Mapped[str | None] = mapped_column(JsonText)
    NumberOfProcessors: Mapped[int | None]
    MaxRAM: Mapped[int | None]
    seq: Mapped[int]


class DiracRunningLimits(Base):
    """DIRAC_RUNNING_LIMITS: JobScheduling/RunningLimit/<Site>[/CEs/<GridCE>]/<Attribute>/<Value>."""

    __tablename__ = "dirac_running_limits"

    Site: Mapped[str] = mapped_column(primary_key=True)
    GridCE: Mapped[str] = mapped_column(primary_key=True, default="")
    Attribute: Mapped[str] = mapped_column(primary_key=True)
    Value: Mapped[str] = mapped_column(primary_key=True)
    Limit: Mapped[int]
    seq: Mapped[int]


class DiracRunningCounts(Base):
    """DIRAC_RUNNING_COUNTS: jobs Running, Matched or Stalled per site and attribute value (JobDB counters)."""

    __tablename__ = "dirac_running_counts"

    Site: Mapped[str] = mapped_column(primary_key=True)
    Attribute: Mapped[str] = mapped_column(primary_key=True)
    Value: Mapped[str] = mapped_column(primary_key=True)
    Running: Mapped[int]
    seq: Mapped[int]


class DiracMatchingDelays(Base):
    """DIRAC_MATCHING_DELAYS: JobScheduling/MatchingDelay/<Site>/<Attribute>/<Value> and the last match there."""

    __tablename__ = "dirac_matching_delays"

    Site: Mapped[str] = mapped_column(primary_key=True)
    Attribute: Mapped[str] = mapped_column(primary_key=True)
    Value: Mapped[str] = mapped_column(primary_key=True)
    Delay: Mapped[int]
    SinceLastMatch: Mapped[float | None]
    seq: Mapped[int]


# Snapshot table -> model, in an order where every referenced table comes first.
GRID_MODELS: dict[str, type[Base]] = {
    "sites": Site,
    "queues": SchedconfigJson,
    "ddm_endpoints": DdmEndpoint,
    "panda_ddm_relation": PandaDdmRelation,
    "network": NetworkMatrixKv,
    "job_counts": JobsShareStats,
    "user_job_counts": JobsUserStats,
    "task_job_counts": TaskJobStats,
    "users": Users,
    "gshares": GlobalShares,
    "work_queues": WorkQueues,
    "job_ages": JobAges,
    "queue_slots": QueueSlots,
    "tasks": JediTasks,
    "datasets": JediDatasets,
    "dataset_replicas": DatasetReplicas,
    "queue_software": SwTags,
    "task_status_log": TaskStatusLog,
    "dirac_jobs": DiracJobs,
    "dirac_group_shares": DiracGroupShares,
    "dirac_site_mask": DiracSiteMask,
    "dirac_ces": DiracCes,
    "dirac_running_limits": DiracRunningLimits,
    "dirac_running_counts": DiracRunningCounts,
    "dirac_matching_delays": DiracMatchingDelays,
}

# Snapshot tables stored as one JSON document per row (column -> JSON key), keyed by their first column.
JSON_TABLES: dict[str, str] = {"queues": "panda_queue", "queue_software": "panda_queue"}

# Natural keys the tables enforce (beyond what snapshot.check_references checks).
NATURAL_KEYS: dict[str, tuple[str, ...]] = {
    name: tuple(c.name for c in model.__table__.primary_key.columns if c.name != "seq")
    for name, model in GRID_MODELS.items()
}


def table_of(name: str) -> sa.Table:
    """The sa.Table that stores snapshot table NAME.

    Usage: ``table_of("tasks").name == "jedi_tasks"``
    """
    table: Any = GRID_MODELS[name].__table__
    return table
