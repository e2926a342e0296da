"""GridSnapshot: the grid state as columnar tables, with JSON load/save and validation."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from brokerage.model.architecture import ArchitectureError, parse_architecture
from brokerage.model.workqueues import criteria_problem

SCHEMA_VERSION = 1

QUEUE_TYPES = ("production", "analysis", "unified")
QUEUE_STATUSES = ("online", "offline", "brokeroff", "test", "standby", "paused")
SITE_ROLES = ("nucleus", "satellite")
BARE_NUCLEUS_MODES = ("", "only", "allow")
ENDPOINT_STATUSES = ("ON", "OFF", "TEST")
JOB_STATUSES = (
    "pending", "defined", "assigned", "activated", "starting", "running", "holding",
    "transferring", "throttled", "finished", "failed", "closed", "cancelled",
)  # fmt: skip
FULLCHAIN_MODES = ("", "only", "require", "capable")


class SnapshotError(ValueError):
    """A snapshot is malformed; ``problems`` lists every bad field path with what is allowed."""

    def __init__(self, problems: list[str]) -> None:
        shown = "; ".join(problems[:20]) + (f"; … and {len(problems) - 20} more" if len(problems) > 20 else "")
        super().__init__(f"malformed snapshot ({len(problems)} problem{'s' if len(problems) != 1 else ''}): {shown}")
        self.problems = problems


@dataclass(frozen=True)
class Col:
    """One column of a snapshot table: JSON type, default, bounds and meaning."""

    name: str
    type: str  # str, int, float, bool, time, list, json
    description: str
    required: bool = False
    default: Any = None
    nullable: bool = False
    minimum: float | None = None
    choices: tuple[str, ...] | None = None
    maximum: float | None = None


def _c(name: str, type_: str, description: str, **kw: Any) -> Col:
    return Col(name, type_, description, **kw)


TABLES: dict[str, tuple[Col, ...]] = {
    "queues": (
        _c("panda_queue", "str", "PanDA queue name (CRIC panda_resource)", required=True),
        _c("atlas_site", "str", "ATLAS site the queue belongs to (sites.site_name)", required=True),
        _c("cloud", "str", "cloud of the queue", default=""),
        _c("type", "str", "CRIC type", required=True, choices=QUEUE_TYPES),
        _c("status", "str", "CRIC status", required=True, choices=QUEUE_STATUSES),
        _c("corecount", "int", "cores per job slot (0 = any)", default=1, minimum=0),
        _c("corepower", "float", "HS06 per core", default=10.0, minimum=0),
        _c("maxrss", "int", "largest memory per job slot, MB (0 = no limit)", default=0, minimum=0),
        _c("minrss", "int", "smallest memory per job slot, MB (0 = no limit)", default=0, minimum=0),
        _c("maxtime", "int", "longest walltime, s (0 = no limit)", default=0, minimum=0),
        _c("mintime", "int", "shortest walltime, s (0 = no limit)", default=0, minimum=0),
        _c("maxwdir", "int", "scratch disk per job slot, MB (0 = no limit)", default=0, minimum=0),
        _c("direct_access_lan", "bool", "jobs may read input directly from the local storage", default=False),
        _c("transferringlimit", "int", "transferring_limit of the queue (0 = default)", default=0, minimum=0),
        _c("releases", "list", "CRIC releases: ['ANY'], ['AUTO'] or an explicit list", default=["AUTO"]),
        _c("jobseed", "str", "event service setting", default="std", choices=("std", "es", "eshigh", "all")),
        _c("capability", "str", "score / mcore / ucore", default="score"),
        _c("catchall", "str", "CRIC catchall flags", default=""),
        _c("fairsharepolicy", "str", "CRIC fairsharepolicy, e.g. type=evgensimul:100%", default=""),
        _c("wnconnectivity", "str", "worker-node connectivity network#ip_stack, e.g. full#IPv4", default="full"),
        _c("maxdiskio", "int", "diskIO limit, kB/s per core (0 = MAX_DISKIO_DEFAULT)", default=0, minimum=0),
        _c("diskio_avg", "float", "average diskIO per core of running jobs, kB/s", default=0.0, minimum=0),
        _c("laststart", "time", "when a job last started at the queue (SiteData.laststart)", nullable=True),
        _c("npilot", "int", "pilots that asked for or updated jobs in the last NO_PILOT_HOURS", default=0, minimum=0),
        _c(
            "lastpilot",
            "time",
            "when a pilot last asked for jobs at the queue (decides -nopilot when set)",
            nullable=True,
        ),
        _c("nbatchjob", "int", "running + submitted batch workers (Harvester)", default=0, minimum=0),
        _c("numslots", "int", "Harvester numSlots (null = undefined)", nullable=True, minimum=0),
        _c("site_class", "int", "analysis site class: 1 hi, 0 mid, -1 lo (null = unclassified)", nullable=True),
        _c("trr", "float", "to-running rate: jobs starting per hour over the last 6 h", default=0.0, minimum=0),
        _c("is_vp", "bool", "the queue reads through a virtual placement (VP) cache", default=False),
    ),
    "sites": (
        _c("site_name", "str", "ATLAS site name", required=True),
        _c("role", "str", "nucleus or satellite", required=True, choices=SITE_ROLES),
        _c("tier_level", "int", "WLCG tier", default=2, minimum=0),
        _c("cloud", "str", "cloud / region", default=""),
        _c("state", "str", "nucleus state (ACTIVE to be used)", default="ACTIVE"),
        _c("bare_nucleus", "str", "catchall bareNucleus mode", default="", choices=BARE_NUCLEUS_MODES),
    ),
    "ddm_endpoints": (
        _c("ddm_endpoint_name", "str", "RSE name", required=True),
        _c("site_name", "str", "ATLAS site owning the endpoint", required=True),
        _c("type", "str", "DATADISK, DATATAPE, SCRATCHDISK, ...", default="DATADISK"),
        _c("is_tape", "bool", "tape endpoint", default=False),
        _c("space_total", "float", "total space, GB", default=0.0, minimum=0),
        _c("space_free", "float", "free space, GB", default=0.0, minimum=0),
        _c("space_expired", "float", "space held by expired secondary data, GB", default=0.0, minimum=0),
        _c("read_lan", "str", "detailed status read_lan", default="ON", choices=ENDPOINT_STATUSES),
        _c("write_lan", "str", "detailed status write_lan", default="ON", choices=ENDPOINT_STATUSES),
        _c("read_wan", "str", "detailed status read_wan", default="ON", choices=ENDPOINT_STATUSES),
        _c("write_wan", "str", "detailed status write_wan", default="ON", choices=ENDPOINT_STATUSES),
    ),
    "panda_ddm_relation": (
        _c("panda_queue", "str", "queue", required=True),
        _c("ddm_endpoint_name", "str", "endpoint the queue reads input from", required=True),
        _c("default_write", "bool", "the queue's default output endpoint", default=False),
    ),
    "network": (
        _c("src", "str", "source ATLAS site", required=True),
        _c("dst", "str", "destination ATLAS site", required=True),
        _c(
            "key",
            "str",
            "NETWORK_MATRIX_KV key, e.g. AGIS_closeness, Production Output_queued, dashb_mbps_1h",
            required=True,
        ),
        _c("value", "float", "metric value", required=True),
        _c("ts", "time", "when the value was recorded", nullable=True),
    ),
    "job_counts": (
        _c("panda_queue", "str", "queue", required=True),
        _c("gshare", "str", "global share", required=True),
        _c("resource_type", "str", "SCORE, MCORE, ...", default="SCORE"),
        _c("jobstatus", "str", "job status", required=True, choices=JOB_STATUSES),
        _c("njobs", "int", "number of jobs", required=True, minimum=0),
    ),
    "user_job_counts": (
        _c("panda_queue", "str", "queue", required=True),
        _c("gshare", "str", "global share", required=True),
        _c("produsername", "str", "user", required=True),
        _c("workinggroup", "str", "working group ('' for personal jobs)", default=""),
        _c("jobstatus", "str", "job status", required=True, choices=JOB_STATUSES),
        _c("njobs", "int", "number of jobs", required=True, minimum=0),
        _c("ncores", "int", "cores held by those jobs", default=0, minimum=0),
    ),
    "task_job_counts": (
        _c("jeditaskid", "int", "task", required=True),
        _c("panda_queue", "str", "queue", required=True),
        _c("jobstatus", "str", "finished, failed or closed", required=True, choices=JOB_STATUSES),
        _c("modificationtime", "time", "hour the jobs ended", required=True),
        _c("njobs", "int", "number of jobs", required=True, minimum=0),
    ),
    "users": (
        _c("produsername", "str", "user", required=True),
        _c("running_slots_hi", "int", "running slots of the user at hi-class sites", default=0, minimum=0),
        _c("disk_quota_exceeded", "bool", "the user's global disk quota is exceeded", default=False),
    ),
    "gshares": (
        _c("gshare", "str", "global share", required=True),
        _c("usage_perc", "float", "usage as % of the share's target", default=0.0, minimum=0),
        _c("parent", "str", "parent share in the share tree ('' = top level)", default=""),
        _c(
            "value",
            "float",
            "share of the parent, relative to its siblings (null = not in the tree)",
            nullable=True,
            minimum=0,
        ),
        _c("throttled", "bool", "the job throttler limits this share's work queue (JEDI throttled='Y')", default=True),
    ),
    "work_queues": (
        _c("queue_id", "int", "JEDI_WORK_QUEUE queue_id", required=True, minimum=0),
        _c("queue_name", "str", "work queue name", required=True),
        _c("queue_type", "str", "prodSourceLabel of the tasks it holds: managed, user, test, ...", required=True),
        _c("vo", "str", "virtual organisation", default="atlas"),
        _c("queue_order", "int", "position among the queues of its type (the first true criteria wins)", nullable=True),
        _c(
            "criteria",
            "str",
            "SQL-like condition on prodSourceLabel, workingGroup, processingType, coreCount, "
            "eventService, site ('' = every task)",
            default="",
        ),
        _c("variables", "json", 'bind variables of the criteria, e.g. {":pt": "evgen"}', default={}),
        _c(
            "queue_function",
            "str",
            "'Resource': JobGenerator runs it on its own; else its tasks go by global share",
            default="",
        ),
        _c("status", "str", "active or inactive", default="active", choices=("active", "inactive")),
    ),
    "queue_slots": (
        _c("panda_queue", "str", "queue", required=True),
        _c("nslots", "int", "running-job slots the queue's pilots fill at most", required=True, minimum=0),
    ),
    "tasks": (
        _c("jeditaskid", "int", "JEDI task id", required=True, minimum=1),
        _c("taskname", "str", "task name", default=""),
        _c("status", "str", "JEDI task status", default="ready"),
        _c("prodsourcelabel", "str", "managed (production), user (analysis), test", default="managed"),
        _c("processingtype", "str", "evgen, simul, reprocessing, pmerge, urgent, ...", default=""),
        _c("gshare", "str", "global share", default="MC Simulation"),
        _c("resource_type", "str", "SCORE, MCORE, ...", default="SCORE"),
        _c("currentpriority", "int", "current priority", default=500),
        _c("taskpriority", "int", "task priority", default=500),
        _c("username", "str", "owner", default=""),
        _c("workinggroup", "str", "working group ('' for personal tasks)", default=""),
        _c("corecount", "int", "cores per job (0 = any)", default=1, minimum=0),
        _c("maxcorecount", "int", "largest core count allowed (null = none)", nullable=True, minimum=0),
        _c("ramcount", "int", "memory, in ramunit", default=2000, minimum=0),
        _c(
            "ramunit",
            "str",
            "MB, MBPerCore or MBPerCoreFixed",
            default="MBPerCore",
            choices=("MB", "MBPerCore", "MBPerCoreFixed"),
        ),
        _c("baseramcount", "int", "memory not scaling with cores, MB", default=0, minimum=0),
        _c("cputime", "float", "cpuTime per event, HS06 s", default=0.0, minimum=0),
        _c("cputimeunit", "str", "HS06sPerEvent", default="HS06sPerEvent"),
        _c("basewalltime", "int", "walltime not scaling with CPU, s", default=0, minimum=0),
        _c("cpuefficiency", "int", "CPU efficiency, %", default=90, minimum=0),
        _c("outdiskcount", "float", "output size per event (kB) or per input size", default=0.0, minimum=0),
        _c("outdiskunit", "str", "kBPerEvent or kB (per MB of input)", default="kBPerEvent"),
        _c("workdiskcount", "int", "work directory size, MB", default=0, minimum=0),
        _c("iointensity", "float", "IO intensity, kB/s per core", nullable=True, minimum=0),
        _c("diskio", "float", "disk IO, kB/s per core", nullable=True, minimum=0),
        _c("ipconnectivity", "str", "network_connectivity#ip_stack required by the task", default=""),
        _c("allowinputlan", "str", "'only' = direct access only", default=""),
        _c("eventservice", "bool", "event service task", default=False),
        _c("nucleus", "str", "assigned nucleus (null = not yet)", nullable=True),
        _c("site", "str", "pre-assigned queues, comma separated", nullable=True),
        _c("architecture", "str", "sw_platform@base_platform#host_cpu_spec&host_gpu_spec", default=""),
        _c("transhome", "str", "release or cache, e.g. AthDerivation-21.2.2.0", default=""),
        _c("container_name", "str", "fat container", default=""),
        _c("onlytagsforfc", "bool", "fat container only via tags", default=False),
        _c("parent_tid", "int", "parent task (null = none)", nullable=True),
        _c("fullchain", "str", "fullChain task parameter", default="", choices=FULLCHAIN_MODES),
        _c("t1weight", "int", "t1Weight task parameter (null = unset)", nullable=True),
        _c("taskbrokeronmaster", "bool", "locality only on the primary input", default=False),
        _c("inputprestaging", "bool", "data carousel: input is staged on demand", default=False),
        _c("includedsite", "str", "analysis includedSite list (wildcards)", default=""),
        _c("excludedsite", "str", "analysis excludedSite list (wildcards)", default=""),
        _c("avoidvp", "bool", "avoid virtual-placement queues", default=False),
        _c("task_class", "int", "analysis task class: 2 S, 1 A, 0 B, -1 C (null = none)", nullable=True),
        _c("is_scout", "bool", "the next jobs are scouts", default=False),
        _c("is_merge", "bool", "the next jobs are merge jobs", default=False),
        _c(
            "chunk_nevents",
            "int",
            "events in the smallest job allowed (nEvents of the estimates)",
            default=0,
            minimum=0,
        ),
        _c("chunk_input_mb", "float", "input size of one job, MB (inputDiskCount)", default=0.0, minimum=0),
        _c("chunk_njobs", "int", "jobs to generate in this cycle (N_j)", default=1, minimum=0),
        _c("frozentime", "time", "when the task's input was frozen", nullable=True),
        _c("modificationtime", "time", "last modification", nullable=True),
    ),
    "datasets": (
        _c("jeditaskid", "int", "task", required=True),
        _c("datasetid", "int", "dataset id", required=True),
        _c("datasetname", "str", "dataset name", default=""),
        _c("is_master", "bool", "primary (master) input dataset", default=True),
        _c("nfiles", "int", "files", default=0, minimum=0),
        _c("size_gb", "float", "total size, GB", default=0.0, minimum=0),
        _c("nevents", "int", "events", default=0, minimum=0),
        _c("neventsused", "int", "events already used", default=0, minimum=0),
    ),
    "dataset_replicas": (
        _c("jeditaskid", "int", "task", required=True),
        _c("datasetid", "int", "dataset", required=True),
        _c("ddm_endpoint_name", "str", "endpoint holding files of the dataset", required=True),
        _c("nfiles", "int", "files available there", default=0, minimum=0),
        _c("size_gb", "float", "size available there, GB", default=0.0, minimum=0),
    ),
    "queue_software": (
        _c("panda_queue", "str", "queue, or ALL for the container-name dictionary", required=True),
        _c("cmtconfigs", "list", "cmtconfigs published by the queue", default=[]),
        _c("containers", "list", "containers published by the queue", default=[]),
        _c("cvmfs", "list", "cvmfs repositories", default=[]),
        _c(
            "architectures",
            "json",
            "CPU / GPU dictionaries: a list of objects of strings or lists of strings",
            default=[],
        ),
        _c(
            "tags",
            "json",
            "software tags: a list of objects; cmtconfig, project, release, container_name, tag strings, sources a list of strings",
            default=[],
        ),
    ),
    "task_status_log": (
        _c("jeditaskid", "int", "task", required=True),
        _c("status", "str", "new status", required=True),
        _c("modificationtime", "time", "when the task entered the status", required=True),
    ),
    # --- DIRAC task-queue matching (seed 004); every dirac_ table is optional and empty by default ---
    "dirac_jobs": (
        _c("JobID", "int", "DIRAC job id", required=True, minimum=1),
        _c("Owner", "str", "user name of the submitter", required=True),
        _c("OwnerGroup", "str", "group the job was submitted with", required=True),
        _c("VO", "str", "virtual organisation of the group", default=""),
        _c("CPUTime", "int", "required CPU time, s (bucketed into the task queue's CPUTime)", default=86400, minimum=0),
        _c("Sites", "list", "sites that can run the job (empty = any)", default=[]),
        _c("BannedSites", "list", "sites that must not run the job", default=[]),
        _c("GridCEs", "list", "grid CEs that can run the job (empty = any)", default=[]),
        _c("Platforms", "list", "platforms accepted by the job (empty = any)", default=[]),
        _c("JobTypes", "list", "job type (empty = any)", default=[]),
        _c("Tags", "list", "tags the resource must offer (e.g. MultiProcessor, 8Processors, 4GB)", default=[]),
        _c("Priority", "int", "user job priority 0..10", default=1, minimum=0),
        _c(
            "Status",
            "str",
            "Waiting jobs are in task queues; Matched ones just left theirs",
            default="Waiting",
            choices=("Waiting", "Matched"),
        ),
    ),
    "dirac_group_shares": (
        _c("OwnerGroup", "str", "DIRAC group", required=True),
        _c("VO", "str", "virtual organisation of the group", default=""),
        _c(
            "JobShare",
            "float",
            "/Registry/Groups/<g>/JobShare (DIRAC_JOB_SHARE when absent)",
            default=1000.0,
            minimum=0,
        ),
        _c(
            "JobSharing", "bool", "the group has the JobSharing property (one priority entity per group)", default=False
        ),
        _c("AllowBackgroundTQs", "bool", "task queues of Priority-0 jobs get the minimum share", default=False),
    ),
    "dirac_site_mask": (
        _c("Site", "str", "DIRAC site name", required=True),
        _c(
            "Status",
            "str",
            "RSS status; only Active and Degraded sites take non-Test jobs",
            default="Active",
            choices=("Active", "Degraded", "Probing", "Banned"),
        ),
    ),
    "dirac_ces": (
        _c("Site", "str", "DIRAC site of the CE", required=True),
        _c("GridCE", "str", "computing element host", required=True),
        _c("Queue", "str", "batch queue", default=""),
        _c("Platform", "str", "DIRAC platform of the worker nodes", default=""),
        _c("CPUTime", "int", "normalised CPU time a pilot there offers, s", default=86400, minimum=0),
        _c("Tags", "list", "tags the CE offers", default=[]),
        _c("RequiredTags", "list", "tags every job at the CE must carry", default=[]),
        _c("NumberOfProcessors", "int", "processors per pilot", default=1, minimum=1),
        _c("MaxRAM", "int", "memory per pilot, MB (0 = not published)", default=0, minimum=0),
    ),
    "dirac_running_limits": (
        _c("Site", "str", "site of the limit", required=True),
        _c("GridCE", "str", "CE of a CE-level limit ('' = site-wide)", default=""),
        _c(
            "Attribute", "str", "job attribute limited (JobType, OwnerGroup, Owner, Site, Platform, ...)", required=True
        ),
        _c("Value", "str", "attribute value limited", required=True),
        _c("Limit", "int", "JobScheduling/RunningLimit/<Site>/<Attribute>/<Value>", required=True, minimum=0),
    ),
    "dirac_running_counts": (
        _c("Site", "str", "site", required=True),
        _c("Attribute", "str", "job attribute counted", required=True),
        _c("Value", "str", "attribute value", required=True),
        _c("Running", "int", "jobs Running, Matched or Stalled at the site with that value", required=True, minimum=0),
    ),
    "dirac_matching_delays": (
        _c("Site", "str", "site of the delay", required=True),
        _c("Attribute", "str", "job attribute delayed", required=True),
        _c("Value", "str", "attribute value delayed", required=True),
        _c("Delay", "int", "JobScheduling/MatchingDelay/<Site>/<Attribute>/<Value>, s", required=True, minimum=0),
        _c(
            "SinceLastMatch",
            "float",
            "seconds since such a job was last matched at the site (null = never)",
            nullable=True,
            minimum=0,
        ),
    ),
}


def _empty(name: str) -> pd.DataFrame:
    return pd.DataFrame({c.name: pd.Series(dtype=_DTYPES[c.type]) for c in TABLES[name]})


_DTYPES = {
    "str": "object",
    "int": "float64",  # nullable ints stay float; _coerce_frame narrows the non-nullable ones
    "float": "float64",
    "bool": "bool",
    "time": "datetime64[ns, UTC]",
    "list": "object",
    "json": "object",
}


@dataclass(frozen=True, eq=False)
class GridSnapshot:
    """The grid at one moment, immutable: every table as a DataFrame, plus when it was taken.

    What brokers derive from it (numpy views, indices, verdicts) lives in a ``brokerage.model.cache.GridCache``
    held by the caller, never on the snapshot.
    Usage: ``snap = GridSnapshot.from_json(path); snap.queues.head()``
    """

    tables: Mapping[str, pd.DataFrame]
    taken_at: datetime
    snapshot_id: str = "snapshot"
    version: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "tables", MappingProxyType(dict(self.tables)))

    def __reduce__(self) -> tuple[Any, ...]:
        # a read-only mapping does not pickle; snapshots travel to worker processes
        return (GridSnapshot, (dict(self.tables), self.taken_at, self.snapshot_id, self.version))

    def __getattr__(self, name: str) -> pd.DataFrame:
        tables = self.__dict__.get("tables")
        if tables is not None and name in TABLES:
            return tables[name]
        raise AttributeError(name)

    @property
    def key(self) -> str:
        """Small identity for caches: snapshot id and version."""
        return f"{self.snapshot_id}@{self.version}"

    # --- JSON ---
    @classmethod
    def from_dict(cls, data: Any) -> GridSnapshot:
        """Validate a parsed JSON document and build the snapshot; raise SnapshotError listing every problem."""
        problems = validate(data)
        if problems:
            raise SnapshotError(problems)
        tables = {name: _frame(name, data.get(name, [])) for name in TABLES}
        snap = cls(
            tables=tables,
            taken_at=_parse_time(data["taken_at"]),
            snapshot_id=str(data.get("snapshot_id") or "snapshot"),
            version=int(data.get("version") or 0),
        )
        ref = check_references(snap)
        if ref:
            raise SnapshotError(ref)
        return snap

    @classmethod
    def from_json(cls, path: str | Path) -> GridSnapshot:
        """Load a snapshot JSON file."""
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            raise SnapshotError([f"{path}: cannot read file ({exc.strerror})"]) from exc
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SnapshotError([f"{path}: not UTF-8 text: byte {exc.start} is {raw[exc.start]:#04x}"]) from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SnapshotError([f"{path}: not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]) from exc
        except RecursionError as exc:
            raise SnapshotError([f"{path}: JSON nested deeper than {MAX_JSON_DEPTH} levels"]) from exc
        except ValueError as exc:  # e.g. an integer literal longer than Python's 4,300-digit limit
            raise SnapshotError([f"{path}: not JSON: {exc}"]) from exc
        return cls.from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        """The snapshot as a JSON-ready document (the schema in docs/snapshot.schema.json)."""
        out: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "snapshot_id": self.snapshot_id,
            "version": self.version,
            "taken_at": _iso(self.taken_at),
        }
        for name, cols in TABLES.items():
            out[name] = _records(self.tables[name], cols)
        return out

    def to_json(self, path: str | Path) -> None:
        """Write the snapshot as JSON."""
        Path(path).write_text(json.dumps(self.to_dict(), separators=(",", ":")))

    def replace(self, **tables: pd.DataFrame) -> GridSnapshot:
        """A new snapshot with some tables replaced (derived caches are not carried over)."""
        merged = {**self.tables, **tables}
        return GridSnapshot(merged, self.taken_at, self.snapshot_id, self.version + 1)


def empty_snapshot(taken_at: datetime | None = None) -> GridSnapshot:
    """A snapshot with every table empty."""
    return GridSnapshot({n: _empty(n) for n in TABLES}, taken_at or datetime.now(UTC))


def frame(name: str, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Build table NAME from row dicts, filling defaults (no validation; for generators and tests)."""
    return _frame(name, rows)


def _frame(name: str, rows: list[dict[str, Any]]) -> pd.DataFrame:
    cols = TABLES[name]
    data: dict[str, Any] = {}
    for c in cols:
        # null in an optional, non-nullable column means absent: the default
        values = [_default(c) if (v := r.get(c.name)) is None and not c.nullable else v for r in rows]
        if c.type == "time":
            data[c.name] = pd.to_datetime(pd.Series(values, dtype="object"), utc=True, format="ISO8601")
        elif c.type in ("int", "float"):
            arr = pd.Series([np.nan if v is None else v for v in values], dtype="float64")
            if c.type == "int" and not c.nullable:
                arr = arr.astype("int64")
            data[c.name] = arr
        elif c.type == "bool":
            data[c.name] = pd.Series([bool(v) for v in values], dtype="bool")
        else:
            data[c.name] = pd.Series(values, dtype="object")
    return pd.DataFrame(data)


def _default(c: Col) -> Any:
    return list(c.default) if isinstance(c.default, list) else c.default


def _records(df: pd.DataFrame, cols: tuple[Col, ...]) -> list[dict[str, Any]]:
    out = []
    names = [c.name for c in cols]
    columns = {c.name: _jsonable(df[c.name], c) for c in cols}
    for i in range(len(df)):
        out.append({n: columns[n][i] for n in names})
    return out


def _jsonable(series: pd.Series, c: Col) -> list[Any]:
    if c.type == "time":
        return [None if pd.isna(v) else _iso(v) for v in series]
    if c.type == "int":
        return [None if pd.isna(v) else int(v) for v in series]
    if c.type == "float":
        return [None if pd.isna(v) else float(v) for v in series]
    if c.type == "bool":
        return [bool(v) for v in series]
    return list(series)


def _iso(t: Any) -> str:
    ts = pd.Timestamp(t)
    if ts.tzinfo is None:
        ts = ts.tz_localize("UTC")
    return ts.tz_convert("UTC").strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_time(value: str) -> datetime:
    ts = pd.Timestamp(value)
    if ts.tzinfo is None:
        ts = ts.tz_localize("UTC")
    return ts.to_pydatetime()


_TIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # numbers live in int64 columns; beyond them numpy wraps silently
FLOAT_MAX = 1e300  # a float column's values stay far from overflow when summed or multiplied
MAX_JSON_DEPTH = 64  # snapshot documents nest 4 levels; deeper input is refused before it can recurse
# numbers are JSON numbers: "5", 1_000, " 5 " and non-ASCII digits are refused, never read as numbers
NUMBER_FORMS = "a JSON number, not a string"


def _time_problem(v: Any) -> str | None:
    """What is wrong with V as an ISO 8601 time (a real calendar date pandas can hold), or None."""
    if not (isinstance(v, str) and _TIME_RE.match(v)):
        return f"expected an ISO 8601 time like 2026-11-22T10:00:00Z, got {_shown(v)}"
    try:
        pd.Timestamp(v)
    except (ValueError, OverflowError):
        return f"{_shown(v)} is not a real date and time (years 1678-2261, months 1-12, days of the month)"
    return None


def _shown(v: Any) -> str:
    """A short, printable form of a JSON value for messages (numpy scalars as plain numbers)."""
    if isinstance(v, np.generic):
        v = v.item()
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _text_problem(v: str) -> str | None:
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        return f"{_shown(v)} holds a lone surrogate (not valid Unicode text)"
    return None


def _string_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) and _text_problem(x) is None for x in v)


def _architectures_problem(v: Any) -> str | None:
    entries = [v] if isinstance(v, dict) else v
    if not isinstance(entries, list):
        return f"expected a list of objects, got {_shown(v)}"
    for j, e in enumerate(entries):
        if not isinstance(e, dict):
            return f"[{j}]: expected an object, got {_shown(e)}"
        for k, x in e.items():
            if not (x is None or (isinstance(x, str) and _text_problem(x) is None) or _string_list(x)):
                return f"[{j}].{k}: expected a string or a list of strings, got {_shown(x)}"
    return None


_TAG_TEXT_KEYS = ("cmtconfig", "project", "release", "container_name", "tag")  # what the software checks read


def _tags_problem(v: Any) -> str | None:
    if not isinstance(v, list):
        return f"expected a list of objects, got {_shown(v)}"
    for j, e in enumerate(v):
        if not isinstance(e, dict):
            return f"[{j}]: expected an object, got {_shown(e)}"
        for k in _TAG_TEXT_KEYS:
            x = e.get(k)
            if not (x is None or (isinstance(x, str) and _text_problem(x) is None)):
                return f"[{j}].{k}: expected a string, got {_shown(x)}"
        x = e.get("sources")
        if not (x is None or (isinstance(x, str) and _text_problem(x) is None) or _string_list(x)):
            return f"[{j}].sources: expected a list of strings, got {_shown(x)}"
    return None


# every json-typed column names the shape it must have; brokers read these values without further checks
def _variables_problem(v: Any) -> str | None:
    if not isinstance(v, dict) or not all(
        isinstance(k, str) and isinstance(x, (str, int, float)) and not isinstance(x, bool) for k, x in v.items()
    ):
        return f"expected an object of bind variable -> string or number, got {_shown(v)}"
    return None


_JSON_SHAPES = {"architectures": _architectures_problem, "tags": _tags_problem, "variables": _variables_problem}


def _number_problem(c: Col, v: Any) -> str | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        kind = "an integer" if c.type == "int" else "a number"
        return f"expected {kind} ({NUMBER_FORMS}), got {_shown(v)}"
    if isinstance(v, float) and not math.isfinite(v):
        return f"expected a finite number, got {_shown(v)}"
    if c.type == "int" and isinstance(v, float) and not v.is_integer():
        return f"expected an integer, got {_shown(v)}"
    lo = c.minimum if c.minimum is not None else (INT64_MIN if c.type == "int" else -FLOAT_MAX)
    hi = c.maximum if c.maximum is not None else (INT64_MAX if c.type == "int" else FLOAT_MAX)
    if not lo <= v <= hi:
        if v < lo and c.minimum is not None:
            return f"{_shown(v)} is below the minimum {c.minimum:g}"
        bounds = f"{int(lo)}..{int(hi)}" if c.type == "int" else f"{lo:g}..{hi:g}"
        return f"{_shown(v)} is outside the allowed range {bounds}"
    return None


def _check_value(c: Col, v: Any) -> str | None:
    """Return what is wrong with V for column C, or None."""
    if v is None:
        return None if (c.nullable or not c.required) else "required, got null"
    t = c.type
    if t == "str":
        if not isinstance(v, str):
            return f"expected a string, got {_shown(v)}"
        if problem := _text_problem(v):
            return problem
    if t in ("int", "float") and (problem := _number_problem(c, v)):
        return problem
    if t == "bool" and not isinstance(v, bool):
        return f"expected true or false, got {_shown(v)}"
    if t == "time" and (problem := _time_problem(v)):
        return problem
    if t == "list" and not _string_list(v):
        return f"expected a list of strings, got {_shown(v)}"
    if t == "json" and c.name in _JSON_SHAPES and (problem := _JSON_SHAPES[c.name](v)):
        return problem
    if c.choices is not None and v not in c.choices:
        return f"{_shown(v)} is not allowed; expected one of {', '.join(repr(x) for x in c.choices)}"
    return None


def _depth_problem(data: Any) -> str | None:
    stack = [(data, 1)]
    while stack:
        v, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return f"$: nested deeper than {MAX_JSON_DEPTH} levels"
        if isinstance(v, dict):
            stack.extend((x, depth + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, depth + 1) for x in v)
    return None


def validate(data: Any) -> list[str]:
    """Every problem in a snapshot document, as ``path: what is wrong`` lines (empty list = valid).

    Usage: ``validate({"taken_at": "2026-01-01T00:00:00Z", "queues": [{}]})``
    """
    if not isinstance(data, dict):
        return ["$: expected a JSON object with the snapshot tables"]
    if deep := _depth_problem(data):
        return [deep]
    problems: list[str] = []
    if "taken_at" not in data:
        problems.append("taken_at: required (ISO 8601 time the snapshot was taken)")
    elif problem := _time_problem(data["taken_at"]):
        problems.append(f"taken_at: {problem}")
    sv = data.get("schema_version", SCHEMA_VERSION)
    if isinstance(sv, bool) or sv != SCHEMA_VERSION:
        problems.append(f"schema_version: {_shown(sv)} is not supported; expected {SCHEMA_VERSION}")
    if problem := _check_value(Col("version", "int", "", minimum=0), data.get("version")):
        problems.append(f"version: {problem}")
    if problem := _check_value(Col("snapshot_id", "str", ""), data.get("snapshot_id")):
        problems.append(f"snapshot_id: {problem}")
    known = set(TABLES) | {"schema_version", "snapshot_id", "version", "taken_at"}
    for key in data:
        if key not in known:
            problems.append(f"{key}: unknown table; expected one of {', '.join(TABLES)}")
    for name, cols in TABLES.items():
        rows = data.get(name, [])
        if not isinstance(rows, list):
            problems.append(f"{name}: expected a list of rows")
            continue
        colmap = {c.name: c for c in cols}
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                problems.append(f"{name}[{i}]: expected an object")
                continue
            for c in cols:
                if c.required and c.name not in row:
                    problems.append(f"{name}[{i}].{c.name}: required ({c.description})")
            for k, v in row.items():
                col = colmap.get(k)
                if col is None:
                    problems.append(f"{name}[{i}].{_shown(k)[1:-1]}: unknown column")
                    continue
                msg = _check_value(col, v)
                if msg is None and name == "tasks" and k == "architecture" and v:
                    msg = _architecture_problem(v)
                if msg:
                    problems.append(f"{name}[{i}].{k}: {msg}")
    return problems


def _architecture_problem(text: str) -> str | None:
    """The broker's own parser judges a task architecture, so validation and brokerage cannot disagree."""
    try:
        parse_architecture(text)
    except ArchitectureError as exc:
        return f"malformed: {exc}"
    return None


def check_json_columns(snap: GridSnapshot) -> list[str]:
    """Shape problems of every json-typed value in SNAP (for tables built without validate, e.g. by importers).

    Usage: ``assert not check_json_columns(snap)``
    """
    problems: list[str] = []
    for name, cols in TABLES.items():
        for c in cols:
            if c.type != "json" or c.name not in snap.tables[name]:
                continue
            for i, v in enumerate(snap.tables[name][c.name]):
                if msg := _check_value(c, v):
                    problems.append(f"{name}[{i}].{c.name}: {msg}")
    return problems


def _share_cycles(g: pd.DataFrame) -> list[str]:
    """Shares whose parent chain loops back on itself."""
    parent = dict(zip(g["gshare"].astype(str), g["parent"].fillna("").astype(str), strict=True))
    out = []
    for i, name in enumerate(g["gshare"].astype(str)):
        seen, p = {name}, parent.get(name, "")
        while p and p in parent:
            if p in seen:
                out.append(f"gshares[{i}].parent: the share tree loops back to {_shown(name)} through {_shown(p)}")
                break
            seen.add(p)
            p = parent[p]
    return out


def _criteria_problems(wq: pd.DataFrame) -> list[str]:
    """Work queues whose criteria cannot be read."""
    out = []
    for i, (text, variables) in enumerate(zip(wq["criteria"], wq["variables"], strict=True)):
        vars_ = variables if isinstance(variables, dict) else {}
        if problem := criteria_problem(str(text or ""), vars_):
            out.append(f"work_queues[{i}].criteria: {problem}")
    return out


def check_references(snap: GridSnapshot) -> list[str]:
    """Cross-table problems: duplicate keys and references to unknown queues, sites or endpoints."""
    problems: list[str] = []

    def dupes(table: str, col: str) -> None:
        s = snap.tables[table][col]
        for i in np.flatnonzero(s.duplicated().to_numpy()):
            problems.append(f"{table}[{i}].{col}: duplicate {_shown(s.iloc[i])}")

    def dupe_rows(table: str, cols: list[str]) -> None:
        df = snap.tables[table][cols]
        for i in np.flatnonzero(df.duplicated().to_numpy()):
            key = ", ".join(f"{c}={_shown(df[c].iloc[i])}" for c in cols)
            problems.append(f"{table}[{i}]: duplicate row for {key}")

    def refs(table: str, col: str, target: str, tcol: str, extra: tuple[str, ...] = ()) -> None:
        allowed = set(snap.tables[target][tcol]) | set(extra)
        s = snap.tables[table][col]
        for i in np.flatnonzero(~s.isin(allowed).to_numpy()):
            problems.append(f"{table}[{i}].{col}: unknown {target[:-1]} {_shown(s.iloc[i])}")

    dupes("queues", "panda_queue")
    dupes("sites", "site_name")
    dupes("ddm_endpoints", "ddm_endpoint_name")
    dupes("tasks", "jeditaskid")
    dupe_rows("datasets", ["jeditaskid", "datasetid"])
    dupes("gshares", "gshare")
    dupes("work_queues", "queue_id")
    dupes("queue_slots", "panda_queue")
    refs("gshares", "parent", "gshares", "gshare", extra=("",))
    refs("queue_slots", "panda_queue", "queues", "panda_queue")
    problems.extend(_share_cycles(snap.tables["gshares"]))
    problems.extend(_criteria_problems(snap.tables["work_queues"]))
    refs("queues", "atlas_site", "sites", "site_name")
    refs("ddm_endpoints", "site_name", "sites", "site_name")
    refs("panda_ddm_relation", "panda_queue", "queues", "panda_queue")
    refs("panda_ddm_relation", "ddm_endpoint_name", "ddm_endpoints", "ddm_endpoint_name")
    refs("job_counts", "panda_queue", "queues", "panda_queue")
    refs("user_job_counts", "panda_queue", "queues", "panda_queue")
    refs("datasets", "jeditaskid", "tasks", "jeditaskid")
    refs("dataset_replicas", "ddm_endpoint_name", "ddm_endpoints", "ddm_endpoint_name")
    refs("queue_software", "panda_queue", "queues", "panda_queue", extra=("ALL",))
    return problems


def json_schema() -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) document generated from TABLES, for docs and external tools."""
    kinds = {
        "str": {"type": "string"},
        "int": {"type": "integer"},
        "float": {"type": "number"},
        "bool": {"type": "boolean"},
        "time": {"type": "string", "format": "date-time"},
        "list": {"type": "array", "items": {"type": "string"}},
        "json": {},
    }
    props: dict[str, Any] = {
        "schema_version": {"const": SCHEMA_VERSION},
        "snapshot_id": {"type": "string"},
        "version": {"type": "integer"},
        "taken_at": {"type": "string", "format": "date-time"},
    }
    for name, cols in TABLES.items():
        row_props = {}
        for c in cols:
            spec = dict(kinds[c.type])
            if c.choices:
                spec["enum"] = list(c.choices)
            if c.minimum is not None:
                spec["minimum"] = c.minimum
            if c.nullable or not c.required:
                spec = {"anyOf": [spec, {"type": "null"}]} if spec else {}
            spec["description"] = c.description
            row_props[c.name] = spec
        props[name] = {
            "type": "array",
            "items": {
                "type": "object",
                "properties": row_props,
                "required": [c.name for c in cols if c.required],
                "additionalProperties": False,
            },
        }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Brokerage grid snapshot",
        "type": "object",
        "properties": props,
        "required": ["taken_at"],
        "additionalProperties": False,
    }
