"""gdpconfig parameter registry, typed parsing and layered lookup (defaults < stored < what-if)."""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import math
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from brokerage.model.errors import UNKNOWN_KEY, ConfigError
from brokerage.model.profiles import PROFILE_NAMES, SEED

Value = Any

TYPES = ("int", "float", "bool", "str", "json")
# PanDA's CONFIG.TYPE column accepts these spellings.
_TYPE_ALIASES = {
    "int": "int",
    "integer": "int",
    "float": "float",
    "bool": "bool",
    "boolean": "bool",
    "str": "str",
    "string": "str",
    "json": "json",
}


@dataclass(frozen=True)
class Param:
    """One gdpconfig parameter: PanDA's coordinates, type, default, bounds and meaning."""

    key: str
    component: str
    type: str
    default: Value
    unit: str
    description: str
    app: str = "jedi"
    vo: str | None = "atlas"
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] | None = None
    nullable: bool = False
    in_panda_config: bool = True
    family: bool = False  # True: KEY_<suffix> variants (e.g. per gshare) fall back to KEY
    # which rules read it is not declared here: each rule declares the keys it reads (brokerage/sim/uses.py lists them)

    def allowed(self) -> str:
        """Describe the allowed values in one phrase, for error messages and the tuning page."""
        if self.type == "bool":
            text = "true or false"
        elif self.choices:
            text = "one of " + ", ".join(self.choices)
        elif self.type in ("int", "float"):
            kind = "an integer" if self.type == "int" else "a number"
            lo = "-inf" if self.minimum is None else _fmt(self.minimum)
            hi = "+inf" if self.maximum is None else _fmt(self.maximum)
            text = f"{kind} in [{lo}, {hi}]"
        elif self.type == "json" and (self.minimum is not None or self.maximum is not None):
            lo = "-inf" if self.minimum is None else _fmt(self.minimum)
            hi = "+inf" if self.maximum is None else _fmt(self.maximum)
            text = f"a JSON list of strictly increasing integers in [{lo}, {hi}]"
        elif self.type == "json":
            text = "a JSON value"
        else:
            text = "a string"
        return text + (" or empty (unset)" if self.nullable else "")


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else repr(x)


def _p(key: str, component: str, type_: str, default: Value, unit: str, description: str, **kw: Any) -> Param:
    return Param(key, component, type_, default, unit, description, **kw)


_TB = "taskbrokerage"
_JB = "jobbroker"
_AJ = "anal_jobbroker"
_CONST = dict(in_panda_config=False, app="brokerage", vo=None)

PARAMS: tuple[Param, ...] = (
    # --- task brokerage (nucleus choice), reference §2.2 ---
    _p(
        "DISK_THRESHOLD",
        _TB,
        "int",
        100,
        "TB",
        "Free space a nucleus storage must keep after the projected output of its remaining work; "
        "DISK_THRESHOLD_<gshare> overrides it per global share.",
        minimum=0,
        maximum=100000,
        family=True,
    ),
    _p(
        "INPUT_SIZE_THRESHOLD",
        _TB,
        "int",
        1,
        "GB",
        "Total input size above which the input-size locality fraction is required.",
        minimum=0,
        maximum=10**7,
    ),
    _p(
        "INPUT_NUM_THRESHOLD",
        _TB,
        "int",
        100,
        "files",
        "Total number of input files above which the file-count locality fraction is required.",
        minimum=0,
        maximum=10**8,
    ),
    _p(
        "INPUT_SIZE_FRACTION",
        _TB,
        "int",
        10,
        "%",
        "Share of the input size that must be available at the nucleus.",
        minimum=0,
        maximum=100,
    ),
    _p(
        "INPUT_NUM_FRACTION",
        _TB,
        "int",
        10,
        "%",
        "Share of the input files that must be available at the nucleus.",
        minimum=0,
        maximum=100,
    ),
    _p(
        "MIN_IO_INTENSITY_WITH_LOCAL_DATA",
        _TB,
        "int",
        200,
        "kB/s",
        "Tasks at or below this IO intensity (with small input) may ignore data locality; above it the "
        "nucleus weight uses the local input fraction.",
        minimum=0,
        maximum=10**7,
    ),
    _p(
        "MIN_INPUT_SIZE_WITH_LOCAL_DATA",
        _TB,
        "int",
        10000,
        "GB",
        "Tasks with at most this much input (and low IO) may ignore data locality when no nucleus has the data.",
        minimum=0,
        maximum=10**8,
    ),
    _p(
        "MAX_TASK_PRIO_WITH_LOCAL_DATA",
        _TB,
        "int",
        800,
        "priority",
        "Tasks at or above this priority ignore data locality when no nucleus has the data.",
        minimum=0,
        maximum=100000,
    ),
    _p(
        "DATA_LOCATION_CHECK_PERIOD",
        _TB,
        "int",
        7,
        "days",
        "Under the panda-1.0.4 rules (data_check_period_as_jedi), a task frozen (in assigning) for longer than "
        "this skips the nucleus data locality check; 0 means JEDI's default, 7.",
        minimum=0,
        maximum=3650,
    ),
    _p(
        "NQUEUED_NUC_CAP",
        _TB,
        "int",
        2000,
        "files",
        "Files queued for transfer into a nucleus above which it counts as backlogged.",
        vo=None,
        minimum=0,
        maximum=10**8,
    ),
    _p(
        "TAPE_WEIGHT",
        _TB,
        "float",
        0.001,
        "factor",
        "tapeWeight: nucleus weight factor when the input is only on tape there.",
        minimum=0,
        maximum=1,
        **_CONST,
    ),
    _p(
        "RW_OFFSET",
        _TB,
        "float",
        50,
        "HS06 days",
        "rwOffset: lower bound of RW in the nucleus weight denominator max(rwOffset, RW).",
        minimum=0,
        maximum=10**9,
        **_CONST,
    ),
    _p(
        "OUTPUT_GB_PER_CORE_DAY",
        _TB,
        "float",
        0.25,
        "GB",
        "normalizedExpOutSize day factor: expected output per cpuTime x corePower x day.",
        minimum=0,
        maximum=1000,
        **_CONST,
    ),
    _p(
        "NUCLEUS_PENDING_MINUTES",
        _TB,
        "int",
        30,
        "min",
        "How long a task waits before task brokerage is retried when every nucleus is skipped.",
        minimum=1,
        maximum=10080,
        **_CONST,
    ),
    # --- production job brokerage, reference §3.1 ---
    _p(
        "NW_ACTIVE",
        _JB,
        "bool",
        True,
        "",
        "Multiply the queue weight by the network weight (the seed applies it; PanDA's code default is off).",
    ),
    _p(
        "NW_QUEUE_IMPORTANCE",
        _JB,
        "float",
        0.5,
        "fraction",
        "Share of queuedWeight in the network weight; throughputWeight gets the rest.",
        minimum=0,
        maximum=1,
    ),
    _p(
        "NW_THRESHOLD",
        _JB,
        "float",
        1.7,
        "weight",
        "Urgent or priority >= 1000 tasks need networkWeight >= NW_THRESHOLD x NW_WEIGHT_MULTIPLIER.",
        minimum=0,
        maximum=10,
    ),
    _p(
        "NW_WEIGHT_MULTIPLIER",
        _JB,
        "float",
        1.0,
        "factor",
        "Multiplier of NW_THRESHOLD for urgent tasks.",
        minimum=0,
        maximum=100,
    ),
    _p(
        "NQUEUED_SAT_CAP",
        _JB,
        "int",
        150,
        "files",
        "Files queued on a satellite-to-nucleus link above which the satellite's queues are skipped; "
        "also the scale of queuedWeight.",
        minimum=1,
        maximum=10**7,
    ),
    _p(
        "NQUEUED_NUC_CAP_FOR_JOBS",
        _JB,
        "int",
        10000,
        "files",
        "Files being aggregated to the nucleus above which every queue is skipped.",
        minimum=0,
        maximum=10**8,
    ),
    _p(
        "IO_INTENSITY_CUTOFF",
        _JB,
        "int",
        200,
        "kB/s",
        "Tasks above this IO intensity may not move much input to a queue.",
        minimum=0,
        maximum=10**7,
    ),
    _p(
        "SIZE_CUTOFF_TO_MOVE_INPUT",
        _JB,
        "int",
        10,
        "GB",
        "Largest total size of missing input an IO-intensive task may move to a queue.",
        minimum=0,
        maximum=10**7,
    ),
    _p(
        "NUM_CUTOFF_TO_MOVE_INPUT",
        _JB,
        "int",
        100,
        "files",
        "Largest number of missing input files an IO-intensive task may move to a queue.",
        minimum=0,
        maximum=10**8,
    ),
    _p(
        "MAX_DISKIO_DEFAULT",
        _JB,
        "int",
        10**10,
        "kB/s per core",
        "Disk IO limit per core for queues that do not set maxdiskio.",
        minimum=0,
        maximum=10**12,
    ),
    _p(
        "STORAGE_MIN_FREE_SIZE",
        _JB,
        "int",
        200,
        "GB",
        "Free space the queue's local storage must have (the seed's 200 GB disk floor).",
        vo="atlas",
        minimum=0,
        maximum=10**7,
    ),
    _p(
        "MEMORY_COMPENSATION",
        _JB,
        "float",
        0.9,
        "factor",
        "compensation in (baseRamCount + ramCount x coreCount) x compensation.",
        minimum=0.1,
        maximum=2,
        **_CONST,
    ),
    _p(
        "MIN_OUTPUT_DISK_GB",
        _JB,
        "float",
        0.5,
        "GB",
        "Lower bound of the expected output size in the scratch-disk estimate.",
        minimum=0,
        maximum=1000,
        **_CONST,
    ),
    _p(
        "INACTIVE_HOURS",
        _JB,
        "float",
        2,
        "h",
        "A queue is inactive when no job started for this long although activated jobs were waiting.",
        minimum=0,
        maximum=720,
        **_CONST,
    ),
    _p(
        "NO_PILOT_HOURS",
        _JB,
        "float",
        3,
        "h",
        "Queues whose last pilot (lastpilot) is older than this are skipped; npilot = 0 decides when unknown.",
        minimum=0,
        maximum=720,
        **_CONST,
    ),
    _p(
        "MIN_WALLTIME_SCOUT_MERGE_HOURS",
        _JB,
        "float",
        24,
        "h",
        "Scout and merge jobs need queues whose maxtime is at least this long.",
        minimum=0,
        maximum=720,
        **_CONST,
    ),
    _p(
        "HIGH_PRIO_NUCLEUS_ONLY",
        _JB,
        "int",
        800,
        "priority",
        "Jobs at or above this priority (and scouts) go only to the nucleus' queues and avoid inactive queues.",
        minimum=0,
        maximum=100000,
        **_CONST,
    ),
    _p(
        "HIGH_PRIO_MULTICORE",
        _JB,
        "int",
        900,
        "priority",
        "Any-core tasks (corecount 0) at or above this priority (and scouts) need multi-core queues.",
        minimum=0,
        maximum=100000,
        **_CONST,
    ),
    _p(
        "ES_HIGH_PRIORITY",
        _JB,
        "int",
        900,
        "priority",
        "Event service tasks at or above this priority (and scouts) may use jobseed=eshigh queues.",
        minimum=0,
        maximum=100000,
        **_CONST,
    ),
    _p(
        "DEFAULT_CORE_POWER",
        _JB,
        "float",
        10.0,
        "HS06 per core",
        "Core power assumed for queues that publish none (walltime estimate).",
        minimum=0.1,
        maximum=1000,
        **_CONST,
    ),
    _p(
        "EXPRESS_PRIORITY",
        _JB,
        "int",
        1000,
        "priority",
        "Tasks at or above this priority (or processingType urgent) must meet the network threshold.",
        minimum=0,
        maximum=100000,
        **_CONST,
    ),
    _p(
        "DEFAULT_TRANSFERRING_LIMIT",
        _JB,
        "int",
        2000,
        "jobs",
        "transferring_limit of queues that define none.",
        minimum=0,
        maximum=10**7,
        **_CONST,
    ),
    _p(
        "BOOTSTRAP_NBATCHJOB_CAP",
        _JB,
        "int",
        20,
        "jobs",
        "min(nBatchJob, this) replaces nRunning when nRunning is below it (bootstrap).",
        minimum=0,
        maximum=10**6,
        **_CONST,
    ),
    _p(
        "WEIGHT_QUEUE_OFFSET",
        _JB,
        "float",
        10,
        "jobs",
        "The +10 in (activated + assigned + starting + defined + 10).",
        minimum=0,
        maximum=10**6,
        **_CONST,
    ),
    _p(
        "QUEUED_RUNNING_RATIO_CAP",
        _JB,
        "float",
        2,
        "ratio",
        "Step 4: skip queues whose queued jobs exceed this times running.",
        minimum=0,
        maximum=1000,
        **_CONST,
    ),
    _p(
        "MAX_SITE_CANDIDATES",
        _JB,
        "int",
        10,
        "queues",
        "How many of the best candidates are taken.",
        minimum=1,
        maximum=1000,
        **_CONST,
    ),
    _p(
        "MAX_PRIO_TO_BOOTSTRAP",
        _JB,
        "int",
        150,
        "priority",
        "Tasks at or below this currentPriority may bootstrap queues with Harvester workers and use numSlots "
        "(PanDA's code; read under the rule switch running_as_jedi).",
        minimum=0,
        maximum=100000,
    ),
    _p(
        "MAX_MISSING_INPUT_FILES",
        _JB,
        "int",
        10,
        "files",
        "A replica missing at most this many files counts as complete (PanDA's input pre-check; read under the "
        "rule switch input_completeness_precheck).",
        minimum=0,
        maximum=10**7,
    ),
    _p(
        "MIN_INPUT_COMPLETENESS",
        _JB,
        "int",
        90,
        "%",
        "A replica holding at least this share of the files counts as complete (PanDA's input pre-check).",
        minimum=0,
        maximum=100,
    ),
    _p(
        "NQUEUELIMITSITE",
        _JB,
        "int",
        20,
        "jobs",
        "Lower limit of a queue's cap on queued jobs, max(NQUEUELIMITSITE_<gshare>, 2 x nRunning) (PanDA's code; "
        "read under the rule switch final_stage_as_jedi; 0 means 20).",
        minimum=0,
        maximum=10**7,
        family=True,
    ),
    _p(
        "RULES",
        "brokerage",
        "str",
        SEED,
        "",
        "Rule profile: 'seed' follows the seed documents, 'panda-1.0.4' PanDA's code at that version, switch by "
        "switch (docs/crosscheck.md).",
        choices=PROFILE_NAMES,
        **_CONST,
    ),
    _p(
        "ALL_CAPPED_KEEP_BEST",
        _JB,
        "int",
        3,
        "queues",
        "When the step-4 caps skip every queue, keep the queues with this many best weights (seeds 001 and 003: "
        "3); 0, or the rule switch all_capped_wait (profile panda-1.0.4), lets the task wait as PanDA's code does.",
        minimum=0,
        maximum=1000,
        **_CONST,
    ),
    _p(
        "JOB_PENDING_MINUTES",
        _JB,
        "int",
        60,
        "min",
        "How long a production task is pending when every queue is skipped.",
        minimum=1,
        maximum=10080,
        **_CONST,
    ),
    _p(
        "T1_WEIGHT_IO_INTENSITY",
        _JB,
        "int",
        500,
        "kB/s",
        "Tasks with t1Weight=0 or unset and ioIntensity at or above this use the nucleus weight.",
        minimum=0,
        maximum=10**7,
        **_CONST,
    ),
    _p(
        "WORLD_NUCLEUS_WEIGHT",
        _JB,
        "float",
        4,
        "factor",
        "The nucleus weight (cloudconfig.weight) used for IO-intensive tasks without t1Weight.",
        minimum=0,
        maximum=10**6,
        **_CONST,
    ),
    _p(
        "T1_WEIGHT_HIGH_PRIO",
        _JB,
        "float",
        100,
        "factor",
        "t1Weight = max(t1Weight, this) for tasks at or above T1_WEIGHT_HIGH_PRIO_MIN priority.",
        minimum=0,
        maximum=10**6,
        **_CONST,
    ),
    _p(
        "T1_WEIGHT_HIGH_PRIO_MIN",
        _JB,
        "int",
        900,
        "priority",
        "Priority from which the high-priority t1Weight applies.",
        minimum=0,
        maximum=100000,
        **_CONST,
    ),
    # --- network weight, reference §5 ---
    _p(
        "MAX_CLOSENESS",
        "network",
        "float",
        11,
        "closeness",
        "AGIS closeness of the worst link (0 is best).",
        minimum=1,
        maximum=1000,
        **_CONST,
    ),
    _p(
        "MISSING_CLOSENESS_FRACTION",
        "network",
        "float",
        0.7,
        "fraction",
        "A link without closeness is taken as this fraction of MAX_CLOSENESS.",
        minimum=0,
        maximum=1,
        **_CONST,
    ),
    _p(
        "SAME_SITE_NETWORK_WEIGHT",
        "network",
        "float",
        2.5,
        "weight",
        "queuedWeight and throughputWeight of a queue at the nucleus itself.",
        minimum=0,
        maximum=100,
        **_CONST,
    ),
    # --- analysis job brokerage, reference §4.1 ---
    _p(
        "TW_DONE_JOB_STAT",
        _AJ,
        "int",
        6,
        "h",
        "Window of finished/failed/closed job history of the task per queue.",
        minimum=1,
        maximum=720,
    ),
    _p(
        "MIN_BAD_JOBS_TO_SKIP_PQ",
        _AJ,
        "int",
        5,
        "jobs",
        "Queues with nFailed + nClosed >= max(2 x nFinished, this) are skipped for the task.",
        minimum=0,
        maximum=10**6,
    ),
    _p(
        "BASE_QUEUE_LENGTH_PER_PQ",
        _AJ,
        "int",
        100,
        "jobs",
        "Analysis Stabilizer: queues with fewer queued jobs are never throttled; floor of nQ_max.",
        minimum=0,
        maximum=10**6,
    ),
    _p(
        "BASE_EXPECTED_WAIT_HOUR_ON_PQ",
        _AJ,
        "float",
        8,
        "h",
        "Analysis Stabilizer: queues with nQ < this x trr are never throttled.",
        minimum=0,
        maximum=1000,
    ),
    _p(
        "BASE_DEFAULT_QUEUE_LENGTH_PER_PQ_USER",
        _AJ,
        "int",
        5,
        "jobs",
        "Analysis Stabilizer: floor of max_q_len for any user.",
        minimum=0,
        maximum=10**6,
    ),
    _p(
        "BASE_QUEUE_RATIO_ON_PQ",
        _AJ,
        "float",
        0.05,
        "ratio",
        "Analysis Stabilizer: max_q_len is at least this x nR(PQ).",
        minimum=0,
        maximum=100,
    ),
    _p(
        "STATIC_MAX_QUEUE_RUNNING_RATIO",
        _AJ,
        "float",
        2.0,
        "ratio",
        "Analysis Stabilizer: nQ_max is at least this x nR(PQ).",
        minimum=0,
        maximum=100,
    ),
    _p(
        "MAX_EXPECTED_WAIT_HOUR",
        _AJ,
        "float",
        12.0,
        "h",
        "Analysis Stabilizer: nQ_max is at least this x trr(PQ).",
        minimum=0,
        maximum=1000,
    ),
    _p(
        "IO_INTENSITY_CUTOFF_USER",
        _AJ,
        "int",
        None,
        "kB/s",
        "Analysis tasks at or below this IO intensity skip the input data locality check (unset: off).",
        nullable=True,
        minimum=0,
        maximum=10**7,
    ),
    _p(
        "CAP_RUNNING_USER_JOBS",
        "prio_mgr",
        "int",
        None,
        "jobs",
        "A user's running jobs above this (queued above twice this) throttle their tasks (unset: off).",
        app="pandaserver",
        vo=None,
        nullable=True,
        minimum=0,
        maximum=10**7,
    ),
    _p(
        "CAP_RUNNING_USER_CORES",
        "prio_mgr",
        "int",
        None,
        "cores",
        "A user's running cores above this (queued above twice this) throttle their tasks (unset: off).",
        app="pandaserver",
        vo=None,
        nullable=True,
        minimum=0,
        maximum=10**8,
    ),
    _p(
        "CAP_RUNNING_GROUP_JOBS",
        "prio_mgr",
        "int",
        None,
        "jobs",
        "Working-group cap on running jobs (queued: twice this) (unset: off).",
        app="pandaserver",
        vo=None,
        nullable=True,
        minimum=0,
        maximum=10**7,
    ),
    _p(
        "CAP_RUNNING_GROUP_CORES",
        "prio_mgr",
        "int",
        None,
        "cores",
        "Working-group cap on running cores (queued: twice this) (unset: off).",
        app="pandaserver",
        vo=None,
        nullable=True,
        minimum=0,
        maximum=10**8,
    ),
    _p(
        "USER_USAGE_THRESHOLD_A",
        "analy_eval",
        "int",
        1000,
        "slots",
        "Class A tasks are throttled when share usage > max(this / user's hi-site slots, 1) x 100 % of target.",
        app="pandaserver",
        minimum=1,
        maximum=10**7,
    ),
    _p(
        "USAGE_THROTTLE_CLASS_C",
        _AJ,
        "float",
        90,
        "%",
        "Class C User Analysis tasks are throttled above this share usage.",
        minimum=0,
        maximum=1000,
        **_CONST,
    ),
    _p(
        "USAGE_THROTTLE_CLASS_B",
        _AJ,
        "float",
        95,
        "%",
        "Class B User Analysis tasks are throttled above this share usage.",
        minimum=0,
        maximum=1000,
        **_CONST,
    ),
    _p(
        "ANAL_LOCALITY_PRIORITY",
        _AJ,
        "int",
        2000,
        "priority",
        "Analysis tasks at or above this priority skip the input data locality check.",
        minimum=0,
        maximum=100000,
        **_CONST,
    ),
    _p(
        "OVERLOAD_MIN_QUEUE",
        _AJ,
        "int",
        20,
        "jobs",
        "A queue is overloaded when more jobs than this are queued and queued/running exceeds the grid's ratio times OVERLOAD_RATIO_OFFSET.",
        minimum=0,
        maximum=10**6,
    ),
    _p(
        "OVERLOAD_RATIO_OFFSET",
        _AJ,
        "float",
        1.2,
        "factor",
        "Factor on the grid's queued/running ratio above which a queue counts as overloaded.",
        minimum=0,
        maximum=100,
    ),
    _p(
        "ANAL_QUEUE_FLOOR",
        _AJ,
        "int",
        20,
        "jobs",
        "The 20 in defined + activated + assigned + starting > 2 x max(20, running).",
        minimum=0,
        maximum=10**6,
        **_CONST,
    ),
    _p(
        "ANAL_PENDING_MINUTES",
        _AJ,
        "int",
        20,
        "min",
        "How long an analysis task is pending when every queue is skipped.",
        minimum=1,
        maximum=10080,
        **_CONST,
    ),
    _p(
        "ANAL_BASIC_WEIGHT",
        _AJ,
        "str",
        "original",
        "",
        "Which basic weight ranks analysis queues; the seed says the original one is currently used.",
        choices=("original", "new"),
        **_CONST,
    ),
    _p(
        "SITE_CLASS_EPSILON_1",
        _AJ,
        "float",
        0.05,
        "weight",
        "epsilon_1 of the site-class weight table (must exceed epsilon_2).",
        minimum=0,
        maximum=1000,
        **_CONST,
    ),
    _p(
        "SITE_CLASS_EPSILON_2",
        _AJ,
        "float",
        0.001,
        "weight",
        "epsilon_2 of the site-class weight table.",
        minimum=0,
        maximum=1000,
        **_CONST,
    ),
)

_TQDB = "taskqueuedb"
_MATCHER = "matcher"
_DIRAC = dict(in_panda_config=False, app="dirac", vo=None)

DIRAC_PARAMS: tuple[Param, ...] = (
    # --- DIRAC task queues and matcher (seed 004, shared/reference/dirac-matching.md) ---
    _p(
        "DIRAC_CPU_BUCKETS",
        _TQDB,
        "json",
        [500, 5000, 50000, 300000],
        "s",
        "CPU-time buckets of task queues: a job's CPUTime goes up to the first bucket >= it, capped at the last. "
        "The seed's four; DIRAC's code uses taskQueueCPUTimeIntervals [360, 1800, 3600, 21600, 43200, 86400, "
        "172800, 259200, 345600, 518400, 691200, 864000, 1080000].",
        minimum=1,
        maximum=10**8,
        **_DIRAC,
    ),
    _p(
        "DIRAC_MAX_JOBS_IN_TQ",
        _TQDB,
        "int",
        5000,
        "jobs",
        "A task queue holding this many jobs takes no more; further jobs of the same requirements open a new one.",
        minimum=1,
        maximum=10**7,
        **_DIRAC,
    ),
    _p(
        "DIRAC_JOB_SHARE",
        _TQDB,
        "float",
        1000,
        "share",
        "JobShare of groups without one (DEFAULT_GROUP_SHARE); DIRAC_JOB_SHARE_<group> overrides a group's JobShare.",
        minimum=0,
        maximum=10**9,
        family=True,
        **_DIRAC,
    ),
    _p(
        "DIRAC_TQ_MIN_SHARE",
        _TQDB,
        "float",
        0.001,
        "priority",
        "TQ_MIN_SHARE: the smallest task-queue Priority, also the Priority of background task queues.",
        minimum=0,
        maximum=10**6,
        **_DIRAC,
    ),
    _p(
        "DIRAC_BACKGROUND_PRIORITY",
        _TQDB,
        "float",
        0.1,
        "RealPriority",
        "A task queue whose mean job RealPriority is at most this is background (groups with AllowBackgroundTQs).",
        minimum=0,
        maximum=10**6,
        **_DIRAC,
    ),
    _p(
        "DIRAC_TQ_PRIORITY",
        _TQDB,
        "str",
        "shares",
        "",
        "shares: Priority from group shares (TaskQueuesAgent); stuck: every task queue at 1, as DIRAC's insertJob "
        "leaves them until the agent runs.",
        choices=("shares", "stuck"),
        **_DIRAC,
    ),
    _p(
        "DIRAC_CPU_ORDER",
        _MATCHER,
        "bool",
        True,
        "",
        "Seed: among matching task queues keep those of the highest CPUTime before the random draw. "
        "DIRAC's code dropped this ordering in 2009 (false).",
        **_DIRAC,
    ),
    _p(
        "DIRAC_JOB_WEIGHT",
        _MATCHER,
        "str",
        "UserPriority",
        "",
        "Weight of the RAND()/weight draw of a job's priority inside the task queue: the seed's UserPriority or the "
        "code's RealPriority (0 -> 1e-5, 10 -> 1e6).",
        choices=("UserPriority", "RealPriority"),
        **_DIRAC,
    ),
    _p(
        "DIRAC_JOBS_PER_TRY",
        _MATCHER,
        "int",
        10,
        "jobs",
        "How many of the lowest JobIDs of the winning priority the job is drawn from: the seed's ten, the code's 50.",
        minimum=1,
        maximum=10**6,
        **_DIRAC,
    ),
    _p(
        "DIRAC_CHECK_JOB_LIMITS",
        _MATCHER,
        "bool",
        True,
        "",
        "JobScheduling/CheckJobLimits: refuse task queues hitting a site's running limit.",
        **_DIRAC,
    ),
    _p(
        "DIRAC_CHECK_MATCHING_DELAY",
        _MATCHER,
        "bool",
        True,
        "",
        "JobScheduling/CheckMatchingDelay: refuse task queues whose values were matched at the site too recently.",
        **_DIRAC,
    ),
    _p(
        "DIRAC_CHECK_SITE_MASK",
        _MATCHER,
        "bool",
        True,
        "",
        "A pilot at a site outside the mask (not Active or Degraded) may only take Test jobs.",
        **_DIRAC,
    ),
)

_THROTTLER = dict(app="jedi", vo="atlas")
_SERVER = dict(app="pandaserver", vo="atlas")
_AGENT = dict(in_panda_config=False, app="brokerage", vo=None)

SIM_PARAMS: tuple[Param, ...] = (
    # --- the lifecycle simulator (brokerage simulate): jedi-lifecycle.md §1, §3, §7, §8 ---
    _p("THROTTLE_THRESHOLD", "prod_job_throttler", "float", 2.0, "ratio",
       "Job throttler: a work queue x resource type holding more than this many queued (not yet running) jobs per "
       "running job, and more than its queue limit, gets no new jobs this cycle.",
       minimum=0.01, maximum=1000, **_THROTTLER),
    _p("NQUEUELIMIT", "prod_job_throttler", "int", 0, "jobs",
       "Job throttler: queued jobs (notRun + defined) a work queue x resource type may hold before the ratio test "
       "applies; 0 = four bunches (4 x clamp(nRunning x THROTTLE_THRESHOLD - nNotRun, 500, 600)). Per work queue: "
       "NQUEUELIMIT_<work queue>, per resource type NQUEUELIMIT_<work queue>_<resource type>, where a work queue "
       "is a global share or a Resource work queue.",
       minimum=0, maximum=10**8, family=True, **_THROTTLER),
    _p("NRUNNINGCAP", "prod_job_throttler", "int", 0, "jobs",
       "Job throttler: no new jobs while more than this many run (always, no high-priority exception); 0 = no cap.",
       minimum=0, maximum=10**8, family=True, **_THROTTLER),
    _p("NQUEUECAP", "prod_job_throttler", "int", 0, "jobs",
       "Job throttler: no new jobs while more than this many are queued; also sets the jobs per cycle to "
       "NQUEUECAP // 5; 0 = no cap.",
       minimum=0, maximum=10**8, family=True, **_THROTTLER),
    _p("TIMEOUT_defined", "job_timeout", "float", 4.0, "h",
       "copyArchive R6: a JEDI job of a managed/test task still defined after this long (modificationTime) is "
       "closed with kill code 51 and regenerated.",
       minimum=0.1, maximum=10000, **_SERVER),
    _p("TIMEOUT_holding", "job_timeout", "float", 48.0, "h",
       "copyArchive H6: a job in holding this long (modificationTime or endTime) fails.",
       minimum=0.1, maximum=10000, **_SERVER),
    _p("HEARTBEAT_TIMEOUT", "watcher", "float", 2.0, "h",
       "copyArchive H1/H8: a running job whose pilot has not sent a heartbeat for this long fails with "
       "jobDispatcherErrorCode 100 (lost heartbeat). Per workflow: HEARTBEAT_TIMEOUT_production, "
       "HEARTBEAT_TIMEOUT_analysis.",
       minimum=0.1, maximum=10000, family=True, **_SERVER),
    _p("ANALY_TIMEOUT", "rebroker", "float", 12.0, "h",
       "copyArchive A: analysis jobs activated this long at an online queue are closed with kill code 51 and "
       "brokered again (at an offline or test queue after 3 h).",
       minimum=0.1, maximum=10000, family=True, **_SERVER),
    _p("FAST_REBRO_THRESHOLD_NQNR_RATIO", "rebroker", "float", 3.0, "ratio",
       "Fast rebrokerage: a (queue, global share) is overshooting when queued > running x this.",
       minimum=0.01, maximum=1000, app="pandaserver", vo=None),
    _p("FAST_REBRO_THRESHOLD_NQUEUE_FRAC", "rebroker", "float", 0.3, "fraction",
       "Fast rebrokerage: ... and holds more than this fraction of the share's queued jobs.",
       minimum=0, maximum=1, app="pandaserver", vo=None),
    _p("FAST_REBRO_THRESHOLD_NQUEUE", "rebroker", "int", None, "jobs",
       "Fast rebrokerage, per global share as FAST_REBRO_THRESHOLD_NQUEUE_<gshare>: ... and more than this many "
       "queued; the excess is closed with kill code 10 and brokered again. Unset for a share: a dry run that "
       "only logs the overshoot.",
       minimum=1, maximum=10**8, nullable=True, family=True, app="pandaserver",
       vo=None),
    _p("SLOPPY_DISPATCH_RATIO", "jobdispatch", "int", 10, "%",
       "Job dispatch under the switch age_ordered_dispatch_as_panda (profile panda-1.0.4): (this + 1) % of pilot "
       "requests take the oldest activated job instead of the most under-pledged global share's; 0 reads as "
       "unset (10), as PanDA's code does, and -1 sends none by age. The seed profile never dispatches by age.",
       minimum=-1, maximum=99, **_SERVER),
    _p("COPYARCHIVE_PERIOD", "daemon", "int", 2400, "s",
       "Period of the server daemon copyArchive that applies the job timeout and reassignment rules in order.",
       minimum=60, maximum=86400, **_AGENT),
    _p("ADDER_PERIOD", "daemon", "int", 240, "s",
       "Period of the Adder that moves holding jobs to finished or failed.",
       minimum=60, maximum=86400, **_AGENT),
    _p("DATASETMANAGER_PERIOD", "daemon", "int", 2400, "s",
       "Period of datasetManager whose finisher moves transferring jobs to finished.",
       minimum=60, maximum=86400, **_AGENT),
    _p("TASKBROKER_PERIOD", "taskbroker", "int", 600, "s",
       "Period of JEDI's TaskBroker (assigning tasks get a nucleus).",
       minimum=60, maximum=86400, **_AGENT),
    _p("WATCHDOG_PERIOD", "watchdog", "int", 300, "s",
       "Period of JEDI's WatchDog (pending tasks reactivated, task throttling and its release).",
       minimum=60, maximum=86400, **_AGENT),
    _p("JOB_BROKERAGE_REFRESH", "jobgen", "int", 3600, "s",
       "How long the simulator reuses a task's job brokerage before brokering it again on the simulated job "
       "counts (JEDI brokers every chunk; a coarser clock keeps a day of the whole grid to minutes).",
       minimum=60, maximum=86400, **_AGENT),
    _p("SCOUT_RAMCOUNT_RANK", "dbproxy", "int", 75, "percentile",
       "Scouts: a task's new ramCount is this percentile of its scout jobs' memory (maxPSS) ...",
       minimum=1, maximum=100, app="jedi", vo=None),
    _p("SCOUT_RAMCOUNT_MARGIN", "dbproxy", "int", 10, "%",
       "Scouts: ... plus this margin.",
       minimum=0, maximum=1000, app="jedi", vo=None),
    _p("SCOUT_CPUTIME_RANK", "dbproxy", "int", 95, "percentile",
       "Scouts: a task's new cpuTime is this percentile of its scout jobs' HS06 s per event, times 1.5.",
       minimum=1, maximum=100, app="jedi", vo=None),
    _p("MAX_JOB_FAILURE_RATE_TO_PAUSE", "watchdog", "float", None, "fraction",
       "WatchDog: a production task with at least 1000 jobs and 100 still to come is paused when this fraction of "
       "its ended jobs failed; unset = never. Per work queue: MAX_JOB_FAILURE_RATE_TO_PAUSE_<work queue>.",
       minimum=0.01, maximum=1, nullable=True, family=True, app="jedi", vo="atlas"),
    _p("PENDING_TIMEOUT", "watchdog", "float", 168.0, "hours",
       "WatchDog: a task pending this long since it first went pending (frozenTime) is exhausted; JEDI's "
       "timeoutForPending of 7 days when unset. Per label: PENDING_TIMEOUT_managed, PENDING_TIMEOUT_user.",
       minimum=1, maximum=24 * 365, family=True, app="jedi", vo="atlas"),
)  # fmt: skip

PARAMS = PARAMS + DIRAC_PARAMS + SIM_PARAMS

REGISTRY: dict[str, Param] = {p.key: p for p in PARAMS}


def lookup_param(key: str) -> Param:
    """Return the registered parameter for KEY (also KEY_<suffix> of a family).

    Usage: ``lookup_param("DISK_THRESHOLD_Analysis").key == "DISK_THRESHOLD"``
    """
    if key in REGISTRY:
        return REGISTRY[key]
    for p in PARAMS:
        if p.family and key.startswith(p.key + "_") and len(key) > len(p.key) + 1:
            return p
    raise ConfigError(key, UNKNOWN_KEY + did_you_mean(key, REGISTRY))


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """ "; did you mean X?" for the closest of KNOWN (case-insensitive), else how many are known and where to look.

    Usage: ``did_you_mean("NQUEUED_SATCAP", REGISTRY) == "; did you mean NQUEUED_SAT_CAP?"``
    """
    names = sorted(known)
    by_upper = {n.upper(): n for n in names}
    close = difflib.get_close_matches(word.upper(), list(by_upper), n=3, cutoff=0.75)
    if close:
        return "; did you mean " + " or ".join(by_upper[c] for c in close) + "?"
    return f"; {len(names)} keys are known (docs/tuning.md lists them, the tuning page edits them)"


# the numbers a value may be written as: ASCII digits with an optional sign, fraction and exponent; no spaces,
# no digit separators (1_000), no other scripts' digits, which int() and float() would otherwise accept
_INT_TEXT = re.compile(r"[+-]?[0-9]+", re.ASCII)
_FLOAT_TEXT = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)
NUMBER_FORMS = "ASCII digits with an optional sign, decimal point and exponent (e.g. -12, 0.5, 1e6)"
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# family variants name a member of the grid: KEY_<suffix> is refused unless the suffix is one of these values
FAMILY_MEMBERS: dict[str, tuple[str, str]] = {
    "DISK_THRESHOLD": ("gshares", "gshare"),
    "DIRAC_JOB_SHARE": ("dirac_group_shares", "OwnerGroup"),
}


def family_suffix(key: str) -> tuple[Param, str] | None:
    """(family parameter, suffix) when KEY is a KEY_<suffix> variant of a family, else None.

    Usage: ``family_suffix("DISK_THRESHOLD_Analysis")[1] == "Analysis"``
    """
    if key in REGISTRY:
        return None
    param = lookup_param(key)
    return param, key[len(param.key) + 1 :]


def check_family_members(keys: Iterable[str], members: Callable[[str, str], Collection[str]]) -> None:
    """Raise ConfigError for a family variant whose suffix is not in the grid (MEMBERS(table, column) lists them).

    An empty member list means no grid is known yet (a config set before the first import): nothing to check.

    Usage: ``check_family_members(["DISK_THRESHOLD_Analysis"], lambda t, c: set(snap.tables[t][c]))``
    """
    for key in keys:
        found = family_suffix(key)
        if found is None or found[0].key not in FAMILY_MEMBERS:
            continue
        param, suffix = found
        table, column = FAMILY_MEMBERS[param.key]
        known = sorted({str(m) for m in members(table, column)})
        if known and suffix not in known:
            shown = ", ".join(known[:12]) + (", …" if len(known) > 12 else "")
            raise ConfigError(
                key, f"{suffix!r} is not a {column} of the grid; {param.key}_<{column}> takes one of: {shown}"
            )


def parse_value(key: str, raw: Value, type_: str | None = None) -> Value:
    """Parse RAW (a string as stored in CONFIG.VALUE, or a Python value) and check it against KEY's bounds.

    Usage: ``parse_value("NW_ACTIVE", "True") is True``
    """
    param = lookup_param(key)
    raw = _plain(raw)
    if type_ is not None and isinstance(raw, str) and _TYPE_ALIASES.get(type_.lower()) != "str":
        # a stored CONFIG row (it carries its TYPE) may be blank-padded by its database; typed input may not
        raw = raw.strip()
    kind = _TYPE_ALIASES.get((type_ or param.type).lower())
    if kind is None:
        raise ConfigError(key, f"unknown type {type_!r}; allowed: {', '.join(sorted(_TYPE_ALIASES))}")
    if raw is None or (isinstance(raw, str) and raw.strip() == "" and kind != "str"):
        if param.nullable:
            return None
        raise ConfigError(key, f"a value is required: {param.allowed()}")
    try:
        value = _coerce(kind, raw)
    except (TypeError, ValueError) as exc:
        forms = f" written as {NUMBER_FORMS}" if kind in ("int", "float") else ""
        raise ConfigError(key, f"cannot read {raw!r} as {kind}: expected {param.allowed()}{forms}") from exc
    if kind == "json" and param.type != "json":
        # a TYPE=json row is decoded and must then hold a value of the parameter's own type
        value = _normalise(param, key, value)
    elif kind != param.type and not (kind == "int" and param.type == "float"):
        if param.type == "int" and kind == "float" and float(value).is_integer():
            value = int(value)
        else:
            raise ConfigError(key, f"stored as {kind} but the parameter is {param.type}: expected {param.allowed()}")
    if param.type == "float":
        value = float(value)
    return check_bounds(param, key, value)


def _coerce(kind: str, raw: Value) -> Value:
    if kind == "bool":
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.strip().lower() in ("true", "false"):
            return raw.strip().lower() == "true"
        raise ValueError(raw)
    if kind == "int":
        if isinstance(raw, bool):
            raise ValueError(raw)
        if isinstance(raw, float):
            if not raw.is_integer():
                raise ValueError(raw)
            return int(raw)
        if isinstance(raw, str):
            if _INT_TEXT.fullmatch(raw):
                return int(raw)
            if not _FLOAT_TEXT.fullmatch(raw) or not float(raw).is_integer():
                raise ValueError(raw)
            return int(float(raw))
        return int(raw)
    if kind == "float":
        if isinstance(raw, bool) or (isinstance(raw, str) and not _FLOAT_TEXT.fullmatch(raw)):
            raise ValueError(raw)
        value = float(raw)
        if not math.isfinite(value):
            raise ValueError(raw)
        return value
    if kind == "json":
        return json.loads(raw) if isinstance(raw, str) else raw
    return str(raw)


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python number it holds, so messages never print ``np.int64(…)``."""
    return value.item() if type(value).__module__ == "numpy" and hasattr(value, "item") else value


def check_bounds(param: Param, key: str, value: Value) -> Value:
    """Return VALUE if PARAM allows it, else raise ConfigError naming KEY and the allowed range."""
    value = _plain(value)
    if value is None:
        if param.nullable:
            return None
        raise ConfigError(key, f"a value is required: {param.allowed()}")
    if param.choices and value not in param.choices:
        raise ConfigError(key, f"{value!r} is not allowed: expected {param.allowed()}")
    if param.type == "json" and (param.minimum is not None or param.maximum is not None):
        # bounds on a json parameter bound each element of a strictly increasing integer list (DIRAC's CPU buckets)
        ok = isinstance(value, list) and len(value) > 0
        ok = ok and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        ok = ok and all(a < b for a, b in itertools.pairwise(value))
        lo = -math.inf if param.minimum is None else param.minimum
        hi = math.inf if param.maximum is None else param.maximum
        if not ok or not all(lo <= v <= hi for v in value):
            raise ConfigError(key, f"{value!r} is not allowed: expected {param.allowed()}")
        return value
    if param.type in ("int", "float"):
        if param.type == "int" and not INT64_MIN <= value <= INT64_MAX:
            raise ConfigError(key, f"{value} does not fit a 64-bit integer: expected {param.allowed()}")
        if param.minimum is not None and value < param.minimum:
            raise ConfigError(key, f"{value} is below the minimum: expected {param.allowed()}")
        if param.maximum is not None and value > param.maximum:
            raise ConfigError(key, f"{value} is above the maximum: expected {param.allowed()}")
    return value


def format_value(value: Value) -> str:
    """Render VALUE the way CONFIG.VALUE stores it (booleans as True/False, json as text)."""
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


@dataclass(frozen=True)
class ConfigRow:
    """A row of PanDA's CONFIG table."""

    app: str
    component: str
    key: str
    value: str | None
    type: str = "str"
    vo: str | None = None
    value_json: Value = None
    descr: str = ""


@dataclass(frozen=True)
class Config:
    """Effective gdpconfig: defaults < stored CONFIG rows < what-if overrides, for one VO.

    Usage: ``Config().with_overrides({"NQUEUED_SAT_CAP": 300}).get("NQUEUED_SAT_CAP") == 300``
    """

    stored: Mapping[str, Value] = field(default_factory=dict)
    overrides: Mapping[str, Value] = field(default_factory=dict)
    vo: str = "atlas"
    version: int | None = None

    @classmethod
    def from_rows(cls, rows: Iterable[ConfigRow], vo: str = "atlas", version: int | None = None) -> Config:
        """Resolve CONFIG rows as PanDA does: the VO's own row, else the VO-less row; unknown keys are ignored."""
        best: dict[str, tuple[int, Value]] = {}
        for row in rows:
            if row.vo not in (None, "", vo):
                continue
            try:
                param = lookup_param(row.key)
            except ConfigError:
                continue  # CONFIG holds many keys that brokerage does not read
            if row.component != param.component or row.app != param.app:
                continue
            raw = row.value_json if _TYPE_ALIASES.get(row.type.lower()) == "json" else row.value
            value = parse_value(row.key, raw, row.type)
            rank = 1 if row.vo == vo else 0
            if row.key not in best or rank > best[row.key][0]:
                best[row.key] = (rank, value)
        return cls(stored={k: v for k, (_, v) in best.items()}, vo=vo, version=version)

    def with_overrides(self, overrides: Mapping[str, Value]) -> Config:
        """Return a copy with what-if OVERRIDES (validated) layered on top."""
        checked = dict(self.overrides)
        for key, raw in overrides.items():
            checked[key] = (
                parse_value(key, raw)
                if isinstance(raw, str)
                else check_bounds(lookup_param(key), key, _normalise(lookup_param(key), key, raw))
            )
        return Config(stored=self.stored, overrides=checked, vo=self.vo, version=self.version)

    def get(self, key: str) -> Value:
        """Value of KEY; a family key KEY_<suffix> falls back to KEY when not set itself."""
        if key in self.overrides:
            return self.overrides[key]
        if key in self.stored:
            return self.stored[key]
        param = lookup_param(key)
        if key != param.key:
            return self.get(param.key)
        return param.default

    def __getitem__(self, key: str) -> Value:
        return self.get(key)

    def values(self, keys: tuple[str, ...]) -> tuple[Value, ...]:
        """The values of KEYS as a tuple, remembered per tuple of keys (a Config never changes).

        Usage: ``Config().values(("NQUEUED_SAT_CAP", "NO_PILOT_HOURS")) == (150, 3)``
        """
        found = self._values.get(keys)
        if found is None:
            # json values (lists, dicts) as tuples, so the result can key a memo
            found = self._values[keys] = tuple(_frozen_value(self.get(k)) for k in keys)
        return found

    @cached_property
    def _values(self) -> dict[tuple[str, ...], tuple[Value, ...]]:
        # one entry per declared set of keys that brokers read: a few dozen at most
        return {}

    def effective(self) -> dict[str, Value]:
        """Every registered key (and every family member that is set) with its effective value."""
        keys = list(REGISTRY) + sorted({*self.stored, *self.overrides} - set(REGISTRY))
        return {k: self.get(k) for k in keys}

    def changed(self) -> dict[str, Value]:
        """Effective values that differ from the registry defaults (a fresh dict the caller may keep)."""
        return dict(self._changed)

    @cached_property
    def _changed(self) -> dict[str, Value]:
        out = {}
        for key, value in self.effective().items():
            if key not in REGISTRY or value != REGISTRY[key].default:
                out[key] = value
        return out

    @cached_property
    def _fingerprint(self) -> str:
        text = json.dumps(self._changed, sort_keys=True, default=str)
        return hashlib.sha1(text.encode()).hexdigest()[:12]

    def fingerprint(self) -> str:
        """Short stable hash of the effective values, for cache keys."""
        return self._fingerprint


def _frozen_value(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return tuple(_frozen_value(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen_value(v)) for k, v in value.items()))
    return value


def _normalise(param: Param, key: str, value: Value) -> Value:
    if value is None:
        return None
    if param.type == "float" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if param.type == "int" and isinstance(value, float) and value.is_integer():
        return int(value)
    expected = {"int": int, "float": float, "bool": bool, "str": str}.get(param.type)
    if expected is not None and (not isinstance(value, expected) or (expected is int and isinstance(value, bool))):
        raise ConfigError(key, f"{value!r} has the wrong type: expected {param.allowed()}")
    return value


# --- edits: what a person typed, parsed and checked once for the CLI's --set, the API and the tuning page ----------

Members = Callable[[str, str], Collection[str]]  # (table, column) -> the grid's values there
NOT_A_PARAMETER = "not a gdpconfig parameter of the brokers"


@dataclass(frozen=True)
class Edits:
    """Edits checked against the registry all at once: the valid overrides and every refusal, by key.

    Usage: ``parse_edits({"NQUEUED_SAT_CAP": "0", "NW_ACTIVE": "no"}).errors``  # both refused, each with its range
    """

    overrides: dict[str, Value]
    refused: dict[str, ConfigError] = field(default_factory=dict)

    @property
    def errors(self) -> dict[str, str]:
        """Each refused key's sentence: the key, what is wrong and what is allowed."""
        return {k: str(e) for k, e in self.refused.items()}

    def checked(self) -> dict[str, Value]:
        """The overrides when nothing was refused, else one ConfigError listing every refused edit.

        Usage: ``config.with_overrides(parse_edits(raw).checked())``
        """
        if not self.refused:
            return dict(self.overrides)
        first = next(iter(self.refused.values()))
        problems = {k: m for e in self.refused.values() for k, m in e.problems.items()}
        raise ConfigError(first.key, first.message, problems)


def _typed_text(raw: Value) -> Value:
    """What an editor control holds as the text a person would type: switches as true/false, whole floats as ints
    (a number box gives 300.0 for 300); text as it is."""
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, float) and raw.is_integer():
        return str(int(raw))
    return str(raw) if isinstance(raw, int | float) else raw


def parse_edits(
    values: Mapping[str, Any], stored: Config | None = None, *, variants: bool = True, members: Members | None = None
) -> Edits:
    """Parse and check every edit of VALUES (key -> what was typed; None is no edit) at once.

    With STORED, an edit equal to the value in force without edits (its stored row, else the default) changes nothing
    and is dropped. VARIANTS false refuses family variants (KEY_<suffix>), as the tuning page does: its rows are the
    registry's keys. With MEMBERS a family variant must name a member of the grid (``check_family_members``).
    Usage: ``parse_edits({"NQUEUED_SAT_CAP": 300}, Config()).overrides == {"NQUEUED_SAT_CAP": 300}``
    """
    overrides: dict[str, Value] = {}
    refused: dict[str, ConfigError] = {}
    for key, raw in values.items():
        if raw is None:
            continue
        try:
            if not variants and key not in REGISTRY:
                raise ConfigError(key, NOT_A_PARAMETER)
            value = parse_value(key, _typed_text(raw))
            if members is not None:
                check_family_members([key], members)
        except ConfigError as exc:
            refused[key] = exc
            continue
        if stored is None or value != _stored_value(stored, key):
            overrides[key] = value
    return Edits(overrides, refused)


def _stored_value(config: Config, key: str) -> Value:
    if key in config.stored:
        return config.stored[key]
    return REGISTRY[key].default if key in REGISTRY else config.get(key)


def parse_assignments(items: Iterable[str], members: Members | None = None) -> dict[str, Value]:
    """Parse CLI ``KEY=VALUE`` strings into validated overrides: one ConfigError naming every refused one.

    MEMBERS as in ``parse_edits``.
    Usage: ``parse_assignments(["NQUEUED_SAT_CAP=300"]) == {"NQUEUED_SAT_CAP": 300}``
    """
    typed: dict[str, Value] = {}
    malformed: dict[str, ConfigError] = {}
    for item in items:
        if "=" not in item:
            malformed[item] = ConfigError(item, "expected KEY=VALUE")
            continue
        key, raw = item.split("=", 1)
        typed[key.strip()] = raw
    edits = parse_edits(typed, members=members)
    return Edits(edits.overrides, {**malformed, **edits.refused}).checked()
