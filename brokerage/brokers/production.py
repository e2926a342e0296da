"""ATLAS production job brokerage: choose the queues for a production task's jobs (seed steps 1-5)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from brokerage import grid
from brokerage.checks.fairshare import zero_share
from brokerage.checks.software import software_index, software_verdict
from brokerage.explain import Candidate, Decision, FunnelStep, Skip
from brokerage.gdpconfig import Config
from brokerage.network import NetworkWeights, network_weights
from brokerage.pipeline import Filter, Verdict, apply_filters, fmt
from brokerage.snapshot import GridSnapshot

BROKER = "production"
DOWN = ("OFF", "TEST")  # detailed endpoint statuses that count as blacklisted


@dataclass
class ProdContext:
    """Everything the filters of one task need, as arrays over all queues (computed once per call)."""

    snap: GridSnapshot
    task: dict[str, Any]
    config: Config
    qa: grid.QueueArrays
    ep: grid.EndpointArrays
    counts: dict[str, np.ndarray]
    avail: dict[str, Any]
    nucleus: str | None
    preassigned: bool
    at_nucleus: np.ndarray
    scout: bool
    merge: bool
    priority: int
    express: bool
    job_cores: np.ndarray
    nw: NetworkWeights | None = None
    hint_mode: bool = False
    derived: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def n(self) -> int:
        """Number of queues."""
        return self.qa.n

    def names(self, idx: np.ndarray) -> np.ndarray:
        """Queue names of rows IDX."""
        return self.qa.name[idx]


def make_context(snap: GridSnapshot, task: dict[str, Any], config: Config, hint_mode: bool = False) -> ProdContext:
    """Build the per-task arrays the production filters share.

    Usage: ``ctx = make_context(snap, grid.task_row(snap, 1), Config())``
    """
    qa = grid.queue_arrays(snap)
    nucleus = None if hint_mode else (task.get("nucleus") or None)
    priority = int(task.get("currentpriority") or 0)
    express = task.get("processingtype") == "urgent" or priority >= int(config["EXPRESS_PRIORITY"])
    site_cc = qa["corecount"].astype(float, copy=False)
    task_cc = int(task.get("corecount") or 0)
    # a multi-core (or any-core) job takes the whole slot; a single-core job one core
    job_cores = np.where(task_cc == 1, 1.0, np.where(site_cc > 0, site_cc, max(task_cc, 1)))
    ctx = ProdContext(
        snap=snap,
        task=task,
        config=config,
        qa=qa,
        ep=grid.endpoint_arrays(snap),
        counts=grid.job_counts(snap, task.get("gshare")),
        avail=grid.available_at_queues(snap, int(task["jeditaskid"]), bool(task.get("taskbrokeronmaster"))),
        nucleus=nucleus,
        preassigned=bool(task.get("site")),
        at_nucleus=grid.nucleus_queues(snap, nucleus),
        scout=bool(task.get("is_scout")),
        merge=bool(task.get("is_merge")),
        priority=priority,
        express=express,
        job_cores=job_cores,
        hint_mode=hint_mode,
    )
    if nucleus:
        ctx.nw = network_weights(snap, qa["atlas_site"], nucleus, config, express=express)
    return ctx


# --- step 1: preliminary candidates -------------------------------------------------------------


def preliminary(ctx: ProdContext) -> tuple[np.ndarray, np.ndarray, list[Skip], list[str]]:
    """Step 1: pre-assigned queues, else all production/unified queues without 'test' in the name.

    Returns (candidate mask, mask of queues removed by the name rule, their skips, unknown pre-assigned names).
    """
    qa = ctx.qa
    site = ctx.task.get("site")
    if site:
        wanted = [s.strip() for s in str(site).split(",") if s.strip()]
        mask = np.zeros(qa.n, dtype=bool)
        unknown = []
        for w in wanted:
            i = qa.index.get(w)
            if i is None:
                unknown.append(w)
            else:
                mask[i] = True
        return mask, np.zeros(qa.n, dtype=bool), [], unknown
    prod = np.isin(qa["type"], ("production", "unified"))
    test = prod & qa.name_has_test
    skips = [
        Skip(str(n), "-test", "name contains 'test': not a preliminary candidate", "preliminary candidates")
        for n in qa.name[test]
    ]
    return prod & ~test, test, skips, []


# --- step 2: filters, in the seed's order -------------------------------------------------------


def f_status(ctx: ProdContext) -> Verdict | None:
    """The queue status must be online unless the queues are pre-assigned."""
    if ctx.preassigned:
        return None
    status = ctx.qa["status"]
    return Verdict(status == "online", "-status", lambda idx: [f"status={s}" for s in status[idx]])


def f_link_blocked(ctx: ProdContext) -> Verdict | None:
    """Skip queues if their links to the nucleus are blocked."""
    if ctx.nw is None:
        return None
    sites = ctx.qa["atlas_site"]
    return Verdict(
        ~ctx.nw.blocked,
        "-link_unusable",
        lambda idx: [f"link from satellite={s} to nucleus={ctx.nucleus} is blocked" for s in sites[idx]],
    )


def f_link_queued(ctx: ProdContext) -> Verdict | None:
    """Skip queues if over NQUEUED_SAT_CAP files are queued on their links to the nucleus."""
    if ctx.nw is None:
        return None
    cap = ctx.config["NQUEUED_SAT_CAP"]
    over = (ctx.nw.nqueued > cap) & ~ctx.at_nucleus
    sites, q = ctx.qa["atlas_site"], ctx.nw.nqueued
    return Verdict(
        ~over,
        "-link_unusable",
        lambda idx: [
            f"{fmt(q[i])} files queued from satellite={sites[i]} to nucleus={ctx.nucleus} > NQUEUED_SAT_CAP={cap}"
            for i in idx
        ],
        temporary=True,
    )


def f_links_full(ctx: ProdContext) -> Verdict | None:
    """Skip all queues if more than NQUEUED_NUC_CAP_FOR_JOBS files are being aggregated to the nucleus."""
    if ctx.nw is None:
        return None
    from brokerage.network import link_table

    links = link_table(ctx.snap, ctx.nucleus or "")
    total = links.total_queued_express if ctx.express else links.total_queued
    cap = ctx.config["NQUEUED_NUC_CAP_FOR_JOBS"]
    ok = total <= cap
    return Verdict(
        np.full(ctx.n, ok),
        "-links_full",
        f"{fmt(total)} files queued to nucleus={ctx.nucleus} > NQUEUED_NUC_CAP_FOR_JOBS={cap}",
        temporary=True,
    )


def _high_prio(ctx: ProdContext) -> bool:
    return ctx.priority >= int(ctx.config["HIGH_PRIO_NUCLEUS_ONLY"]) or ctx.scout


def f_nucleus_only(ctx: ProdContext) -> Verdict | None:
    """If priority >= 800 or scout jobs, skip queues unless associated with the nucleus."""
    if ctx.nw is None or not _high_prio(ctx):
        return None
    why = "scout jobs" if ctx.scout else f"priority {ctx.priority} >= {ctx.config['HIGH_PRIO_NUCLEUS_ONLY']}"
    return Verdict(ctx.at_nucleus, "-nucleus_only", f"{why} go only to queues of nucleus={ctx.nucleus}")


def f_inactive(ctx: ProdContext) -> Verdict | None:
    """For priority >= 800, scout, merge jobs: skip queues where no job started for 2 h although jobs were activated."""
    if not (_high_prio(ctx) or ctx.merge):
        return None
    waiting = grid.job_counts(ctx.snap, None)["activated"]
    hours = ctx.qa.laststart_hours
    limit = float(ctx.config["INACTIVE_HOURS"])
    inactive = (hours > limit) & (waiting > 0)
    return Verdict(
        ~inactive,
        "-inactive",
        lambda idx: [
            f"inactive: no job started for {fmt(hours[i], 2)} h > {fmt(limit)} h with {fmt(waiting[i])} jobs activated"
            for i in idx
        ],
        temporary=True,
    )


def f_zeroshare(ctx: ProdContext) -> Verdict | None:
    """Zero share in the queue's fairsharepolicy for the task's processing type."""
    t = ctx.task
    policies, inverse = _policy_index(ctx.snap)
    verdicts = np.array(
        [zero_share(p, t.get("processingtype") or "", t.get("gshare") or "", ctx.priority) if p else None
         for p in policies],
        dtype=object,
    )  # fmt: skip
    reasons = verdicts[inverse]
    passed = np.array([r is None for r in verdicts], dtype=bool)[inverse]
    return Verdict(passed, "-zeroshare", lambda idx: [str(r) for r in reasons[idx]])


def _policy_index(snap: GridSnapshot) -> tuple[list[str], np.ndarray]:
    """Distinct fairshare policies and each queue's index into them (few distinct policies, many queues)."""

    def build() -> tuple[list[str], np.ndarray]:
        uniq: dict[str, int] = {}
        inv = [uniq.setdefault(str(p or ""), len(uniq)) for p in grid.queue_arrays(snap)["fairsharepolicy"]]
        return list(uniq), np.asarray(inv, dtype=np.int64)

    return snap.cached("fairshare_index", build)


def f_io(ctx: ProdContext) -> Verdict | None:
    """IO-intensive tasks: missing input at the queue must be < SIZE_CUTOFF_TO_MOVE_INPUT GB and < NUM_CUTOFF_TO_MOVE_INPUT files."""
    io = ctx.task.get("iointensity")
    cutoff = ctx.config["IO_INTENSITY_CUTOFF"]
    if io is None or io <= cutoff or ctx.avail["total_gb"] <= 0:
        return None
    mgb, mfiles = ctx.avail["missing_gb"], ctx.avail["missing_files"]
    size_cut, num_cut = ctx.config["SIZE_CUTOFF_TO_MOVE_INPUT"], ctx.config["NUM_CUTOFF_TO_MOVE_INPUT"]
    ok = (mgb < size_cut) & (mfiles < num_cut)
    return Verdict(
        ok,
        "-io",
        lambda idx: [
            f"ioIntensity={fmt(io)} > IO_INTENSITY_CUTOFF={cutoff} and {fmt(mgb[i])} GB / {fmt(mfiles[i])} files "
            f"to move (limits {size_cut} GB / {num_cut} files)"
            for i in idx
        ],
    )


def f_diskio(ctx: ProdContext) -> Verdict | None:
    """Skip queues whose running jobs exceed their diskIO limit for tasks whose diskIO is also above it."""
    task_io = ctx.task.get("diskio")
    if task_io is None:
        return None
    maxio = ctx.qa["maxdiskio"].astype(float, copy=False)
    limit = np.where(maxio > 0, maxio, float(ctx.config["MAX_DISKIO_DEFAULT"]))
    avg = ctx.qa["diskio_avg"].astype(float, copy=False)
    bad = (avg > limit) & (task_io > limit)
    return Verdict(
        ~bad,
        "-diskIO",
        lambda idx: [
            f"diskIO per core {fmt(avg[i])} > limit {fmt(limit[i])} kB/s and task diskIO={fmt(task_io)}" for i in idx
        ],
        temporary=True,
    )


def core_count_check(qa: grid.QueueArrays, task: dict[str, Any], any_core_needs_multi: bool) -> Verdict:
    """Multi-core tasks need multi-core queues, single-core tasks single-core queues; maxCoreCount caps it.

    ANY_CORE_NEEDS_MULTI: whether an any-core task (corecount 0) must still go to multi-core queues.
    Shared by the production and analysis brokers.
    Usage: ``core_count_check(qa, task, False).passed``
    """
    site = qa["corecount"].astype(float, copy=False)
    task_cc = int(task.get("corecount") or 0)
    if task_cc > 1 or (task_cc == 0 and any_core_needs_multi):
        ok = site > 1
        need = "a multi-core queue"
    elif task_cc == 0:
        ok = np.ones(qa.n, dtype=bool)
        need = ""
    else:
        ok = site <= 1
        need = "a single-core queue"
    codes = np.where(ok, "", "-cpucore").astype(object)
    maxcc = task.get("maxcorecount")
    over = np.zeros(qa.n, dtype=bool) if not maxcc else (site > maxcc)
    codes = np.where(ok & over, "-max_cpucore", codes)

    def reasons(idx: np.ndarray) -> list[str]:
        return [
            f"corecount={fmt(site[i])} > maxCoreCount={maxcc}"
            if codes[i] == "-max_cpucore"
            else f"task corecount={task_cc} needs {need}, queue corecount={fmt(site[i])}"
            for i in idx
        ]

    return Verdict(ok & ~over, codes, reasons)


def f_cpucore(ctx: ProdContext) -> Verdict | None:
    """Core count matching; any-core tasks at priority >= HIGH_PRIO_MULTICORE (or scouts) need multi-core queues."""
    high = ctx.priority >= int(ctx.config["HIGH_PRIO_MULTICORE"]) or ctx.scout
    return core_count_check(ctx.qa, ctx.task, high)


def software_check(snap: GridSnapshot, task: dict[str, Any]) -> Verdict:
    """Release/cache, CPU/GPU and container matching of TASK over every queue (see docs/software.md).

    Shared by the production and analysis brokers. The same queue arrays are passed on every call so
    that the check's per-description memo is reused across tasks.
    Usage: ``software_check(snap, task).passed``
    """
    qa = grid.queue_arrays(snap)
    return software_verdict(task, qa.name, qa["releases"], software_index(snap))


def f_software(ctx: ProdContext) -> Verdict | None:
    """Availability of ATLAS release/cache: ANY skips the check, AUTO uses the queue's published JSON."""
    return software_check(ctx.snap, ctx.task)


def _expected_memory(ctx: ProdContext) -> np.ndarray:
    t = ctx.task
    ram = float(t.get("ramcount") or 0)
    base = float(t.get("baseramcount") or 0)
    comp = float(ctx.config["MEMORY_COMPENSATION"])
    if str(t.get("ramunit") or "").startswith("MBPerCore"):
        return (base + ram * ctx.job_cores) * comp
    return np.full(ctx.n, (base + ram) * comp)


def f_memory(ctx: ProdContext) -> Verdict | None:
    """(baseRamCount + ramCount x coreCount) x 0.9 must lie within the queue's [minrss, maxrss]."""
    mem = _expected_memory(ctx)
    ctx.derived["memory"] = mem
    maxrss = ctx.qa["maxrss"].astype(float, copy=False)
    minrss = ctx.qa["minrss"].astype(float, copy=False)
    low = (maxrss > 0) & (mem > maxrss)
    high = (minrss > 0) & (mem < minrss)
    codes = np.where(low, "-lowmemory", "-highmemory").astype(object)

    def reasons(idx: np.ndarray) -> list[str]:
        return [
            f"expected memory {fmt(mem[i])} MB > maxrss={fmt(maxrss[i])} MB"
            if low[i]
            else f"expected memory {fmt(mem[i])} MB < minrss={fmt(minrss[i])} MB"
            for i in idx
        ]

    return Verdict(~(low | high), codes, reasons)


def f_remoteio(ctx: ProdContext) -> Verdict | None:
    """Skip queues without direct access when the task reads input only by direct access."""
    if ctx.task.get("allowinputlan") != "only":
        return None
    da = ctx.qa["direct_access_lan"].astype(bool)
    return Verdict(da, "-remoteio", "the task uses only direct access but the queue does not support it")


def expected_scratch_mb(ctx: ProdContext) -> np.ndarray:
    """inputDiskCount + max(0.5 GB, outDiskCount x nEvents or x inputDiskCount) + workDiskCount, in MB."""
    t = ctx.task
    input_mb = float(t.get("chunk_input_mb") or 0)
    out = float(t.get("outdiskcount") or 0)
    if str(t.get("outdiskunit") or "").endswith("PerEvent"):
        out_mb = out * float(t.get("chunk_nevents") or 0) / 1024.0  # kB per event
    else:
        out_mb = out * input_mb
    out_mb = max(float(ctx.config["MIN_OUTPUT_DISK_GB"]) * 1024.0, out_mb)
    direct = ctx.qa["direct_access_lan"].astype(bool)
    return np.where(direct, 0.0, input_mb) + out_mb + float(t.get("workdiskcount") or 0)


def f_scratch(ctx: ProdContext) -> Verdict | None:
    """maxwdir divided by the queue's coreCount must exceed the job's expected disk usage."""
    need = expected_scratch_mb(ctx)
    ctx.derived["scratch"] = need
    maxwdir = ctx.qa["maxwdir"].astype(float, copy=False)
    cc = np.maximum(ctx.qa["corecount"].astype(float, copy=False), 1.0)
    per_core = maxwdir / cc
    ok = (maxwdir <= 0) | (per_core > need)
    return Verdict(
        ok,
        "-disk",
        lambda idx: [
            f"small scratch disk: maxwdir/coreCount={fmt(per_core[i])} MB <= expected {fmt(need[i])} MB" for i in idx
        ],
    )


def _output_free(ctx: ProdContext) -> np.ndarray:
    out = ctx.qa.out_endpoint
    safe = np.maximum(out, 0)
    free = (ctx.ep["space_free"].astype(float, copy=False) + ctx.ep["space_expired"].astype(float, copy=False))[safe]
    return np.where(out >= 0, free, np.nan)


def f_storage(ctx: ProdContext) -> Verdict | None:
    """DISK size check: free space in the local storage has to be over STORAGE_MIN_FREE_SIZE (200 GB)."""
    free = _output_free(ctx)
    floor = float(ctx.config["STORAGE_MIN_FREE_SIZE"])
    ok = free > floor
    out = ctx.qa.out_endpoint
    return Verdict(
        ok,
        "-disk",
        lambda idx: [
            "no output storage endpoint"
            if out[i] < 0
            else f"disk shortage at {ctx.ep.name[out[i]]}: {fmt(free[i])} GB free <= {fmt(floor)} GB"
            for i in idx
        ],
        temporary=True,
    )


def _endpoint_ok(snap: GridSnapshot) -> dict[str, np.ndarray]:
    """Per queue: can its endpoints read/write over LAN/WAN (detailed status not OFF/TEST)? Built once."""

    def build() -> dict[str, np.ndarray]:
        qa, ep = grid.queue_arrays(snap), grid.endpoint_arrays(snap)

        def any_on(status: np.ndarray) -> np.ndarray:
            on = ~np.isin(status[qa.rel_endpoint], DOWN)
            return np.bincount(qa.rel_queue, weights=on.astype(float, copy=False), minlength=qa.n) > 0

        has_input = np.bincount(qa.rel_queue, minlength=qa.n) > 0
        out = qa.out_endpoint
        safe = np.maximum(out, 0)
        return {
            "read_lan": any_on(ep["read_lan"]) | ~has_input,
            "write_lan": (out < 0) | ~np.isin(ep["write_lan"][safe], DOWN),
            "write_wan": any_on(ep["write_wan"]) | ~has_input,
            "read_wan": (out < 0) | ~np.isin(ep["read_wan"][safe], DOWN),
        }

    return snap.cached("endpoint_ok", build)


def f_blacklist(ctx: ProdContext) -> Verdict | None:
    """Skip queues whose storage endpoints are blacklisted (detailed status OFF or TEST) for the needed activity."""
    ok = _endpoint_ok(ctx.snap)
    satellite = ~ctx.at_nucleus if ctx.nucleus else np.zeros(ctx.n, dtype=bool)
    read_lan, write_lan = ok["read_lan"], ok["write_lan"]
    write_wan = ~satellite | ok["write_wan"]
    read_wan = ~satellite | ok["read_wan"]
    codes = np.full(ctx.n, "", dtype=object)
    texts = np.full(ctx.n, "", dtype=object)
    for good, code, text in (
        (read_wan, "-read_wan_blacklist", "output endpoints cannot send out files over WAN, read_wan is not ON"),
        (write_wan, "-write_wan_blacklist", "input endpoints cannot receive files over WAN, write_wan is not ON"),
        (write_lan, "-write_lan_blacklist", "output endpoints cannot write over LAN, write_lan is not ON"),
        (read_lan, "-read_lan_blacklist", "input endpoints cannot read over LAN, read_lan is not ON"),
    ):  # reverse order so the first failing condition's text wins
        codes = np.where(good, codes, code)
        texts = np.where(good, texts, text)
    return Verdict(read_lan & write_lan & write_wan & read_wan, codes, lambda idx: list(texts[idx]))


def f_scout_walltime(ctx: ProdContext) -> Verdict | None:
    """Scout or merge jobs: skip queues whose maxtime is less than 24 hours."""
    if not (ctx.scout or ctx.merge):
        return None
    maxtime = ctx.qa["maxtime"].astype(float, copy=False)
    need = float(ctx.config["MIN_WALLTIME_SCOUT_MERGE_HOURS"]) * 3600.0
    ok = (maxtime <= 0) | (maxtime >= need)
    code = "-scout_walltime" if ctx.scout else "-min_walltime"
    kind = "scout" if ctx.scout else "merge"
    return Verdict(
        ok, code, lambda idx: [f"maxtime={fmt(maxtime[i])} s < {fmt(need)} s needed by {kind} jobs" for i in idx]
    )


def expected_walltime(ctx: ProdContext) -> np.ndarray | None:
    """cpuTime x nEvents / (C x P x cpuEfficiency) + baseTime per queue, in seconds (None without estimate)."""
    t = ctx.task
    cputime = float(t.get("cputime") or 0)
    nevents = float(t.get("chunk_nevents") or 0)
    base = float(t.get("basewalltime") or 0)
    eff = float(t.get("cpuefficiency") if t.get("cpuefficiency") is not None else 90) / 100.0
    if cputime <= 0 or nevents <= 0:
        return None
    if eff <= 0:  # cpuEfficiency 0 disables the scaling with nEvents
        return np.full(ctx.n, base)
    power = ctx.qa["corepower"].astype(float, copy=False)
    power = np.where(power > 0, power, float(ctx.config["DEFAULT_CORE_POWER"]))
    return cputime * nevents / (ctx.job_cores * power * eff) + base


def f_walltime(ctx: ProdContext) -> Verdict | None:
    """The estimated walltime must be between the queue's mintime and maxtime."""
    wall = expected_walltime(ctx)
    if wall is None:
        return None
    ctx.derived["walltime"] = wall
    maxtime = ctx.qa["maxtime"].astype(float, copy=False)
    mintime = ctx.qa["mintime"].astype(float, copy=False)
    short = (maxtime > 0) & (wall > maxtime)
    long_ = (mintime > 0) & (wall < mintime)
    codes = np.where(short, "-shortwalltime", "-longwalltime").astype(object)

    def reasons(idx: np.ndarray) -> list[str]:
        return [
            f"short walltime: expected {fmt(wall[i])} s > maxtime={fmt(maxtime[i])} s"
            if short[i]
            else f"long walltime needed: expected {fmt(wall[i])} s < mintime={fmt(mintime[i])} s"
            for i in idx
        ]

    return Verdict(~(short | long_), codes, reasons)


_CONNECTIVITY_ACCEPTS = {"full": {"full", "http", "none"}, "http": {"http", "none"}, "none": {"none"}}


def split_connectivity(text: str) -> tuple[str, str]:
    """'network_connectivity#ip_stack' -> (network_connectivity, ip_stack)."""
    conn, _, stack = (text or "").partition("#")
    return conn.strip(), stack.strip()


def f_wnconnectivity(ctx: ProdContext) -> Verdict | None:
    """wnconnectivity of the queue must accept the task's ipConnectivity (network part and ip stack)."""
    want = ctx.task.get("ipconnectivity")
    if not want:
        return None
    t_conn, t_stack = split_connectivity(want)
    qconn = ctx.qa["wnconnectivity"]
    parsed = [split_connectivity(c) for c in qconn]
    ok = np.array(
        [(not t_conn or t_conn in _CONNECTIVITY_ACCEPTS.get(c or "full", set())) and (s == t_stack)
         for c, s in parsed],
        dtype=bool,
    )  # fmt: skip
    return Verdict(ok, "-network", lambda idx: [f"wnconnectivity={qconn[i]!r} cannot take {want!r}" for i in idx])


def f_eventservice(ctx: ProdContext) -> Verdict | None:
    """Event service settings: ES tasks need ES queues (eshigh only for high priority), others avoid es-only queues."""
    seed = ctx.qa["jobseed"]
    if ctx.task.get("eventservice"):
        high_prio = int(ctx.config["ES_HIGH_PRIORITY"])
        es_high = ctx.priority >= high_prio or ctx.scout
        std = seed == "std"
        high_only = (seed == "eshigh") & (not es_high)
        codes = np.where(std, "-es", "-eshigh").astype(object)
        texts = np.where(
            std, "event service task on a queue with jobseed=std", f"jobseed=eshigh needs priority >= {high_prio}"
        )
        return Verdict(~(std | high_only), codes, lambda idx: list(texts[idx]))
    es = seed == "es"
    return Verdict(~es, "-nones", "non event service task on a queue with jobseed=es")


def f_transferring(ctx: ProdContext) -> Verdict | None:
    """Too many transferring jobs: skip if transferring > max(transferring_limit, 2 x running)."""
    lim = ctx.qa["transferringlimit"].astype(float, copy=False)
    lim = np.where(lim > 0, lim, float(ctx.config["DEFAULT_TRANSFERRING_LIMIT"]))
    tr = ctx.counts["transferring"]
    run = ctx.counts["running"]
    cap = np.maximum(lim, 2.0 * run)
    return Verdict(
        tr <= cap,
        "-transferring",
        lambda idx: [f"too many transferring jobs {fmt(tr[i])} > max({fmt(lim[i])}, 2x{fmt(run[i])})" for i in idx],
        temporary=True,
    )


def f_t1weight(ctx: ProdContext) -> Verdict | None:
    """Use only the queues associated with the nucleus if the task sets t1Weight=-1 and normal jobs are generated."""
    t1 = ctx.task.get("t1weight")
    if ctx.nucleus is None or t1 is None or int(t1) >= 0 or ctx.merge:
        return None
    return Verdict(ctx.at_nucleus, "-t1weight", f"negative t1Weight: only queues of nucleus={ctx.nucleus}")


def f_full_chain(ctx: ProdContext) -> Verdict | None:
    """Full-chain: a fullChain task on a bare nucleus uses only its queues; others avoid bareNucleus=only sites."""
    if ctx.nucleus is None:
        return None
    site_mode, modes = _bare_modes(ctx.snap)
    nucleus_mode = modes.get(ctx.nucleus, "")
    if ctx.task.get("fullchain") and nucleus_mode in ("only", "allow"):
        return Verdict(
            ctx.at_nucleus,
            "-full_chain",
            f"full-chain task on bare nucleus={ctx.nucleus} (bareNucleus={nucleus_mode}): only the nucleus' queues",
        )
    only = site_mode == "only"
    if not only.any():
        return None
    sites = ctx.qa["atlas_site"]
    return Verdict(
        ~only,
        "-not_full_chain",
        lambda idx: [f"site={sites[i]} is a bareNucleus=only nucleus reserved for full-chain tasks" for i in idx],
    )


def _bare_modes(snap: GridSnapshot) -> tuple[np.ndarray, dict[str, str]]:
    """bareNucleus mode of every queue's site, and of every site ('' for none); built once per snapshot."""

    def build() -> tuple[np.ndarray, dict[str, str]]:
        s = snap.sites
        modes = {str(n): str(b or "") for n, b in zip(s["site_name"], s["bare_nucleus"], strict=True)}
        per_queue = np.array([modes.get(x, "") for x in grid.queue_arrays(snap)["atlas_site"]], dtype=object)
        return per_queue, modes

    return snap.cached("prod:bare_modes", build)


def f_nopilot(ctx: ProdContext) -> Verdict | None:
    """Skip queues without pilots for the last 3 hours."""
    npilot = ctx.qa["npilot"].astype(float, copy=False)
    hours = ctx.config["NO_PILOT_HOURS"]
    return Verdict(npilot > 0, "-nopilot", f"no pilot for the last {fmt(hours)} hours", temporary=True)


def f_network_express(ctx: ProdContext) -> Verdict | None:
    """processingType=urgent or priority >= 1000: network weight must be >= NW_THRESHOLD x NW_WEIGHT_MULTIPLIER."""
    if ctx.nw is None or not ctx.express:
        return None
    thr = float(ctx.config["NW_THRESHOLD"]) * float(ctx.config["NW_WEIGHT_MULTIPLIER"])
    w = ctx.nw.weight
    return Verdict(
        w >= thr,
        "-lowNetworkWeight",
        lambda idx: [f"network weight {w[i]:.3f} < NW_THRESHOLD x NW_WEIGHT_MULTIPLIER = {thr:.3f}" for i in idx],
    )


FILTERS: list[Filter] = [
    Filter("status check", f_status),
    Filter("link check", f_link_blocked),
    Filter("satellite link queue check", f_link_queued, temporary=True),
    Filter("nucleus transfer queue check", f_links_full, temporary=True),
    Filter("high priority nucleus check", f_nucleus_only),
    Filter("inactive queue check", f_inactive, temporary=True),
    Filter("zero share check", f_zeroshare),
    Filter("IO check", f_io),
    Filter("diskIO check", f_diskio, temporary=True),
    Filter("core count check", f_cpucore),
    Filter("release/cache check", f_software),
    Filter("memory check", f_memory),
    Filter("direct access check", f_remoteio),
    Filter("scratch disk check", f_scratch),
    Filter("storage space check", f_storage, temporary=True),
    Filter("endpoint blacklist check", f_blacklist),
    Filter("scout/merge walltime check", f_scout_walltime),
    Filter("walltime check", f_walltime),
    Filter("IP connectivity check", f_wnconnectivity),
    Filter("event service check", f_eventservice),
    Filter("transferring check", f_transferring, temporary=True),
    Filter("T1 weight check", f_t1weight),
    Filter("pilot check", f_nopilot, temporary=True),
    Filter("express network check", f_network_express),
]
"""Step 2 of the seed, in order. Other modules may insert filters (see ``insert_filter``)."""


def insert_filter(new: Filter, before: str) -> None:
    """Insert NEW into the production pipeline just before the filter named BEFORE (replacing one of the same name)."""
    names = [f.name for f in FILTERS]
    if new.name in names:
        FILTERS[names.index(new.name)] = new
        return
    FILTERS.insert(names.index(before), new)


insert_filter(Filter("full-chain check", f_full_chain), before="pilot check")


# --- step 3: weight -----------------------------------------------------------------------------


@dataclass(frozen=True)
class WeightTerms:
    """The numbers behind each queue's weight (arrays over all queues)."""

    nrunning: np.ndarray
    running_rule: np.ndarray
    assigned: np.ndarray
    many_assigned: np.ndarray
    base: np.ndarray
    data: np.ndarray
    network: np.ndarray
    t1: np.ndarray
    weight: np.ndarray


def effective_running(
    rreal: np.ndarray, nbatchjob: np.ndarray, numslots: np.ndarray, starting: np.ndarray, cap: float
) -> tuple[np.ndarray, np.ndarray]:
    """nRunning = the largest of Rreal, min(nBatchJob, 20) when bootstrapping, numSlots > 0, nStarting when numSlots = 0.

    Returns the value and which rule gave it.
    Usage: ``effective_running(np.array([3.0]), np.array([50.0]), np.array([np.nan]), np.array([0.0]), 20)``
    """
    boot = np.where((rreal < cap) & (nbatchjob > rreal), np.minimum(nbatchjob, cap), -np.inf)
    slots = np.where(numslots > 0, numslots, -np.inf)
    start = np.where(numslots == 0, starting, -np.inf)
    stack = np.vstack([rreal, boot, slots, start])
    which = np.argmax(stack, axis=0)
    rules = np.array(["running", "nBatchJob bootstrap", "numSlots", "starting (numSlots=0)"], dtype=object)
    return stack.max(axis=0), rules[which]


def t1_weight(ctx: ProdContext) -> float:
    """The task's t1Weight as the seed sets it (seed 003 "T1 weight").

    t1Weight=0 or unset: WORLD_NUCLEUS_WEIGHT if ioIntensity >= T1_WEIGHT_IO_INTENSITY, else 1; t1Weight=-1 has
    already kept only the nucleus' queues, so it weighs 1; then currentPriority >= T1_WEIGHT_HIGH_PRIO_MIN gives
    max(t1Weight, T1_WEIGHT_HIGH_PRIO).
    Usage: ``t1_weight(make_context(snap, grid.task_row(snap, 1), Config()))``
    """
    cfg = ctx.config
    t1 = ctx.task.get("t1weight")
    io = ctx.task.get("iointensity")
    if not t1:
        heavy = io is not None and float(io) >= float(cfg["T1_WEIGHT_IO_INTENSITY"])
        weight = float(cfg["WORLD_NUCLEUS_WEIGHT"]) if heavy else 1.0
    elif t1 < 0:
        weight = 1.0
    else:
        weight = float(t1)
    if ctx.priority >= int(cfg["T1_WEIGHT_HIGH_PRIO_MIN"]):
        weight = max(weight, float(cfg["T1_WEIGHT_HIGH_PRIO"]))
    return weight


def t1_factor(ctx: ProdContext) -> np.ndarray:
    """Weight factor for queues of the task's nucleus from t1Weight (1 elsewhere)."""
    if ctx.nucleus is None:
        return np.ones(ctx.n)
    return np.where(ctx.at_nucleus, t1_weight(ctx), 1.0)


def weights(ctx: ProdContext) -> WeightTerms:
    """Step 3: (running+1)/((activated+assigned+starting+defined+10) x manyAssigned) x data x network (x t1)."""
    c, cfg = ctx.counts, ctx.config
    numslots = ctx.qa["numslots"].astype(float, copy=False)
    nrun, rule = effective_running(
        c["running"],
        ctx.qa["nbatchjob"].astype(float, copy=False),
        numslots,
        c["starting"],
        float(cfg["BOOTSTRAP_NBATCHJOB_CAP"]),
    )
    total = float(ctx.avail["total_gb"])
    local = (total <= 0) | (ctx.avail["avail_gb"] >= total)
    # assigned jobs wait for input transfers; they do not count where the input is already local
    assigned = np.where(local, 0.0, c["assigned"])
    act = c["activated"]
    ratio = np.divide(assigned, act, out=np.where(assigned > 0, np.inf, 0.0), where=act > 0)
    many = np.maximum(1.0, np.minimum(2.0, ratio))
    base = (nrun + 1.0) / ((act + assigned + c["starting"] + c["defined"] + float(cfg["WEIGHT_QUEUE_OFFSET"])) * many)
    if total > 0:
        data = (ctx.avail["avail_gb"] + total) / (total * (ctx.avail["missing_files"] / 100.0 + 1.0))
    else:
        data = np.ones(ctx.n)
    network = ctx.nw.weight if ctx.nw is not None and cfg["NW_ACTIVE"] else np.ones(ctx.n)
    t1 = t1_factor(ctx)
    return WeightTerms(nrun, rule, assigned, many, base, data, network, t1, base * data * network * t1)


# --- step 4: further filters --------------------------------------------------------------------


def further_filters(terms: WeightTerms) -> list[Filter]:
    """Step 4: skip queues with activated+starting or defined+activated+assigned+starting > 2 x running."""

    def cap1(ctx: ProdContext) -> Verdict:
        c = ctx.counts
        r = float(ctx.config["QUEUED_RUNNING_RATIO_CAP"])
        q = c["activated"] + c["starting"]
        return Verdict(
            q <= r * terms.nrunning,
            "-cap",
            lambda idx: [f"activated+starting={fmt(q[i])} > {fmt(r)} x running={fmt(terms.nrunning[i])}" for i in idx],
            temporary=True,
        )

    def cap2(ctx: ProdContext) -> Verdict:
        c = ctx.counts
        r = float(ctx.config["QUEUED_RUNNING_RATIO_CAP"])
        q = c["defined"] + c["activated"] + terms.assigned + c["starting"]
        return Verdict(
            q <= r * terms.nrunning,
            "-cap",
            lambda idx: [
                f"defined+activated+assigned+starting={fmt(q[i])} > {fmt(r)} x running={fmt(terms.nrunning[i])}"
                for i in idx
            ],
            temporary=True,
        )

    return [Filter("activated+starting cap", cap1, True), Filter("queued cap", cap2, True)]


# --- the broker ---------------------------------------------------------------------------------


def candidate_factors(terms: WeightTerms, i: int, ctx: ProdContext) -> tuple[dict[str, float], dict[str, Any]]:
    """Weight factors (multiplied together give the weight) and the job counts behind them for queue I."""
    c = ctx.counts
    factors = {
        "base": float(terms.base[i]),
        "data": float(terms.data[i]),
        "network": float(terms.network[i]),
        "t1": float(terms.t1[i]),
    }
    details: dict[str, Any] = {
        "nRunning": float(terms.nrunning[i]),
        "nRunning_rule": str(terms.running_rule[i]),
        "nActivated": float(c["activated"][i]),
        "nAssigned": float(terms.assigned[i]),
        "nStarting": float(c["starting"][i]),
        "nDefined": float(c["defined"][i]),
        "manyAssigned": float(terms.many_assigned[i]),
        "availableGB": float(ctx.avail["avail_gb"][i]),
        "totalGB": float(ctx.avail["total_gb"]),
        "nMissingFiles": float(ctx.avail["missing_files"][i]),
    }
    if ctx.nw is not None:
        details.update(
            networkWeight=float(ctx.nw.weight[i]),
            queuedWeight=float(ctx.nw.queued_weight[i]),
            throughputWeight=float(ctx.nw.throughput_weight[i]),
            nQueuedFiles=float(ctx.nw.nqueued[i]),
            network_rule=str(ctx.nw.rule[i]),
        )
    return factors, details


def broker(snap: GridSnapshot, jeditaskid: int, config: Config | None = None) -> Decision:
    """Run the production job brokerage for one task and explain every queue's fate.

    Usage: ``broker(snap, 4242, Config()).to_dict()``
    """
    config = config or Config()
    task = grid.task_row(snap, jeditaskid)
    ctx = make_context(snap, task, config)
    return run(ctx)


def run(ctx: ProdContext) -> Decision:
    """Run steps 1-5 on a prepared context."""
    cfg = ctx.config
    alive, test_mask, skips, unknown = preliminary(ctx)
    funnel = [FunnelStep("preliminary candidates", int(alive.sum() + test_mask.sum()), int(alive.sum()))]
    alive, skips, funnel = apply_filters(ctx.qa.name, alive, FILTERS, ctx, skips, funnel)
    terms = weights(ctx)
    alive, skips, funnel = apply_filters(ctx.qa.name, alive, further_filters(terms), ctx, skips, funnel)
    idx = np.flatnonzero(alive)
    message = f"unknown pre-assigned queues: {', '.join(unknown)}" if unknown else ""
    if len(idx) == 0:
        return Decision(
            BROKER, int(ctx.task["jeditaskid"]), "pending", [], skips, funnel, cfg.changed(),
            pending_minutes=int(cfg["JOB_PENDING_MINUTES"]), message=message or "no candidates",
        )  # fmt: skip
    w = terms.weight[idx]
    order = idx[np.lexsort((ctx.qa.name[idx], -w))]
    top = int(cfg["MAX_SITE_CANDIDATES"])
    chosen, rest = order[:top], order[top:]
    candidates = []
    for rank, i in enumerate(chosen, start=1):
        factors, details = candidate_factors(terms, int(i), ctx)
        candidates.append(Candidate(str(ctx.qa.name[i]), rank, float(terms.weight[i]), factors, details))
    if len(rest):
        cutoff = float(terms.weight[chosen[-1]])
        for i in rest:
            skips.append(
                Skip(
                    str(ctx.qa.name[i]),
                    "-low_weight",
                    f"weight={terms.weight[i]:.4g} below the best {top} (cut at {cutoff:.4g})",
                    "best candidates",
                )
            )
        funnel.append(FunnelStep("best candidates", len(order), len(chosen)))
    return Decision(
        BROKER, int(ctx.task["jeditaskid"]), "ok", candidates, skips, funnel, cfg.changed(), message=message,
    )  # fmt: skip
