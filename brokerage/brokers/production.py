"""ATLAS production job brokerage: choose the queues for a production task's jobs (seed steps 1-5)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from brokerage import grid
from brokerage.checks.fairshare import zero_share
from brokerage.checks.software import software_index, software_verdict
from brokerage.explain import Candidate, Decision, FunnelStep, LazyTexts, SkipList
from brokerage.gdpconfig import Config
from brokerage.network import NetworkWeights, network_weights, over_sat_cap
from brokerage.pipeline import Filter, Verdict, apply_filters, fmt, fmt_many
from brokerage.pseudoqueues import task_resource_type
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
    rtype = task_resource_type(task)  # unified queues are seen as their pseudo queue of this type
    qa = grid.pseudo_queue_arrays(snap, rtype)
    nucleus = None if hint_mode else (task.get("nucleus") or None)
    priority = int(task.get("currentpriority") or 0)
    express = task.get("processingtype") == "urgent" or priority >= int(config["EXPRESS_PRIORITY"])
    task_cc = int(task.get("corecount") or 0)
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
        job_cores=grid.per_config(snap, config, ("job_cores", task_cc, rtype), lambda: job_cores(qa, task_cc)),
        hint_mode=hint_mode,
    )
    if nucleus:
        ctx.nw = network_weights(snap, qa["atlas_site"], nucleus, config, express=express)
    return ctx


def job_cores(qa: grid.QueueArrays, task_cc: int) -> np.ndarray:
    """Cores one job of a task with corecount TASK_CC takes at every queue.

    Usage: ``job_cores(grid.queue_arrays(snap), 8)``
    """
    site_cc = qa["corecount"].astype(float, copy=False)
    # a multi-core (or any-core) job takes the whole slot; a single-core job one core
    out = np.where(task_cc == 1, 1.0, np.where(site_cc > 0, site_cc, max(task_cc, 1)))
    out.flags.writeable = False  # shared by the tasks with this corecount
    return out


# --- step 1: preliminary candidates -------------------------------------------------------------


def preliminary(ctx: ProdContext) -> tuple[np.ndarray, np.ndarray, SkipList, list[str]]:
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
        return mask, np.zeros(qa.n, dtype=bool), SkipList(), unknown
    candidates, test, test_idx = grid.per_config(ctx.snap, ctx.config, "preliminary", lambda: _preliminary_masks(qa))
    skips = SkipList()
    skips.add(qa.name, test_idx, "-test", "name contains 'test': not a preliminary candidate", "preliminary candidates")
    return candidates.copy(), test.copy(), skips, []


def _preliminary_masks(qa: grid.QueueArrays) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    prod = np.isin(qa["type"], ("production", "unified"))
    test = prod & qa.name_has_test
    return prod & ~test, test, np.flatnonzero(test)


# --- step 2: filters, in the seed's order -------------------------------------------------------


def f_status(ctx: ProdContext) -> Verdict | None:
    """The queue status must be online unless the queues are pre-assigned."""
    if ctx.preassigned:
        return None
    return grid.per_config(ctx.snap, ctx.config, "status", lambda: _status_verdict(ctx.qa))


def _status_verdict(qa: grid.QueueArrays) -> Verdict:
    status = qa["status"]
    return Verdict(status == "online", "-status", lambda idx: [f"status={s}" for s in status[idx].tolist()])


def f_link_blocked(ctx: ProdContext) -> Verdict | None:
    """Skip queues if their links to the nucleus are blocked."""
    if ctx.nw is None:
        return None
    nucleus, blocked, sites = ctx.nucleus, ctx.nw.blocked, ctx.qa["atlas_site"]
    return grid.per_config(
        ctx.snap,
        ctx.config,
        ("link_blocked", nucleus, ctx.express),
        lambda: Verdict(
            ~blocked,
            "-link_unusable",
            lambda idx: [f"link from satellite={s} to nucleus={nucleus} is blocked" for s in sites[idx].tolist()],
        ),
    )


def f_link_queued(ctx: ProdContext) -> Verdict | None:
    """Skip queues if over NQUEUED_SAT_CAP files are queued on their links to the nucleus."""
    if ctx.nw is None:
        return None
    nucleus, q, at_nucleus, sites = ctx.nucleus, ctx.nw.nqueued, ctx.at_nucleus, ctx.qa["atlas_site"]
    cap = ctx.config["NQUEUED_SAT_CAP"]

    def build() -> Verdict:
        return Verdict(
            ~over_sat_cap(q, cap, at_nucleus),
            "-link_unusable",
            lambda idx: [
                f"{n} files queued from satellite={s} to nucleus={nucleus} > NQUEUED_SAT_CAP={cap}"
                for n, s in zip(fmt_many(q[idx]), sites[idx].tolist(), strict=True)
            ],
            temporary=True,
        )

    return grid.per_config(ctx.snap, ctx.config, ("link_queued", nucleus, ctx.express), build)


def f_links_full(ctx: ProdContext) -> Verdict | None:
    """Skip all queues if more than NQUEUED_NUC_CAP_FOR_JOBS files are being aggregated to the nucleus."""
    if ctx.nw is None:
        return None
    from brokerage.network import link_table

    nucleus, n = ctx.nucleus, ctx.n
    links = link_table(ctx.snap, nucleus or "")
    total = links.total_queued_express if ctx.express else links.total_queued
    cap = ctx.config["NQUEUED_NUC_CAP_FOR_JOBS"]
    return grid.per_config(
        ctx.snap,
        ctx.config,
        ("links_full", nucleus, ctx.express),
        lambda: Verdict(
            np.full(n, total <= cap),
            "-links_full",
            f"{fmt(total)} files queued to nucleus={nucleus} > NQUEUED_NUC_CAP_FOR_JOBS={cap}",
            temporary=True,
        ),
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
    return grid.per_config(ctx.snap, ctx.config, "inactive", lambda: _inactive_verdict(ctx.snap, ctx.config))


def _inactive_verdict(snap: GridSnapshot, config: Config) -> Verdict:
    waiting = grid.job_counts(snap, None)["activated"]
    hours = grid.queue_arrays(snap).laststart_hours
    limit = float(config["INACTIVE_HOURS"])
    inactive = (hours > limit) & (waiting > 0)
    return Verdict(
        ~inactive,
        "-inactive",
        lambda idx: [
            f"inactive: no job started for {h} h > {fmt(limit)} h with {w} jobs activated"
            for h, w in zip(fmt_many(hours[idx], 2), fmt_many(waiting[idx]), strict=True)
        ],
        temporary=True,
    )


def f_zeroshare(ctx: ProdContext) -> Verdict | None:
    """Zero share in the queue's fairsharepolicy for the task's processing type."""
    t = ctx.task
    key = ("zeroshare", t.get("processingtype") or "", t.get("gshare") or "", ctx.priority)
    return grid.per_config(ctx.snap, ctx.config, key, lambda: _zeroshare_verdict(ctx.snap, *key[1:]))


def _zeroshare_verdict(snap: GridSnapshot, processingtype: str, gshare: str, priority: int) -> Verdict:
    policies, inverse = _policy_index(snap)
    verdicts = [zero_share(p, processingtype, gshare, priority) if p else None for p in policies]
    passed = np.array([r is None for r in verdicts], dtype=bool)[inverse]
    return Verdict(passed, "-zeroshare", lambda idx: [str(verdicts[k]) for k in inverse[idx].tolist()])


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
    io_text = fmt(io)
    return Verdict(
        ok,
        "-io",
        lambda idx: [
            f"ioIntensity={io_text} > IO_INTENSITY_CUTOFF={cutoff} and {g} GB / {f} files "
            f"to move (limits {size_cut} GB / {num_cut} files)"
            for g, f in zip(fmt_many(mgb[idx]), fmt_many(mfiles[idx]), strict=True)
        ],
    )


def f_diskio(ctx: ProdContext) -> Verdict | None:
    """Skip queues whose running jobs exceed their diskIO limit for tasks whose diskIO is also above it."""
    task_io = ctx.task.get("diskio")
    if task_io is None:
        return None
    over, limit, avg = grid.per_config(ctx.snap, ctx.config, "diskio", lambda: _diskio_limits(ctx.qa, ctx.config))
    bad = over & (task_io > limit)
    return Verdict(
        ~bad,
        "-diskIO",
        lambda idx: [
            f"diskIO per core {a} > limit {lim} kB/s and task diskIO={fmt(task_io)}"
            for a, lim in zip(fmt_many(avg[idx]), fmt_many(limit[idx]), strict=True)
        ],
        temporary=True,
    )


def _diskio_limits(qa: grid.QueueArrays, config: Config) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per queue: running jobs over the diskIO limit, the limit and the average diskIO per core."""
    maxio = qa["maxdiskio"].astype(float, copy=False)
    limit = np.where(maxio > 0, maxio, float(config["MAX_DISKIO_DEFAULT"]))
    avg = qa["diskio_avg"].astype(float, copy=False)
    return avg > limit, limit, avg


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
    maxcc = task.get("maxcorecount")
    over = np.zeros(qa.n, dtype=bool) if not maxcc else (site > maxcc)
    codes = np.where(ok & over, "-max_cpucore", np.where(ok, "", "-cpucore"))

    def reasons(idx: np.ndarray) -> list[str]:
        return [
            f"corecount={cc} > maxCoreCount={maxcc}"
            if code == "-max_cpucore"
            else f"task corecount={task_cc} needs {need}, queue corecount={cc}"
            for cc, code in zip(fmt_many(site[idx]), codes[idx].tolist(), strict=True)
        ]

    return Verdict(ok & ~over, codes, reasons)


def f_cpucore(ctx: ProdContext) -> Verdict | None:
    """Core count matching; any-core tasks at priority >= HIGH_PRIO_MULTICORE (or scouts) need multi-core queues."""
    high = ctx.priority >= int(ctx.config["HIGH_PRIO_MULTICORE"]) or ctx.scout
    t = ctx.task
    key = ("cpucore", int(t.get("corecount") or 0), repr(t.get("maxcorecount")), high, task_resource_type(t))
    return grid.per_config(ctx.snap, ctx.config, key, lambda: core_count_check(ctx.qa, t, high))


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
    codes = np.where(low, "-lowmemory", "-highmemory")

    def reasons(idx: np.ndarray) -> list[str]:
        return [
            f"expected memory {m} MB > maxrss={hi} MB" if is_low else f"expected memory {m} MB < minrss={lo} MB"
            for m, hi, lo, is_low in zip(
                fmt_many(mem[idx]), fmt_many(maxrss[idx]), fmt_many(minrss[idx]), low[idx].tolist(), strict=True
            )
        ]

    return Verdict(~(low | high), codes, reasons)


def f_remoteio(ctx: ProdContext) -> Verdict | None:
    """Skip queues without direct access when the task reads input only by direct access."""
    if ctx.task.get("allowinputlan") != "only":
        return None
    return Verdict(
        _direct_access(ctx.snap), "-remoteio", "the task uses only direct access but the queue does not support it"
    )


def _direct_access(snap: GridSnapshot) -> np.ndarray:
    """Per queue: can its jobs read input by direct access over LAN (built once per snapshot)."""

    def build() -> np.ndarray:
        out = grid.queue_arrays(snap)["direct_access_lan"].astype(bool)
        out.flags.writeable = False
        return out

    return snap.cached("production:direct_access", build)


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
    return np.where(_direct_access(ctx.snap), 0.0, input_mb) + out_mb + float(t.get("workdiskcount") or 0)


def f_scratch(ctx: ProdContext) -> Verdict | None:
    """maxwdir divided by the queue's coreCount must exceed the job's expected disk usage."""
    need = expected_scratch_mb(ctx)
    ctx.derived["scratch"] = need
    unlimited, per_core = grid.per_config(
        ctx.snap, ctx.config, ("scratch", task_resource_type(ctx.task)), lambda: _scratch_per_core(ctx.qa)
    )
    ok = unlimited | (per_core > need)
    return Verdict(
        ok,
        "-disk",
        lambda idx: [
            f"small scratch disk: maxwdir/coreCount={pc} MB <= expected {nd} MB"
            for pc, nd in zip(fmt_many(per_core[idx]), fmt_many(need[idx]), strict=True)
        ],
    )


def _scratch_per_core(qa: grid.QueueArrays) -> tuple[np.ndarray, np.ndarray]:
    """Per queue: no scratch limit (maxwdir <= 0), and maxwdir / coreCount in MB."""
    maxwdir = qa["maxwdir"].astype(float, copy=False)
    cc = np.maximum(qa["corecount"].astype(float, copy=False), 1.0)
    return maxwdir <= 0, maxwdir / cc


def _output_free(ctx: ProdContext) -> np.ndarray:
    out = ctx.qa.out_endpoint
    safe = np.maximum(out, 0)
    free = (ctx.ep["space_free"].astype(float, copy=False) + ctx.ep["space_expired"].astype(float, copy=False))[safe]
    return np.where(out >= 0, free, np.nan)


def f_storage(ctx: ProdContext) -> Verdict | None:
    """DISK size check: free space in the local storage has to be over STORAGE_MIN_FREE_SIZE (200 GB)."""
    return grid.per_config(ctx.snap, ctx.config, "storage", lambda: _storage_verdict(ctx))


def _storage_verdict(ctx: ProdContext) -> Verdict:
    free = _output_free(ctx)
    floor = float(ctx.config["STORAGE_MIN_FREE_SIZE"])
    out, ep_names = ctx.qa.out_endpoint, ctx.ep.name
    return Verdict(
        free > floor,
        "-disk",
        lambda idx: [
            "no output storage endpoint" if o < 0 else f"disk shortage at {ep_names[o]}: {f} GB free <= {fmt(floor)} GB"
            for o, f in zip(out[idx].tolist(), fmt_many(free[idx]), strict=True)
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


_BLACKLIST_TEXTS = {
    "-read_lan_blacklist": "input endpoints cannot read over LAN, read_lan is not ON",
    "-write_lan_blacklist": "output endpoints cannot write over LAN, write_lan is not ON",
    "-write_wan_blacklist": "input endpoints cannot receive files over WAN, write_wan is not ON",
    "-read_wan_blacklist": "output endpoints cannot send out files over WAN, read_wan is not ON",
}  # in the order the checks apply: a queue failing several gets the first one's code


def _blacklist_codes(snap: GridSnapshot) -> dict[bool, tuple[np.ndarray, np.ndarray]]:
    """(passed, code) per queue when every queue is a satellite (True: WAN checked too) or none is (False)."""

    def build() -> dict[bool, tuple[np.ndarray, np.ndarray]]:
        ok = _endpoint_ok(snap)
        out = {}
        for satellite in (False, True):
            good = {
                "-read_lan_blacklist": ok["read_lan"],
                "-write_lan_blacklist": ok["write_lan"],
                "-write_wan_blacklist": ok["write_wan"] | (not satellite),
                "-read_wan_blacklist": ok["read_wan"] | (not satellite),
            }
            codes = np.full(len(ok["read_lan"]), "", dtype=object)
            for code in reversed(_BLACKLIST_TEXTS):  # reverse order so the first failing check wins
                codes = np.where(good[code], codes, code)
            out[satellite] = (codes == "", codes)
        return out

    return snap.cached("production:blacklist_codes", build)


def f_blacklist(ctx: ProdContext) -> Verdict | None:
    """Skip queues whose storage endpoints are blacklisted (detailed status OFF or TEST) for the needed activity."""
    variants = _blacklist_codes(ctx.snap)
    if ctx.nucleus:
        satellite = ~ctx.at_nucleus  # only satellites need the WAN transfers
        (pass_wan, codes_wan), (pass_lan, codes_lan) = variants[True], variants[False]
        passed, codes = np.where(satellite, pass_wan, pass_lan), np.where(satellite, codes_wan, codes_lan)
    else:
        passed, codes = variants[False]
    return Verdict(passed, codes, lambda idx: [_BLACKLIST_TEXTS[c] for c in codes[idx].tolist()])


def f_scout_walltime(ctx: ProdContext) -> Verdict | None:
    """Scout or merge jobs: skip queues whose maxtime is less than 24 hours."""
    if not (ctx.scout or ctx.merge):
        return None
    return grid.per_config(
        ctx.snap, ctx.config, ("scout_walltime", ctx.scout), lambda: _scout_walltime(ctx.qa, ctx.config, ctx.scout)
    )


def _scout_walltime(qa: grid.QueueArrays, config: Config, scout: bool) -> Verdict:
    maxtime = qa["maxtime"].astype(float, copy=False)
    need = float(config["MIN_WALLTIME_SCOUT_MERGE_HOURS"]) * 3600.0
    ok = (maxtime <= 0) | (maxtime >= need)
    code = "-scout_walltime" if scout else "-min_walltime"
    kind = "scout" if scout else "merge"
    return Verdict(
        ok, code, lambda idx: [f"maxtime={m} s < {fmt(need)} s needed by {kind} jobs" for m in fmt_many(maxtime[idx])]
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
    codes = np.where(short, "-shortwalltime", "-longwalltime")

    def reasons(idx: np.ndarray) -> list[str]:
        return [
            f"short walltime: expected {w} s > maxtime={hi} s"
            if is_short
            else f"long walltime needed: expected {w} s < mintime={lo} s"
            for w, hi, lo, is_short in zip(
                fmt_many(wall[idx]), fmt_many(maxtime[idx]), fmt_many(mintime[idx]), short[idx].tolist(), strict=True
            )
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
    return grid.per_config(
        ctx.snap, ctx.config, ("wnconnectivity", want), lambda: _connectivity_verdict(ctx.snap, want)
    )


def _connectivity_verdict(snap: GridSnapshot, want: str) -> Verdict:
    t_conn, t_stack = split_connectivity(want)
    qconn = grid.queue_arrays(snap)["wnconnectivity"]
    distinct, inverse = snap.cached("production:wnconnectivity", lambda: _distinct(qconn))
    ok = np.array(
        [(not t_conn or t_conn in _CONNECTIVITY_ACCEPTS.get(c or "full", set())) and (s == t_stack)
         for c, s in map(split_connectivity, distinct)],
        dtype=bool,
    )[inverse]  # fmt: skip
    return Verdict(
        ok, "-network", lambda idx: [f"wnconnectivity={c!r} cannot take {want!r}" for c in qconn[idx].tolist()]
    )


def _distinct(values: np.ndarray) -> tuple[list[Any], np.ndarray]:
    """Distinct values (first-seen order) and each row's index into them."""
    uniq: dict[Any, int] = {}
    inv = [uniq.setdefault(v, len(uniq)) for v in values.tolist()]
    return list(uniq), np.asarray(inv, dtype=np.intp)


def f_eventservice(ctx: ProdContext) -> Verdict | None:
    """Event service settings: ES tasks need ES queues (eshigh only for high priority), others avoid es-only queues."""
    es_task = bool(ctx.task.get("eventservice"))
    es_high = es_task and (ctx.priority >= int(ctx.config["ES_HIGH_PRIORITY"]) or ctx.scout)
    return grid.per_config(
        ctx.snap, ctx.config, ("eventservice", es_task, es_high), lambda: _es_verdict(ctx, es_task, es_high)
    )


def _es_verdict(ctx: ProdContext, es_task: bool, es_high: bool) -> Verdict:
    seed = ctx.qa["jobseed"]
    if es_task:
        high_prio = int(ctx.config["ES_HIGH_PRIORITY"])
        std = seed == "std"
        high_only = (seed == "eshigh") & (not es_high)
        codes = np.where(std, "-es", "-eshigh")
        texts = np.where(
            std, "event service task on a queue with jobseed=std", f"jobseed=eshigh needs priority >= {high_prio}"
        )
        return Verdict(~(std | high_only), codes, lambda idx: texts[idx].tolist())
    es = seed == "es"
    return Verdict(~es, "-nones", "non event service task on a queue with jobseed=es")


def f_transferring(ctx: ProdContext) -> Verdict | None:
    """Too many transferring jobs: skip if transferring > max(transferring_limit, 2 x running).

    The limit is the queue's (CRIC transferringlimit), so jobs of every share count, not only the task's.
    """
    return grid.per_config(ctx.snap, ctx.config, "transferring", lambda: _transferring_verdict(ctx))


def _transferring_verdict(ctx: ProdContext) -> Verdict:
    lim = ctx.qa["transferringlimit"].astype(float, copy=False)
    lim = np.where(lim > 0, lim, float(ctx.config["DEFAULT_TRANSFERRING_LIMIT"]))
    every_share = grid.job_counts(ctx.snap, None)
    tr = every_share["transferring"]
    run = every_share["running"]
    cap = np.maximum(lim, 2.0 * run)
    return Verdict(
        tr <= cap,
        "-transferring",
        lambda idx: [
            f"too many transferring jobs {t} > max({m}, 2x{r})"
            for t, m, r in zip(fmt_many(tr[idx]), fmt_many(lim[idx]), fmt_many(run[idx]), strict=True)
        ],
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
    key = ("full_chain", ctx.nucleus, bool(ctx.task.get("fullchain")))
    return grid.per_config(ctx.snap, ctx.config, key, lambda: _full_chain_verdict(ctx))


def _full_chain_verdict(ctx: ProdContext) -> Verdict | None:
    site_mode, modes = _bare_modes(ctx.snap)
    nucleus_mode = modes.get(ctx.nucleus or "", "")
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
        lambda idx: [
            f"site={s} is a bareNucleus=only nucleus reserved for full-chain tasks" for s in sites[idx].tolist()
        ],
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
    """Skip queues without pilots for the last NO_PILOT_HOURS (3 h)."""
    return grid.per_config(ctx.snap, ctx.config, "nopilot", lambda: _nopilot_verdict(ctx.qa, ctx.config))


def _nopilot_verdict(qa: grid.QueueArrays, config: Config) -> Verdict:
    hours = float(config["NO_PILOT_HOURS"])
    return Verdict(~grid.without_pilots(qa, hours), "-nopilot", grid.no_pilot_reasons(qa, hours), temporary=True)


def f_network_express(ctx: ProdContext) -> Verdict | None:
    """processingType=urgent or priority >= 1000: network weight must be >= NW_THRESHOLD x NW_WEIGHT_MULTIPLIER."""
    if ctx.nw is None or not ctx.express:
        return None
    thr = float(ctx.config["NW_THRESHOLD"]) * float(ctx.config["NW_WEIGHT_MULTIPLIER"])
    w = ctx.nw.weight
    return grid.per_config(
        ctx.snap,
        ctx.config,
        ("network_express", ctx.nucleus),
        lambda: Verdict(
            w >= thr,
            "-lowNetworkWeight",
            lambda idx: [
                f"network weight {x:.3f} < NW_THRESHOLD x NW_WEIGHT_MULTIPLIER = {thr:.3f}" for x in w[idx].tolist()
            ],
        ),
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
    t1 = t1_weight(ctx)
    return grid.per_config(
        ctx.snap, ctx.config, ("t1", ctx.nucleus, t1), lambda: _frozen(np.where(ctx.at_nucleus, t1, 1.0))
    )


def _frozen(a: np.ndarray) -> np.ndarray:
    """A read-only A (arrays memoised for many tasks must not be changed by one)."""
    a.flags.writeable = False
    return a


@dataclass(frozen=True)
class _Running:
    """The weight terms that depend only on the task's global share (its job counts)."""

    nrunning: np.ndarray
    rule: np.ndarray
    no_assigned: np.ndarray  # zeros
    ones: np.ndarray
    base_local: np.ndarray  # base where assigned jobs are ignored (the input is local everywhere)


def _running_terms(ctx: ProdContext) -> _Running:
    c, cfg = ctx.counts, ctx.config
    nrun, rule = effective_running(
        c["running"],
        ctx.qa["nbatchjob"].astype(float, copy=False),
        ctx.qa["numslots"].astype(float, copy=False),
        c["starting"],
        float(cfg["BOOTSTRAP_NBATCHJOB_CAP"]),
    )
    zeros, ones = np.zeros(ctx.n), np.ones(ctx.n)
    base = _base(nrun, c, zeros, ones, float(cfg["WEIGHT_QUEUE_OFFSET"]))
    return _Running(*(_frozen(a) for a in (nrun, rule, zeros, ones, base)))


def _base(
    nrun: np.ndarray, c: dict[str, np.ndarray], assigned: np.ndarray, many: np.ndarray, offset: float
) -> np.ndarray:
    return (nrun + 1.0) / ((c["activated"] + assigned + c["starting"] + c["defined"] + offset) * many)


def weights(ctx: ProdContext) -> WeightTerms:
    """Step 3: (running+1)/((activated+assigned+starting+defined+10) x manyAssigned) x data x network (x t1)."""
    c, cfg = ctx.counts, ctx.config
    r = grid.per_config(ctx.snap, cfg, ("running", ctx.task.get("gshare")), lambda: _running_terms(ctx))
    nrun = r.nrunning
    total = float(ctx.avail["total_gb"])
    if total > 0:
        # assigned jobs wait for input transfers; they do not count where the input is already local
        assigned = np.where(ctx.avail["avail_gb"] >= total, 0.0, c["assigned"])
        act = c["activated"]
        ratio = np.divide(assigned, act, out=np.where(assigned > 0, np.inf, 0.0), where=act > 0)
        many = np.maximum(1.0, np.minimum(2.0, ratio))
        base = _base(nrun, c, assigned, many, float(cfg["WEIGHT_QUEUE_OFFSET"]))
        data = (ctx.avail["avail_gb"] + total) / (total * (ctx.avail["missing_files"] / 100.0 + 1.0))
    else:  # no input: local everywhere, no assigned job counts
        assigned, many, base, data = r.no_assigned, r.ones, r.base_local, r.ones
    network = ctx.nw.weight if ctx.nw is not None and cfg["NW_ACTIVE"] else r.ones
    t1 = t1_factor(ctx)
    return WeightTerms(nrun, r.rule, assigned, many, base, data, network, t1, base * data * network * t1)


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
    return candidates_factors(terms, np.array([i]), ctx)[0]


_FACTORS = ("base", "data", "network", "t1")


def candidates_factors(
    terms: WeightTerms, rows: np.ndarray, ctx: ProdContext
) -> list[tuple[dict[str, float], dict[str, Any]]]:
    """``candidate_factors`` of every queue in ROWS, read from the arrays in one pass."""
    c, avail, nw = ctx.counts, ctx.avail, ctx.nw

    def floats(a: np.ndarray) -> list[float]:
        return np.asarray(a[rows], dtype=float).tolist()

    factors = [floats(a) for a in (terms.base, terms.data, terms.network, terms.t1)]
    columns: dict[str, list[Any]] = {
        "nRunning": floats(terms.nrunning),
        "nRunning_rule": [str(x) for x in terms.running_rule[rows].tolist()],
        "nActivated": floats(c["activated"]),
        "nAssigned": floats(terms.assigned),
        "nStarting": floats(c["starting"]),
        "nDefined": floats(c["defined"]),
        "manyAssigned": floats(terms.many_assigned),
        "availableGB": floats(avail["avail_gb"]),
        "totalGB": [float(avail["total_gb"])] * len(rows),
        "nMissingFiles": floats(avail["missing_files"]),
    }
    if nw is not None:
        columns.update(
            networkWeight=floats(nw.weight),
            queuedWeight=floats(nw.queued_weight),
            throughputWeight=floats(nw.throughput_weight),
            nQueuedFiles=floats(nw.nqueued),
            network_rule=[str(x) for x in nw.rule[rows].tolist()],
        )
    names = list(columns)
    return [
        (dict(zip(_FACTORS, f, strict=True)), dict(zip(names, d, strict=True)))
        for f, d in zip(zip(*factors, strict=True), zip(*columns.values(), strict=True), strict=True)
    ]


def broker(snap: GridSnapshot, jeditaskid: int, config: Config | None = None) -> Decision:
    """Run the production job brokerage for one task and explain every queue's fate.

    Usage: ``broker(snap, 4242, Config()).to_dict()``
    """
    config = config or Config()
    task = grid.task_row(snap, jeditaskid)
    ctx = make_context(snap, task, config)
    return run(ctx)


def broker_many(snap: GridSnapshot, task_ids: Sequence[int], config: Config | None = None) -> list[Decision]:
    """Production job brokerage of many tasks on one snapshot and config; each decision equals ``broker``'s.

    The tasks share what does not depend on them: task-independent verdicts (status, pilots, storage,
    blacklists, ...) are built once per snapshot and config, verdicts that depend on a few task fields
    (zero share, core count, software, connectivity, ...) once per distinct value, and skips stay masks
    until read. An unknown task id raises KeyError like ``broker``.
    Usage: ``[d.ranked_names for d in broker_many(snap, [4242, 4243], Config())]``
    """
    config = config or Config()
    return [run(make_context(snap, grid.task_row(snap, tid), config)) for tid in task_ids]


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
    changed = dict(grid.per_config(ctx.snap, cfg, "changed", cfg.changed))
    if len(idx) == 0:
        return Decision(
            BROKER, int(ctx.task["jeditaskid"]), "pending", [], skips, funnel, changed,
            pending_minutes=int(cfg["JOB_PENDING_MINUTES"]), message=message or "no candidates",
        )  # fmt: skip
    w = terms.weight[idx]
    order = idx[np.lexsort((ctx.qa.name[idx], -w))]
    top = int(cfg["MAX_SITE_CANDIDATES"])
    chosen, rest = order[:top], order[top:]
    candidates = [
        Candidate(str(name), rank, weight, factors, details)
        for rank, (name, weight, (factors, details)) in enumerate(
            zip(
                ctx.qa.name[chosen].tolist(),
                terms.weight[chosen].tolist(),
                candidates_factors(terms, chosen, ctx),
                strict=True,
            ),
            start=1,
        )
    ]
    if len(rest):
        cutoff = float(terms.weight[chosen[-1]])
        weight = terms.weight

        def low_weight(rows: np.ndarray) -> list[str]:
            return [f"weight={x:.4g} below the best {top} (cut at {cutoff:.4g})" for x in weight[rows].tolist()]

        skips.add(ctx.qa.name, rest, "-low_weight", LazyTexts(low_weight, rest), "best candidates")
        funnel.append(FunnelStep("best candidates", len(order), len(chosen)))
    return Decision(
        BROKER, int(ctx.task["jeditaskid"]), "ok", candidates, skips, funnel, changed, message=message,
    )  # fmt: skip
