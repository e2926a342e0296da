"""Scalar reference of the ATLAS production job brokerage, written to read like the seed, line by line.

The seed is ``shared/seeds/000_f8f78ef8e3a9ac50.txt``, sections "ATLAS Production Job Brokerage", "Network
Weight" and "Special Brokerage for ATLAS Full-chain", with the "T1 weight" paragraph of seed 003 for the weight
of the nucleus' own queues. This module is deliberately plain: it walks the queues one by one, asks each check of
step 2 in the seed's order, and computes the weight with Python floats. It never calls the vectorised
broker (``brokerage.brokers.production``); it only reuses the small pure helpers ``zero_share`` and the
network step functions, and reads the same gdpconfig ``Config``. Details the seed leaves open are taken
from ``shared/reference/jedi-brokerage.md`` and named where they are used.

Where the vectorised broker departs from the seed, this reference follows the seed. Each known departure
is listed in ``DEVIATIONS`` with the seed sentence; passing its name in ``emulate`` makes the reference
behave like the broker instead, so the property tests can still compare everything else.

Usage: ``result = broker(snap, 4242, Config()); result.ranked_names``
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pandas as pd

from brokerage.checks.fairshare import zero_share
from brokerage.model.gdpconfig import Config
from brokerage.model.network import closeness_weight, queued_weight, throughput_weight
from brokerage.model.snapshot import GridSnapshot

# --- names the seed uses ------------------------------------------------------------------------

PRODUCTION_QUEUE_TYPES = ("production", "unified")  # "All queues" of the production brokerage
ENDPOINT_OK = "ON"  # a detailed endpoint status other than ON (OFF, TEST) is blacklisted
CLOSENESS_KEY = "AGIS_closeness"
QUEUED_KEY = "Production Output_queued"
QUEUED_EXPRESS_KEY = "Express_queued"  # reference §5.1: express chunks read the Express activity
MBPS_MOST_RECENT_FIRST = ("dashb_mbps_1h", "dashb_mbps_1d", "dashb_mbps_1w")
BLOCKED_CLOSENESS = -1.0
NETWORK_MAX_AGE = timedelta(minutes=60)  # reference §5.1: rows older than this are not read
ES_HIGH_PRIORITY = 900  # reference §3.2: esHigh = ES and (currentPriority >= 900 or scout)
MULTICORE_ANY_PRIORITY = 900  # reference §3.2: coreCount 0 at priority >= 900 (or scouts) needs multi-core
DEFAULT_COREPOWER = 10.0  # HS06 per core when a queue publishes none
WNCONNECTIVITY_ACCEPTS = {
    "full": None,  # "to accept any tasks since outbound network connectivity is fully available"
    "http": ("http", "none"),  # "to accept tasks with network_connectivity=http or none"
    "none": ("none",),  # "to accept tasks with network_connectivity=none"
}

# --- where the vectorised broker departs from the seed ------------------------------------------

DEVIATIONS: dict[str, str] = {
    "preassigned_exemptions": (
        "Seed, step 2: 'The queue status must be online unless the queues are pre-assigned.' Only the status "
        "check is waived for pre-assigned queues; the broker also waives the high-priority nucleus check, the "
        "inactive check, the IP connectivity check, the event service check, the pilot check and (for scouts) "
        "the 24 h scout walltime check."
    ),
    "memory_needs_ramcount": (
        "Seed, step 2: 'The expected memory site of each job is estimated for each queue as (baseRamCount + "
        "ramCount x coreCount) x compensation ... Queues are skipped if the estimated memory usage is not "
        "included in the acceptable memory ranges.' The broker skips the whole memory check when ramCount is "
        "0, so baseRamCount alone never rejects a queue."
    ),
    "inactive_counts_starting": (
        "Seed, step 2: 'skip inactive queues (where no jobs got started in the last 2 hours although "
        "activated jobs had been there)'. The broker counts activated + starting jobs."
    ),
}


# --- what the reference returns -----------------------------------------------------------------


@dataclass
class RefCandidate:
    """A chosen queue, its weight and the factors that multiply into it."""

    name: str
    weight: float
    factors: dict[str, float]
    details: dict[str, float] = field(default_factory=dict)


@dataclass
class RefResult:
    """Ranked candidates, the criteria code of every skipped queue, and the funnel (stage, before, after)."""

    status: str  # "ok" or "pending"
    candidates: list[RefCandidate]
    skips: dict[str, str]
    funnel: list[tuple[str, int, int]]
    pending_minutes: int | None = None

    @property
    def ranked_names(self) -> list[str]:
        """Candidate names, best first."""
        return [c.name for c in self.candidates]


# --- reading the snapshot row by row ------------------------------------------------------------


def _plain(value: Any) -> Any:
    """None for NaN / NaT, else the value itself."""
    if value is None or value is pd.NaT:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _rows(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: _plain(v) for k, v in row.items()} for row in df.to_dict("records")]


def _task(snap: GridSnapshot, jeditaskid: int) -> dict[str, Any]:
    for row in _rows(snap.tasks):
        if int(row["jeditaskid"]) == int(jeditaskid):
            return row
    raise KeyError(f"unknown task {jeditaskid}")


def _job_counts(snap: GridSnapshot, gshare: str | None) -> dict[str, dict[str, float]]:
    """{queue: {jobstatus: njobs}} of VO atlas' jobs (JEDI counts the task's VO) for one global share (every share
    when GSHARE is None)."""
    out: dict[str, dict[str, float]] = {}
    for row in _rows(snap.job_counts):
        if (gshare is not None and row["gshare"] != gshare) or row["vo"] != "atlas":
            continue
        per_queue = out.setdefault(row["panda_queue"], {})
        per_queue[row["jobstatus"]] = per_queue.get(row["jobstatus"], 0.0) + float(row["njobs"])
    return out


def _links_into(snap: GridSnapshot, nucleus: str) -> dict[str, dict[str, float]]:
    """{source site: {key: value}} of the fresh network rows into NUCLEUS (a later row wins)."""
    oldest = pd.Timestamp(snap.taken_at) - NETWORK_MAX_AGE
    links: dict[str, dict[str, float]] = {}
    for row in _rows(snap.network):
        if row["dst"] != nucleus:
            continue
        if row["ts"] is not None and row["ts"] < oldest:
            continue  # stale
        links.setdefault(row["src"], {})[row["key"]] = float(row["value"])
    return links


@dataclass
class _Network:
    weight: float
    blocked: bool
    nqueued: float


def _network_weight(
    site: str, nucleus: str, links: dict[str, dict[str, float]], express: bool, cfg: Config
) -> _Network:
    """networkWeight = q x queuedWeight + (1 - q) x throughputWeight (seed: 0.5 x (queued + throughput))."""
    metrics = links.get(site, {})
    closeness = metrics.get(CLOSENESS_KEY)
    nqueued = metrics.get(QUEUED_EXPRESS_KEY if express else QUEUED_KEY, 0.0)
    if site == nucleus:
        weight_queued = weight_throughput = float(cfg["SAME_SITE_NETWORK_WEIGHT"])
    else:
        weight_queued = float(queued_weight(nqueued, cfg["NQUEUED_SAT_CAP"]))
        # "It uses the most recent available data, so preferably data of the last 1 hour, in not available of
        # last 1 day, if not available of last 1 week."
        mbps = next((metrics[k] for k in MBPS_MOST_RECENT_FIRST if k in metrics), None)
        if mbps is not None:
            weight_throughput = float(throughput_weight(mbps))
        else:
            # "If there are no available network metrics, the AGIS closeness (0 best to 11 worst) is used"
            max_closeness = float(cfg["MAX_CLOSENESS"])
            missing = float(cfg["MISSING_CLOSENESS_FRACTION"]) * max_closeness  # 0.7 x 11 = 7.7
            used = missing if closeness is None else closeness
            weight_throughput = float(closeness_weight(used, max_closeness))
    q = float(cfg["NW_QUEUE_IMPORTANCE"])
    weight = q * weight_queued + (1.0 - q) * weight_throughput
    blocked = closeness == BLOCKED_CLOSENESS and site != nucleus
    return _Network(weight, blocked, nqueued)


def _input_at_queues(snap: GridSnapshot, task: dict[str, Any]) -> tuple[float, float, dict[str, tuple[float, float]]]:
    """Total input (GB, files) and, per queue, what its storages hold (GB, files), best endpoint per dataset."""
    tid = int(task["jeditaskid"])
    datasets = [d for d in _rows(snap.datasets) if int(d["jeditaskid"]) == tid]
    if task.get("taskbrokeronmaster"):
        datasets = [d for d in datasets if d["is_master"]]
    total_gb = sum(float(d["size_gb"]) for d in datasets)
    total_files = sum(float(d["nfiles"]) for d in datasets)
    # replica[(dataset, endpoint)] = (GB, files) held there
    replica: dict[tuple[int, str], tuple[float, float]] = {}
    ids = {int(d["datasetid"]) for d in datasets}
    for r in _rows(snap.dataset_replicas):
        if int(r["jeditaskid"]) != tid or int(r["datasetid"]) not in ids:
            continue
        key = (int(r["datasetid"]), r["ddm_endpoint_name"])
        gb, files = replica.get(key, (0.0, 0.0))
        replica[key] = (max(gb, float(r["size_gb"])), max(files, float(r["nfiles"])))
    endpoints_of: dict[str, list[str]] = {}
    for rel in _rows(snap.panda_ddm_relation):
        endpoints_of.setdefault(rel["panda_queue"], []).append(rel["ddm_endpoint_name"])
    held: dict[str, tuple[float, float]] = {}
    for name, endpoints in endpoints_of.items():
        gb_sum = files_sum = 0.0
        for d in datasets:
            best_gb = best_files = 0.0
            for e in endpoints:
                gb, files = replica.get((int(d["datasetid"]), e), (0.0, 0.0))
                best_gb, best_files = max(best_gb, gb), max(best_files, files)
            gb_sum += best_gb
            files_sum += best_files
        held[name] = (min(gb_sum, total_gb), min(files_sum, total_files))
    return total_gb, total_files, held


# --- the brokerage --------------------------------------------------------------------------------


def broker(
    snap: GridSnapshot, jeditaskid: int, config: Config | None = None, emulate: frozenset[str] | set[str] = frozenset()
) -> RefResult:
    """Run the seed's production job brokerage for one task, one queue at a time.

    EMULATE names entries of DEVIATIONS for which the broker's current behaviour is used instead of the seed's.
    """
    unknown = set(emulate) - set(DEVIATIONS)
    if unknown:
        raise ValueError(f"unknown deviations: {sorted(unknown)}")
    cfg = config or Config()
    task = _task(snap, jeditaskid)
    queues = _rows(snap.queues)
    site_of = {q["panda_queue"]: q["atlas_site"] for q in queues}

    priority = int(task.get("currentpriority") or 0)
    scout = bool(task.get("is_scout"))
    merge = bool(task.get("is_merge"))
    nucleus = task.get("nucleus") or None
    # "If processingType=*urgent* or priority 1000" (read as processingType urgent, priority >= 1000)
    express = task.get("processingtype") == "urgent" or priority >= int(cfg["EXPRESS_PRIORITY"])
    high_priority = priority >= int(cfg["HIGH_PRIO_NUCLEUS_ONLY"]) or scout  # "priority 800 or scout jobs"

    counts = _job_counts(snap, task.get("gshare"))
    counts_all_shares = _job_counts(snap, None)

    def n(queue: str, status: str) -> float:
        return counts.get(queue, {}).get(status, 0.0)

    links = _links_into(snap, nucleus) if nucleus else {}
    queued_key = QUEUED_EXPRESS_KEY if express else QUEUED_KEY
    network = {s: _network_weight(s, nucleus, links, express, cfg) for s in set(site_of.values())} if nucleus else {}
    total_gb, total_files, held = _input_at_queues(snap, task)
    endpoints = {e["ddm_endpoint_name"]: e for e in _rows(snap.ddm_endpoints)}
    inputs_of: dict[str, list[dict[str, Any]]] = {}
    output_of: dict[str, dict[str, Any]] = {}
    for rel in _rows(snap.panda_ddm_relation):
        ep = endpoints[rel["ddm_endpoint_name"]]
        inputs_of.setdefault(rel["panda_queue"], []).append(ep)
        if rel["default_write"] and rel["panda_queue"] not in output_of:
            output_of[rel["panda_queue"]] = ep  # the first default-write endpoint is the local (output) storage

    skips: dict[str, str] = {}
    funnel: list[tuple[str, int, int]] = []

    # ---- 1. Generate the list of preliminary candidates ----
    preassigned = [s.strip() for s in str(task.get("site") or "").split(",") if s.strip()]
    if preassigned:
        # "A list of pre-assigned queues."
        candidates = [q for q in queues if q["panda_queue"] in preassigned]
        funnel.append(("preliminary candidates", len(candidates), len(candidates)))
    else:
        # "All queues while excluding any queue with case-insensitive 'test' in the name."
        production = [q for q in queues if q["type"] in PRODUCTION_QUEUE_TYPES]
        candidates = []
        for q in production:
            if "test" in q["panda_queue"].lower():
                skips[q["panda_queue"]] = "-test"
            else:
                candidates.append(q)
        funnel.append(("preliminary candidates", len(production), len(candidates)))

    waived = bool(preassigned) and "preassigned_exemptions" in emulate  # the broker's extra pre-assignment waivers

    # ---- 2. Filter out preliminary candidates that don't pass any of the following checks ----

    def status(q: dict[str, Any]) -> str | None:
        """The queue status must be online unless the queues are pre-assigned."""
        if preassigned:
            return None
        return None if q["status"] == "online" else "-status"

    def link_blocked(q: dict[str, Any]) -> str | None:
        """Skip queues if their links to the nucleus are blocked."""
        if not nucleus:
            return None
        return "-link_unusable" if network[q["atlas_site"]].blocked else None

    def link_queued(q: dict[str, Any]) -> str | None:
        """Skip queues if over the NQUEUED_SAT_CAP files queued on their links to the nucleus."""
        if not nucleus or q["atlas_site"] == nucleus:
            return None
        over = network[q["atlas_site"]].nqueued > cfg["NQUEUED_SAT_CAP"]
        return "-link_unusable" if over else None

    def nucleus_full(q: dict[str, Any]) -> str | None:
        """Skip all queues if the files to be aggregated to the nucleus are more than NQUEUED_NUC_CAP_FOR_JOBS."""
        if not nucleus:
            return None
        to_nucleus = sum(metrics.get(queued_key, 0.0) for metrics in links.values())
        return "-links_full" if to_nucleus > cfg["NQUEUED_NUC_CAP_FOR_JOBS"] else None

    def nucleus_only(q: dict[str, Any]) -> str | None:
        """If priority 800 or scout jobs, skip queues unless associated with the nucleus."""
        if not nucleus or not high_priority or waived:
            return None
        return None if q["atlas_site"] == nucleus else "-nucleus_only"

    def inactive(q: dict[str, Any]) -> str | None:
        """If priority 800 or scout or merging or pre-merged jobs, skip inactive queues.

        Inactive: no jobs got started in the last 2 hours although activated jobs had been there.
        """
        if not (high_priority or merge) or waived:
            return None
        last = q["laststart"]
        hours = math.inf if last is None else (pd.Timestamp(snap.taken_at) - last).total_seconds() / 3600.0
        queue_counts = counts_all_shares.get(q["panda_queue"], {})
        activated = queue_counts.get("activated", 0.0)
        if "inactive_counts_starting" in emulate:
            activated += queue_counts.get("starting", 0.0)
        return "-inactive" if hours > cfg["INACTIVE_HOURS"] and activated > 0 else None

    def zero_share_check(q: dict[str, Any]) -> str | None:
        """Zero Share, defined in the fairsharepolicy field, e.g. type=evgensimul:100% lets only evgen/simul in.

        Seed 003: "processingType=urgent also ignores fairshare".
        """
        policy = q["fairsharepolicy"] or ""
        if not policy or task.get("processingtype") == "urgent":
            return None
        why = zero_share(policy, task.get("processingtype") or "", task.get("gshare") or "", priority)
        return "-zeroshare" if why else None

    def io_check(q: dict[str, Any]) -> str | None:
        """ioIntensity > IO_INTENSITY_CUTOFF: missing input must be < SIZE_CUTOFF_TO_MOVE_INPUT GB and < NUM files."""
        io = task.get("iointensity")
        if io is None or io <= cfg["IO_INTENSITY_CUTOFF"] or total_gb <= 0:
            return None  # a task without input has nothing to move
        gb, files = held.get(q["panda_queue"], (0.0, 0.0))
        missing_gb, missing_files = max(total_gb - gb, 0.0), max(total_files - files, 0.0)
        ok = missing_gb < cfg["SIZE_CUTOFF_TO_MOVE_INPUT"] and missing_files < cfg["NUM_CUTOFF_TO_MOVE_INPUT"]
        return None if ok else "-io"

    def disk_io(q: dict[str, Any]) -> str | None:
        """Average diskIO per core of running jobs over the limit (maxDiskIO or MAX_DISKIO_DEFAULT) excludes tasks above it."""
        task_io = task.get("diskio")
        if task_io is None:
            return None
        limit = q["maxdiskio"] if q["maxdiskio"] > 0 else cfg["MAX_DISKIO_DEFAULT"]
        return "-diskIO" if q["diskio_avg"] > limit and task_io > limit else None

    def core_count(q: dict[str, Any]) -> str | None:
        """CPU core count matching among site.coreCount, task.coreCount and maxCoreCount of the task if defined."""
        site_cc = q["corecount"]
        task_cc = int(task.get("corecount") or 0)
        if task_cc > 1 or (task_cc == 0 and (priority >= MULTICORE_ANY_PRIORITY or scout)):
            matches = site_cc > 1  # multi-core jobs need multi-core queues
        elif task_cc == 0:
            matches = True  # any core count
        else:
            matches = site_cc <= 1  # single-core jobs need single-core queues
        if not matches:
            return "-cpucore"
        max_cc = task.get("maxcorecount")
        if max_cc and site_cc > max_cc:
            return "-max_cpucore"
        return None

    def release_cache(q: dict[str, Any]) -> str | None:
        """Availability of ATLAS release/cache: not judged by the broker yet (it only notes non-ANY queues)."""
        return None

    def cores_of(q: dict[str, Any]) -> float:
        return float(q["corecount"]) if q["corecount"] > 0 else 1.0

    def memory(q: dict[str, Any]) -> str | None:
        """(baseRamCount + ramCount x coreCount) x compensation must lie within the queue's memory range."""
        ram = float(task.get("ramcount") or 0)
        if not ram and "memory_needs_ramcount" in emulate:
            return None
        base = float(task.get("baseramcount") or 0)
        compensation = float(cfg["MEMORY_COMPENSATION"])
        if str(task.get("ramunit") or "").startswith("MBPerCore"):
            expected = (base + ram * cores_of(q)) * compensation
        else:  # ramCount in MB is already per job
            expected = (base + ram) * compensation
        if q["maxrss"] > 0 and expected > q["maxrss"]:
            return "-lowmemory"
        if q["minrss"] > 0 and expected < q["minrss"]:
            return "-highmemory"
        return None

    def direct_access(q: dict[str, Any]) -> str | None:
        """Skip queues without direct access to local storage when the task uses only direct access."""
        if task.get("allowinputlan") != "only":
            return None
        return None if q["direct_access_lan"] else "-remoteio"

    def scratch_disk(q: dict[str, Any]) -> str | None:
        """inputDiskCount + max(0.5 GB, outDiskCount x nEvents or x inputDiskCount) + workDiskCount < maxwdir / coreCount."""
        input_mb = float(task.get("chunk_input_mb") or 0)
        out = float(task.get("outdiskcount") or 0)
        if str(task.get("outdiskunit") or "").endswith("PerEvent"):
            out_mb = out * float(task.get("chunk_nevents") or 0) / 1024.0  # kB per event -> MB
        else:
            out_mb = out * input_mb
        out_mb = max(float(cfg["MIN_OUTPUT_DISK_GB"]) * 1024.0, out_mb)
        input_disk = 0.0 if q["direct_access_lan"] else input_mb  # "zero if the queues ... read input directly"
        need = input_disk + out_mb + float(task.get("workdiskcount") or 0)
        if q["maxwdir"] <= 0:
            return None  # no limit published
        return None if q["maxwdir"] / cores_of(q) > need else "-disk"

    def storage(q: dict[str, Any]) -> str | None:
        """DISK size check: free space in the local storage has to be over 200 GB (STORAGE_MIN_FREE_SIZE)."""
        ep = output_of.get(q["panda_queue"])
        if ep is None:
            return "-disk"  # no local storage at all
        free = ep["space_free"] + ep["space_expired"]  # expired secondary data counts as free (reference §3.4)
        return None if free > cfg["STORAGE_MIN_FREE_SIZE"] else "-disk"

    def blacklist(q: dict[str, Any]) -> str | None:
        """Skip blacklisted storage endpoints (reference §3.9: the first activity the job needs that is not ON)."""
        inputs = inputs_of.get(q["panda_queue"], [])
        output = output_of.get(q["panda_queue"])
        satellite = bool(nucleus) and q["atlas_site"] != nucleus
        if inputs and not any(e["read_lan"] == ENDPOINT_OK for e in inputs):
            return "-read_lan_blacklist"
        if output is not None and output["write_lan"] != ENDPOINT_OK:
            return "-write_lan_blacklist"
        if satellite and inputs and not any(e["write_wan"] == ENDPOINT_OK for e in inputs):
            return "-write_wan_blacklist"
        if satellite and output is not None and output["read_wan"] != ENDPOINT_OK:
            return "-read_wan_blacklist"
        return None

    def scout_merge_walltime(q: dict[str, Any]) -> str | None:
        """If scout or merge jobs, skip queues if their maxtime is less than 24 hours."""
        if not (scout or merge) or (scout and waived):
            return None
        if q["maxtime"] <= 0:
            return None  # no limit
        enough = q["maxtime"] >= float(cfg["MIN_WALLTIME_SCOUT_MERGE_HOURS"]) * 3600.0
        return None if enough else ("-scout_walltime" if scout else "-min_walltime")

    def walltime(q: dict[str, Any]) -> str | None:
        """cpuTime x nEvents / (C x P x cpuEfficiency) + baseTime must be between mintime and maxtime."""
        cpu_time = float(task.get("cputime") or 0)
        n_events = float(task.get("chunk_nevents") or 0)
        if cpu_time <= 0 or n_events <= 0:
            return None  # no estimate
        base_time = float(task.get("basewalltime") or 0)
        efficiency = float(task["cpuefficiency"] if task.get("cpuefficiency") is not None else 90) / 100.0
        if efficiency <= 0:
            expected = base_time
        else:
            power = q["corepower"] if q["corepower"] > 0 else DEFAULT_COREPOWER
            expected = cpu_time * n_events / (cores_of(q) * power * efficiency) + base_time
        if q["maxtime"] > 0 and expected > q["maxtime"]:
            return "-shortwalltime"
        if q["mintime"] > 0 and expected < q["mintime"]:
            return "-longwalltime"
        return None

    def wn_connectivity(q: dict[str, Any]) -> str | None:
        """wnconnectivity (network_connectivity#ip_stack) of the queue must be consistent with ipConnectivity."""
        want = task.get("ipconnectivity") or ""
        if not want or waived:
            return None
        task_net, _, task_stack = want.partition("#")
        queue_net, _, queue_stack = (q["wnconnectivity"] or "").partition("#")
        accepts = WNCONNECTIVITY_ACCEPTS.get(queue_net.strip() or "full", ())
        net_ok = not task_net.strip() or accepts is None or task_net.strip() in accepts
        stack_ok = queue_stack.strip() == task_stack.strip()  # IPv4 -> IPv4, IPv6 -> IPv6, '' -> unspecified
        return None if net_ok and stack_ok else "-network"

    def event_service(q: dict[str, Any]) -> str | None:
        """Settings for event service (reference §3.4 step 15: jobseed std/eshigh/es)."""
        if waived:
            return None
        if task.get("eventservice"):
            if q["jobseed"] == "std":
                return "-es"
            es_high = priority >= ES_HIGH_PRIORITY or scout
            if q["jobseed"] == "eshigh" and not es_high:
                return "-eshigh"
            return None
        return "-nones" if q["jobseed"] == "es" else None

    def transferring(q: dict[str, Any]) -> str | None:
        """Skip if transferring > max(transferring_limit, 2 x running); transferring_limit 2000 if undefined.

        The limit is the queue's, so the jobs of every share count, not only the task's.
        """
        limit = q["transferringlimit"] if q["transferringlimit"] > 0 else cfg["DEFAULT_TRANSFERRING_LIMIT"]
        jobs = counts_all_shares.get(q["panda_queue"], {})
        transferring, running = jobs.get("transferring", 0.0), jobs.get("running", 0.0)
        return "-transferring" if transferring > max(limit, 2 * running) else None

    def t1_weight(q: dict[str, Any]) -> str | None:
        """Use only the queues associated with the nucleus if the task sets t1Weight=-1 and normal jobs are generated."""
        t1 = task.get("t1weight")
        if not nucleus or t1 is None or t1 >= 0 or merge:
            return None
        return None if q["atlas_site"] == nucleus else "-t1weight"

    bare_mode = {s["site_name"]: s["bare_nucleus"] or "" for s in _rows(snap.sites)}

    def full_chain(q: dict[str, Any]) -> str | None:
        """Full-chain: a task with fullChain on a bare nucleus uses only the nucleus' queues (seed, full-chain).

        bareNucleus=only "accepts only full-chain workflows", so other tasks avoid queues at such nuclei.
        """
        if not nucleus:
            return None
        if task.get("fullchain") and bare_mode.get(nucleus, "") in ("only", "allow"):
            return None if q["atlas_site"] == nucleus else "-full_chain"
        return "-not_full_chain" if bare_mode.get(q["atlas_site"], "") == "only" else None

    def no_pilot(q: dict[str, Any]) -> str | None:
        """Skip queues without pilots for the last NO_PILOT_HOURS (the last pilot's time if known, else npilot)."""
        if waived:
            return None
        return "-nopilot" if without_pilots(snap, q, cfg["NO_PILOT_HOURS"]) else None

    def express_network(q: dict[str, Any]) -> str | None:
        """processingType=urgent or priority 1000: networkWeight >= NW_THRESHOLD x NW_WEIGHT_MULTIPLIER."""
        if not nucleus or not express:
            return None
        threshold = float(cfg["NW_THRESHOLD"]) * float(cfg["NW_WEIGHT_MULTIPLIER"])
        return None if network[q["atlas_site"]].weight >= threshold else "-lowNetworkWeight"

    checks = [
        ("queue status", status),
        ("blocked link", link_blocked),
        ("files queued on the link", link_queued),
        ("files queued to the nucleus", nucleus_full),
        ("priority 800 or scouts: nucleus only", nucleus_only),
        ("inactive queues", inactive),
        ("zero share", zero_share_check),
        ("IO intensity", io_check),
        ("diskIO", disk_io),
        ("core count", core_count),
        ("release/cache", release_cache),
        ("memory", memory),
        ("direct access", direct_access),
        ("scratch disk", scratch_disk),
        ("DISK size", storage),
        ("blacklisted endpoints", blacklist),
        ("scout/merge 24 hours", scout_merge_walltime),
        ("walltime", walltime),
        ("wnconnectivity", wn_connectivity),
        ("event service", event_service),
        ("transferring", transferring),
        ("t1Weight=-1", t1_weight),
        ("full chain", full_chain),
        ("no pilot", no_pilot),
        ("urgent network weight", express_network),
    ]

    def run_checks(stages: list[tuple[str, Any]], remaining: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for stage, check in stages:
            kept = []
            for q in remaining:
                code = check(q)
                if code is None:
                    kept.append(q)
                else:
                    skips[q["panda_queue"]] = code
            funnel.append((stage, len(remaining), len(kept)))
            remaining = kept
        return remaining

    remaining = run_checks(checks, candidates)

    # ---- 3. Calculate brokerage weight for remaining candidates ----
    # Seed 003, "T1 weight": "Each task can define t1Weight in task parameters to send more jobs to the nucleus.
    # If t1Weight=0 or unspecified and task.ioIntensity>=500, cloudconfig.weight is used. If t1Weight=-1, all jobs
    # go to the nucleus. If task.currentPriority>=900, t1Weight=max(t1Weight,100)."
    t1_task = task.get("t1weight")
    io_intensity = task.get("iointensity")
    if not t1_task:
        heavy_io = io_intensity is not None and io_intensity >= cfg["T1_WEIGHT_IO_INTENSITY"]
        t1_weight_value = float(cfg["WORLD_NUCLEUS_WEIGHT"]) if heavy_io else 1.0
    elif t1_task < 0:
        t1_weight_value = 1.0  # only the nucleus' queues are left anyway
    else:
        t1_weight_value = float(t1_task)
    if priority >= cfg["T1_WEIGHT_HIGH_PRIO_MIN"]:
        t1_weight_value = max(t1_weight_value, float(cfg["T1_WEIGHT_HIGH_PRIO"]))
    nbatch_cap = float(cfg["BOOTSTRAP_NBATCHJOB_CAP"])
    terms: dict[str, dict[str, float]] = {}
    for q in queues:
        name = q["panda_queue"]
        running_real = n(name, "running")
        # "The brokerage uses the largest one as the number of running jobs among the following numbers"
        options = [running_real]
        if running_real < nbatch_cap and q["nbatchjob"] > running_real:
            options.append(min(q["nbatchjob"], nbatch_cap))  # bootstrap
        if q["numslots"] is not None and q["numslots"] > 0:
            options.append(float(q["numslots"]))
        if q["numslots"] is not None and q["numslots"] == 0:
            options.append(n(name, "starting"))
        running = max(options)
        # "The number of assigned jobs is ignored ... if the input for the jobs ... is already available locally."
        held_gb = held.get(name, (0.0, 0.0))[0]
        input_is_local = total_gb <= 0 or held_gb >= total_gb
        assigned = 0.0 if input_is_local else n(name, "assigned")
        activated, starting, defined = n(name, "activated"), n(name, "starting"), n(name, "defined")
        # manyAssigned = max(1, min(2, assigned / activated)); with no activated jobs the ratio is 0 or infinite
        no_activated = math.inf if assigned > 0 else 0.0
        ratio = assigned / activated if activated > 0 else no_activated
        many_assigned = max(1.0, min(2.0, ratio))
        offset = float(cfg["WEIGHT_QUEUE_OFFSET"])
        base = (running + 1.0) / ((activated + assigned + starting + defined + offset) * many_assigned)
        # "Take data availability into consideration."
        if total_gb > 0:
            held_files = held.get(name, (0.0, 0.0))[1]
            missing_files = max(total_files - held_files, 0.0)
            data = (held_gb + total_gb) / (total_gb * (missing_files / 100.0 + 1.0))
        else:
            data = 1.0
        # "Apply a Network weight based on connectivity between nucleus and satellite"
        net = network[q["atlas_site"]].weight if nucleus and cfg["NW_ACTIVE"] else 1.0
        t1 = t1_weight_value if nucleus and q["atlas_site"] == nucleus else 1.0
        terms[name] = {
            "running": running,
            "assigned": assigned,
            "manyAssigned": many_assigned,
            "base": base,
            "data": data,
            "network": net,
            "t1": t1,
            "weight": base * data * net * t1,
        }

    # ---- 4. Apply further filters ----
    ratio_cap = float(cfg["QUEUED_RUNNING_RATIO_CAP"])

    def cap_activated_starting(q: dict[str, Any]) -> str | None:
        """Skip queues if activated + starting > 2 x running."""
        name = q["panda_queue"]
        over = n(name, "activated") + n(name, "starting") > ratio_cap * terms[name]["running"]
        return "-cap" if over else None

    def cap_queued(q: dict[str, Any]) -> str | None:
        """Skip queues if defined + activated + assigned + starting > 2 x running."""
        name = q["panda_queue"]
        queued = n(name, "defined") + n(name, "activated") + terms[name]["assigned"] + n(name, "starting")
        return "-cap" if queued > ratio_cap * terms[name]["running"] else None

    capped = remaining
    remaining = run_checks([("activated+starting cap", cap_activated_starting), ("queued cap", cap_queued)], remaining)
    # "If all sites are skipped candidates with the 3 best weights go to the next step." (ALL_CAPPED_KEEP_BEST)
    # PanDA's code lets the task wait ("available sites all capped"): the switch all_capped_wait of panda-1.0.4
    keep = 0 if cfg["RULES"] == "panda-1.0.4" else int(cfg["ALL_CAPPED_KEEP_BEST"])
    if not remaining and capped and keep > 0:
        remaining = sorted(capped, key=lambda q: (-terms[q["panda_queue"]]["weight"], q["panda_queue"]))[:keep]
        for q in remaining:
            skips.pop(q["panda_queue"], None)
        funnel.append(("all capped: best weights kept", 0, len(remaining)))

    # ---- 5. Pending if all are skipped, else the best 10 by weight ----
    if not remaining:
        return RefResult("pending", [], skips, funnel, pending_minutes=int(cfg["JOB_PENDING_MINUTES"]))
    ranked = sorted(remaining, key=lambda q: (-terms[q["panda_queue"]]["weight"], q["panda_queue"]))
    best = int(cfg["MAX_SITE_CANDIDATES"])
    for q in ranked[best:]:
        skips[q["panda_queue"]] = "-low_weight"
    if len(ranked) > best:
        funnel.append(("best candidates", len(ranked), best))
    chosen = []
    for q in ranked[:best]:
        t = terms[q["panda_queue"]]
        factors = {k: t[k] for k in ("base", "data", "network", "t1")}
        details = {k: t[k] for k in ("running", "assigned", "manyAssigned")}
        chosen.append(RefCandidate(q["panda_queue"], t["weight"], factors, details))
    return RefResult("ok", chosen, skips, funnel)


def without_pilots(snap: GridSnapshot, q: dict[str, Any], hours: float) -> bool:
    """No pilot for the last HOURS: the last pilot is older than that when known, else npilot is 0."""
    last = q.get("lastpilot")
    if last is None or pd.isna(last):
        return q["npilot"] <= 0
    return (pd.Timestamp(snap.taken_at) - pd.Timestamp(last)).total_seconds() / 3600.0 > hours
