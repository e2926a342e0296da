"""The snapshot's tables: every column with its type, default, range and meaning (PanDA's names), and the JSON
Schema generated from them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SCHEMA_VERSION = 1

QUEUE_TYPES = ("production", "analysis", "unified")
QUEUE_STATUSES = ("online", "offline", "brokeroff", "test", "standby", "paused")
SITE_ROLES = ("nucleus", "satellite")
BARE_NUCLEUS_MODES = ("", "only", "allow")
ENDPOINT_STATUSES = ("ON", "OFF", "TEST")
ENDPOINT_ACTIVITIES = ("read_lan", "write_lan", "read_wan", "write_wan")  # a DDM endpoint's detailed statuses
JOB_STATUSES = (
    "pending", "defined", "assigned", "activated", "sent", "starting", "running", "holding",
    "transferring", "throttled", "finished", "failed", "closed", "cancelled",
)  # fmt: skip
FULLCHAIN_MODES = ("", "only", "require", "capable")
DEFAULT_VO = "atlas"  # the VO of a task or job count that names none
# job_ages: per job group (the keys of job_counts) the oldest, median and newest of each clock of its jobs
AGE_CLOCKS = ("creationtime", "modificationtime")  # jobsActive4 / jobsDefined4 columns
AGE_RANKS = ("oldest", "median", "newest")


# Every integer column has a range checked wherever a grid comes in (validate, db import, from-panda, the API):
# INT_MIN..INT_MAX unless the column says otherwise, the range of the database's INTEGER columns, so a product of
# two values stays inside int64; ids and event counts (BIGINT in the database) go to BIG_MAX, the largest integer
# float64, JSON readers and JavaScript hold exactly. Nothing is ever wrapped or rounded on load.
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
BIG_MAX = 2**53 - 1
FLOAT_MAX = 1e300  # a float column's values stay far from overflow when summed or multiplied


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

    def bounds(self) -> tuple[float, float]:
        """The allowed range of a number column: (lowest, highest); ints default to INT_MIN..INT_MAX.

        Usage: ``lo, hi = Col("njobs", "int", "").bounds()``
        """
        if self.type == "int":
            hi = INT_MAX if self.maximum is None else self.maximum
            lo = (INT_MIN if hi <= INT_MAX else -hi) if self.minimum is None else self.minimum
            return lo, hi
        lo = -FLOAT_MAX if self.minimum is None else self.minimum
        return lo, FLOAT_MAX if self.maximum is None else self.maximum


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
        _c(
            "transtimehi",
            "float",
            "CRIC transtimehi: days a transferring job of priority >= 800 may wait (null = unset)",
            nullable=True,
            minimum=0,
        ),
        _c(
            "transtimelo",
            "float",
            "CRIC transtimelo: days a transferring job of priority < 800 may wait (null = unset)",
            nullable=True,
            minimum=0,
        ),
        _c("releases", "list", "CRIC releases: ['ANY'], ['AUTO'] or an explicit list", default=["AUTO"]),
        _c("jobseed", "str", "event service setting", default="std", choices=("std", "es", "eshigh", "all")),
        _c("capability", "str", "score / mcore / ucore", default="score"),
        _c("catchall", "str", "CRIC catchall flags", default=""),
        _c("fairsharepolicy", "str", "CRIC fairsharepolicy, e.g. type=evgensimul:100%", default=""),
        _c("wnconnectivity", "str", "worker-node connectivity network#ip_stack, e.g. full#IPv4", default="full"),
        _c("maxdiskio", "int", "diskIO limit, kB/s per core (0 = MAX_DISKIO_DEFAULT)", default=0, minimum=0),
        _c(
            "space",
            "int",
            "CRIC space: free space of the queue's SE, GB, read by GenJobBroker's SE space check (0 = unset)",
            default=0,
            minimum=0,
        ),
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
        _c(
            "scope",
            "str",
            "PANDA_DDM_RELATION.SCOPE: 'default', or e.g. 'analysis' (CRIC role write_lan_analysis) "
            "for the output of analysis jobs",
            default="default",
        ),
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
        _c(
            "vo",
            "str",
            "VO of the jobs (JOBS_SHARE_STATS.VO): a task's brokerage counts only its VO's jobs",
            default=DEFAULT_VO,
        ),
    ),
    "user_job_counts": (
        _c("panda_queue", "str", "queue", required=True),
        _c("gshare", "str", "global share", required=True),
        _c("produsername", "str", "user", required=True),
        _c("workinggroup", "str", "working group ('' for personal jobs)", default=""),
        _c("jobstatus", "str", "job status", required=True, choices=JOB_STATUSES),
        _c("njobs", "int", "number of jobs", required=True, minimum=0),
        _c("ncores", "int", "cores held by those jobs", default=0, minimum=0),
        _c(
            "vo",
            "str",
            "VO of the jobs (JOBSACTIVE4.VO): a user is a (USERNAME, VO) pair, a task's brokerage counts its VO's",
            default=DEFAULT_VO,
        ),
    ),
    "task_job_counts": (
        _c("jeditaskid", "int", "task", required=True, maximum=BIG_MAX),
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
        _c(
            "stretchable",
            "bool",
            "seed 003 STRETCHABLE: the share is first to get the unused share of shares without active jobs",
            default=False,
        ),
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
        _c(
            "partitionid",
            "int",
            "seed 003 PARTITIONID: the queue_id of the partition the queue belongs to; -1: the row is a partition "
            "(null = in none)",
            nullable=True,
            minimum=-1,
        ),
    ),
    "job_ages": (
        _c("panda_queue", "str", "queue", required=True),
        _c("gshare", "str", "global share", required=True),
        _c("resource_type", "str", "SCORE, MCORE, ...", default="SCORE"),
        _c("jobstatus", "str", "job status", required=True, choices=JOB_STATUSES),
        _c("vo", "str", "VO of the jobs", default=DEFAULT_VO),
        *(
            _c(f"{rank}_{clock}", "time", f"the {rank} {clock} of the group's jobs (null = not known)", nullable=True)
            for clock in AGE_CLOCKS
            for rank in AGE_RANKS
        ),
    ),
    "queue_slots": (
        _c("panda_queue", "str", "queue", required=True),
        _c("nslots", "int", "running-job slots the queue's pilots fill at most", required=True, minimum=0),
    ),
    "tasks": (
        _c("jeditaskid", "int", "JEDI task id", required=True, minimum=1, maximum=BIG_MAX),
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
        _c(
            "walltime",
            "int",
            "JEDI_TASKS.WALLTIME in walltimeunit; GenJobBroker compares it with maxtime/mintime (0 = unset)",
            default=0,
            minimum=0,
        ),
        _c("walltimeunit", "str", "JEDI_TASKS.WALLTIMEUNIT", default=""),
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
        _c(
            "vo",
            "str",
            "virtual organisation (JEDI_TASKS.VO): atlas goes to the ATLAS brokers, others to the generic job broker",
            default="atlas",
        ),
        _c("cloud", "str", "cloud the task is bound to (the generic broker's candidates)", nullable=True),
        _c("architecture", "str", "sw_platform@base_platform#host_cpu_spec&host_gpu_spec", default=""),
        _c("transhome", "str", "release or cache, e.g. AthDerivation-21.2.2.0", default=""),
        _c("container_name", "str", "fat container", default=""),
        _c("onlytagsforfc", "bool", "fat container only via tags", default=False),
        _c("parent_tid", "int", "parent task (null = none)", nullable=True, maximum=BIG_MAX),
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
            maximum=BIG_MAX,
        ),
        _c("chunk_input_mb", "float", "input size of one job, MB (inputDiskCount)", default=0.0, minimum=0),
        _c("chunk_njobs", "int", "jobs to generate in this cycle (N_j)", default=1, minimum=0),
        _c("neventsperjob", "int", "split rule nEventsPerJob: events per job (0 = not set)", default=0, minimum=0),
        _c("nfilesperjob", "int", "split rule nFilesPerJob: input files per job (0 = not set)", default=0, minimum=0),
        _c(
            "ngbperjob",
            "float",
            "split rule nGBPerJob: a job's disk estimate (input + max(output, 2.5 GB) + workdir) at most this, GB "
            "(0 = not set)",
            default=0.0,
            minimum=0,
        ),
        _c(
            "tgtmaxoutputforng",
            "float",
            "split rule tgtMaxOutputForNG: target size of the largest output, GB; nGBPerJob is reset towards it after "
            "the scouts (0 = not set)",
            default=0.0,
            minimum=0,
        ),
        _c(
            "maxwalltime",
            "int",
            "split rule maxWalltime: a job's walltime at most, hours (0 = not set)",
            default=0,
            minimum=0,
        ),
        _c(
            "nmaxfilesperjob",
            "int",
            "split rule nMaxFilesPerJob: the most input files in one job (0 = not set: JEDI's 200)",
            default=0,
            minimum=0,
        ),
        _c("frozentime", "time", "when the task's input was frozen", nullable=True),
        _c("modificationtime", "time", "last modification", nullable=True),
    ),
    "datasets": (
        _c("jeditaskid", "int", "task", required=True, maximum=BIG_MAX),
        _c("datasetid", "int", "dataset id", required=True, maximum=BIG_MAX),
        _c("datasetname", "str", "dataset name", default=""),
        _c("is_master", "bool", "primary (master) input dataset", default=True),
        _c("nfiles", "int", "files", default=0, minimum=0),
        _c("size_gb", "float", "total size, GB", default=0.0, minimum=0),
        _c("nevents", "int", "events", default=0, minimum=0, maximum=BIG_MAX),
        _c("neventsused", "int", "events already used", default=0, minimum=0, maximum=BIG_MAX),
    ),
    "dataset_replicas": (
        _c("jeditaskid", "int", "task", required=True, maximum=BIG_MAX),
        _c("datasetid", "int", "dataset", required=True, maximum=BIG_MAX),
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
        _c("jeditaskid", "int", "task", required=True, maximum=BIG_MAX),
        _c("status", "str", "new status", required=True),
        _c("modificationtime", "time", "when the task entered the status", required=True),
    ),
    # --- DIRAC task-queue matching (seed 004); every dirac_ table is optional and empty by default ---
    "dirac_jobs": (
        _c("JobID", "int", "DIRAC job id", required=True, minimum=1, maximum=BIG_MAX),
        _c("Owner", "str", "user name of the submitter", required=True),
        _c("OwnerGroup", "str", "group the job was submitted with", required=True),
        _c("VO", "str", "virtual organisation of the group", default=""),
        _c(
            "CPUTime",
            "int",
            "required CPU time, s (bucketed into the task queue's CPUTime)",
            default=86400,
            minimum=0,
            maximum=BIG_MAX,
        ),
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
        _c("CPUTime", "int", "normalised CPU time a pilot there offers, s", default=86400, minimum=0, maximum=BIG_MAX),
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
            if c.type in ("int", "float"):
                spec["minimum"], spec["maximum"] = c.bounds()
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
