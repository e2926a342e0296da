"""PanDA 1.0.4's analysis job brokerage filters, in AtlasAnalJobBroker's order (rule switch ``anal_order_as_jedi``).

Used by ``brokers/analysis.py`` when the rule profile switches them on; each filter follows one block of
AtlasAnalJobBroker.doBrokerage (the line in its docstring). The context is ``analysis_context.AnalContext``; what the
data check finds (queues holding the input, union locality) is kept in ``ctx.derived`` for the later filters.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from brokerage.brokers import analysis_filters as seed_filters
from brokerage.brokers.analysis_context import AnalContext, split_list
from brokerage.brokers.analysis_panda_weights import OVERLOAD_STATES, merge_chunk, pd_isna
from brokerage.brokers.analysis_sites import (
    _site_preassigned,
    f_gpu_architecture,
    f_include,
    f_preassigned,
    preassigned,
)
from brokerage.checks import panda_rules
from brokerage.checks.diskio import DISKIO
from brokerage.checks.memory import MEMORY
from brokerage.checks.panda_data import files_at_endpoints
from brokerage.checks.pilot import NOPILOT
from brokerage.checks.software import SOFTWARE
from brokerage.checks.storage import BLACKLIST, STORAGE, _endpoint_ok
from brokerage.checks.walltime import WALLTIME
from brokerage.framework import Filter, Verdict, apply_filters
from brokerage.model import views
from brokerage.model.explain import FunnelStep, SkipList, fmt
from brokerage.model.profiles import rule
from brokerage.model.pseudoqueues import RESOURCE_TYPES, UNIFIED_CAPABILITY

MIB = 1024.0 * 1024.0
UNIT_BYTES = {"GB": 1024.0**3, "MB": MIB, "kB": 1024.0}
OUTPUT_FREE_GB_DEFAULT = 200  # STORAGE_MIN_FREE_SIZE_OUTPUT when unset
ZERO_WALLTIME_HS06_S = 24 * 60 * 60 * 10  # minTimeForZeroWalltime


def _replica_states(ctx: AnalContext) -> list[dict[str, np.ndarray]]:
    """Per real input dataset, per queue: a complete / incomplete replica at any input endpoint, on disk or any
    storage (the state map of AtlasBrokerUtils.get_sites_with_data), and whether a truly complete disk replica is
    readable anywhere (JEDI's true_complete_disk_ok)."""
    snap, qa, ep = ctx.cache.snap, ctx.qa, ctx.ep
    tid = int(ctx.task["jeditaskid"])
    ds = snap.datasets[(snap.datasets["jeditaskid"] == tid) & (snap.datasets["nfiles"].astype(int) > 0)]
    reps = snap.dataset_replicas[snap.dataset_replicas["jeditaskid"] == tid]
    tape = ep["is_tape"].astype(bool)
    readable = ~np.isin(ep["read_lan"], ("OFF", "TEST")) | ~np.isin(ep["read_wan"], ("OFF", "TEST"))
    out = []
    for d in ds.to_dict("records"):
        total = int(d["nfiles"])
        found = files_at_endpoints(reps, d["datasetid"], ep, total)
        full, part = found >= total, (found > 0) & (found < total)
        state = {}
        rq, re_ = views.input_relations(qa, "user")
        for key, mask in (("complete", full), ("incomplete", part), ("complete_disk", full & ~tape),
                          ("incomplete_disk", part & ~tape)):  # fmt: skip
            hit = mask[re_].astype(float)
            state[key] = np.bincount(rq, weights=hit, minlength=qa.n) > 0
        state["true_disk"] = bool((full & ~tape & readable).any())
        out.append(state)
    return out


def _sites(complete: np.ndarray, incomplete: np.ndarray, non_vp_disk: bool, use_incomplete: bool) -> np.ndarray:
    """AtlasBrokerUtils.getAnalSitesWithDataDisk over masks: complete sites (plus incomplete ones when incomplete
    replicas are allowed and no complete disk replica exists), else the incomplete sites."""
    if complete.any():
        return complete | incomplete if use_incomplete and not non_vp_disk else complete
    return incomplete


def data_sites(ctx: AnalContext) -> tuple[np.ndarray, bool, np.ndarray]:
    """AtlasAnalJobBroker.py:548-640: the queues JEDI's input data check keeps, whether it fell back to the union of
    partial replicas, and each queue's data weight (per dataset 1 on disk, 0.001 elsewhere). A pre-assigned task
    (``anal_site_lists_as_jedi``) keeps the queues holding every dataset when its queue is one, else the union when
    its queue is in it, else none.

    Usage: ``keep, union, weight = data_sites(ctx)``
    """
    prelim = ctx.prelim
    keep = disk = union = disk_union = None
    weight = np.zeros(ctx.n)
    for st in _replica_states(ctx):
        use_inc = not st["true_disk"]  # JEDI's site map holds the candidates only
        full, part, full_disk = st["complete"] & prelim, st["incomplete"] & prelim, st["complete_disk"] & prelim
        anywhere = _sites(full, part, bool(full_disk.any()), use_inc)
        on_disk = _sites(full_disk, st["incomplete_disk"] & prelim, True, use_inc)
        weight += np.where(on_disk, 1.0, np.where(anywhere, 0.001, 0.0))
        keep = anywhere.copy() if keep is None else keep & anywhere
        disk = on_disk.copy() if disk is None else disk & on_disk
        union = anywhere.copy() if union is None else union | anywhere
        disk_union = on_disk.copy() if disk_union is None else disk_union | on_disk
    if keep is None:
        return np.ones(ctx.n, dtype=bool), False, np.ones(ctx.n)
    pre = preassigned(ctx) if rule(ctx.config, "anal_site_lists_as_jedi") else None
    if pre is not None:  # AtlasAnalJobBroker.py:623-628: no disk-only list for a pre-assigned task
        if (keep & pre).any():
            return keep, False, weight
        return (union if (union & pre).any() else np.zeros(ctx.n, dtype=bool)), False, weight
    if disk.any():
        return disk, False, weight
    if not keep.any() and union.any():
        return (disk_union if disk_union.any() else union), True, weight
    return keep, False, weight


def f_data(ctx: AnalContext) -> Verdict | None:
    """AtlasAnalJobBroker.py:548-640: with locality, only queues holding the input (no skip line is logged)."""
    ctx.derived["union"] = False
    ctx.derived["with_data"] = np.zeros(ctx.n, dtype=bool)
    if not ctx.use_locality or ctx.avail["total_files"] <= 0:
        return None
    keep, union, weight = data_sites(ctx)
    ctx.derived["union"] = union
    ctx.derived["with_data"] = keep
    ctx.derived["data_weight"] = weight
    return Verdict(keep, "-input_data", "input data not available at the queue")


def f_status(ctx: AnalContext) -> Verdict:
    """AtlasAnalJobBroker.py:663-682: offline fails; brokeroff and test fail unless the task is pre-assigned."""
    status = ctx.qa["status"]
    bad = status == "offline"
    if not split_list(ctx.task.get("includedsite")):
        off = np.isin(status, ("brokeroff", "test"))
        if (pre := preassigned(ctx)) is not None:
            off &= ~pre
        bad = bad | off
    return Verdict(~bad, "-status", lambda idx: [f"status={s}" for s in status[idx].tolist()])


def f_zeroshare(ctx: AnalContext) -> Verdict | None:
    """AtlasAnalJobBroker.py:688-704: AtlasBrokerUtils.hasZeroShare unless the task is pre-assigned."""
    if _site_preassigned(ctx):
        return None
    prio = int(ctx.task.get("currentpriority") or 0)
    policies = [str(p or "") for p in ctx.qa["fairsharepolicy"]]
    memo: dict[str, bool] = {}
    merge = merge_chunk(ctx)
    zero = np.array([memo.setdefault(p, panda_rules.jedi_zero_share(p, ctx.task, prio, merge)) for p in policies])
    return Verdict(~zero, "-zeroshare", lambda idx: [f"zero share in {policies[i]}" for i in idx.tolist()])


def f_diskio(ctx: AnalContext) -> Verdict | None:
    """AtlasAnalJobBroker.py:712-760: queue diskIO over its limit and the task's (per queue core) over it too."""
    task_io = ctx.task.get("diskio")
    if not task_io:
        return None
    qa = ctx.qa
    default = ctx.config["MAX_DISKIO_DEFAULT"] or 10**10
    limit = np.where(qa["maxdiskio"].astype(float) > 0, qa["maxdiskio"].astype(float), float(default))
    usage = np.nan_to_num(qa["diskio_avg"].astype(float))
    cores = qa["corecount"].astype(float)
    per = np.full(ctx.n, float(task_io))
    if int(ctx.task.get("corecount") or 0) not in (0, 1):
        per = np.where(cores > 0, float(task_io) / np.where(cores > 0, cores, 1.0), per)
    bad = (usage > 0) & (usage > limit) & (per > limit)
    return Verdict(~bad, "-diskIO", lambda idx: [f"diskIO {fmt(usage[i])} > limit {fmt(limit[i])}" for i in idx])


def f_vp(ctx: AnalContext) -> Verdict | None:
    """AtlasAnalJobBroker.py:790-805: avoid VP queues for avoidVP tasks, union locality or no locality check."""
    vp = ctx.qa["is_vp"].astype(bool)
    if not (ctx.task.get("avoidvp") or ctx.derived.get("union") or not ctx.use_locality):
        return None
    return Verdict(~vp, "-avoid_vp", "to avoid VP")


def f_cpucore(ctx: AnalContext) -> Verdict:
    """AtlasAnalJobBroker.py:807-840: corecount > 1 only multi-core queues, 0 any, else queues of 0 or 1 core."""
    site = ctx.qa["corecount"].astype(float)
    task_cc = int(ctx.task.get("corecount") or 0) if ctx.task.get("corecount") is not None else 1
    ok = site > 1 if task_cc > 1 else np.ones(ctx.n, dtype=bool) if task_cc == 0 else site <= 1
    maxcc = ctx.task.get("maxcorecount")
    over = (site > float(maxcc)) if maxcc else np.zeros(ctx.n, dtype=bool)
    codes = np.where(ok, "-max_cpucore", "-cpucore").astype(object)
    return Verdict(ok & ~over, codes, lambda idx: [f"cores_site={fmt(site[i])} cores_task={task_cc}" for i in idx])


def f_closed(ctx: AnalContext) -> Verdict | None:
    """AtlasAnalJobBroker.py:876-893: skip queues with closed jobs of the task (not for pre-assigned tasks)."""
    if _site_preassigned(ctx) or merge_chunk(ctx):
        return None
    closed = ctx.history["closed"]
    return Verdict(closed <= 0, "-closed", lambda idx: [f"n_closed={fmt(closed[i])}" for i in idx])


def f_software(ctx: AnalContext) -> Verdict | None:
    """AtlasAnalJobBroker.py:906-1060: the SW/HW check for every task not pre-assigned (PanDA's AUTO rules)."""
    if _site_preassigned(ctx):
        return None
    return panda_rules.software(SOFTWARE, needs_transhome=False, production=False).fn(ctx)


def f_memory(ctx: AnalContext) -> Verdict | None:
    """AtlasAnalJobBroker.py:1063-1100: int(ramCount [x queue cores for per-core units] x 0.9) within the RSS range."""
    t = ctx.task
    ram = float(t.get("ramcount") or 0)
    if ram == 0 or merge_chunk(ctx):  # a merge chunk's ramCount is 0 and there is no mergeRamCount: not checked
        return None
    cores = ctx.qa["corecount"].astype(float)
    need = (
        np.where(cores > 0, ram * cores, ram)
        if str(t.get("ramunit") or "") in ("MBPerCore", "MBPerCoreFixed")
        else np.full(ctx.n, ram)
    )
    need = np.floor(need * panda_rules.JEDI_MEMORY_COMPENSATION)
    hi, lo = ctx.qa["maxrss"].astype(float), ctx.qa["minrss"].astype(float)
    codes = np.where((hi > 0) & (need > hi), "-lowmemory", np.where((lo > 0) & (need < lo), "-highmemory", ""))
    return Verdict(codes == "", np.where(codes == "", "-lowmemory", codes).astype(object),
                   lambda idx: [f"job's core-scaled requirement {fmt(need[i])} MB vs RSS range" for i in idx])  # fmt: skip


def job_size(ctx: AnalContext) -> tuple[float, float]:
    """The job's (events, input MB): the snapshot's chunk_nevents and chunk_input_mb; under ``anal_job_of_whole_files``
    a job of at least one master file's events is the whole files whose events fit (InputChunk.getSubChunk packs
    whole files while nEventsPerJob allows, InputChunk.getMaxAtomSize), e.g. 104,910 events of 50,000-event files:
    2 files, 100,000 events. Usage: ``events, mb = job_size(ctx)``"""
    t = ctx.task
    events, input_mb = float(t.get("chunk_nevents") or 0), float(t.get("chunk_input_mb") or 0)
    if not rule(ctx.config, "anal_job_of_whole_files"):
        return events, input_mb
    fsize, fev = panda_rules._master_file(ctx)
    if fev <= 0 or events < fev:
        return events, input_mb
    files = events // fev
    return files * fev, files * fsize / MIB


def _size(count: Any, unit: Any) -> float:
    """JediTaskSpec.getOutDiskSize's bytes for COUNT in UNIT (GB/MB/kB prefixes, else bytes)."""
    n = float(count or 0)
    if n < 0:
        return 0.0
    return n * next((b for p, b in UNIT_BYTES.items() if str(unit or "").startswith(p)), 1.0)


def f_scratch(ctx: AnalContext) -> Verdict | None:
    """AtlasAnalJobBroker.py:1103-1175: -remoteio for direct-IO-only tasks; outDisk x effective MB + workDisk +
    300 MiB (+ the input bytes unless read directly) against maxwdir x task cores / queue cores (a unified queue's
    own cores: JEDI checks the unified site, get_unified_sites)."""
    t, qa = ctx.task, ctx.qa
    direct_q = np.asarray(qa["direct_access_lan"], dtype=bool)
    merge = merge_chunk(ctx)
    remote = (t.get("allowinputlan") == "only" and not merge) & ~direct_q
    fsize, fev = panda_rules._master_file(ctx)
    events, input_mb = job_size(ctx)
    # a job never spans a file boundary: the event ranges are cut per file (crosscheck/chunks.py), and a sub-chunk
    # stops before a range that would pass nEventsPerJob (InputChunk.getSubChunk)
    files = 1.0 if not fev else float(np.ceil(events / fev))
    eff_mb = input_mb or 1.0
    base = _size(t.get("outdiskcount"), t.get("outdiskunit")) * eff_mb
    base += float(t.get("workdiskcount") or 0) * MIB + panda_rules.WORK_DISK_MARGIN
    direct = direct_q & bool(t.get("allowinputlan")) & (not merge)
    need = np.where(direct, base // MIB, (base + fsize * files) // MIB)
    if merge:  # one file per merge job: twice its size
        need = np.full(ctx.n, (2 * fsize) // MIB)
    cores = views.queue_arrays(ctx.cache)["corecount"].astype(float)  # JEDI checks the unified site's own cores
    site_cc = np.where(cores > 1, cores, 1.0)
    task_cc = np.where(int(t.get("corecount") or 0) in (0, 1), 1.0, site_cc)
    maxwdir = qa["maxwdir"].astype(float)
    scaled = maxwdir * task_cc / site_cc
    small = (maxwdir > 0) & (need > scaled)
    codes = np.where(remote, "-remoteio", "-disk").astype(object)
    return Verdict(~remote & ~small, codes, lambda idx: [f"scratch {fmt(scaled[i])} < {fmt(need[i])}" for i in idx])


def f_storage(ctx: AnalContext) -> Verdict:
    """AtlasAnalJobBroker.py:1180-1232: output space_usable < STORAGE_MIN_FREE_SIZE_OUTPUT GB (-disk), then the
    endpoint blacklist of AtlasBrokerUtils.check_endpoints_with_blacklist (-blacklist)."""
    out = ctx.qa.out_endpoint_analysis  # select_scope: analysis jobs write the 'analysis' scope where a queue has one
    safe = np.maximum(out, 0)
    ep = ctx.ep
    usable = (ep["space_free"].astype(float) + ep["space_expired"].astype(float))[safe]
    floor = float(OUTPUT_FREE_GB_DEFAULT)  # STORAGE_MIN_FREE_SIZE_OUTPUT: not a key of ours, JEDI falls back to 200
    no_out = out < 0
    short = ~no_out & (usable < floor)
    ok = _endpoint_ok(ctx.cache, analysis=True)
    satellite = ~ctx.derived.get("with_data", np.zeros(ctx.n, dtype=bool))
    black = ~ok["read_lan"] | ~ok["write_lan"] | (satellite & (~ok["write_wan"] | ~ok["read_wan"]))
    bad_space = no_out | short
    codes = np.where(bad_space, "-disk", "-blacklist").astype(object)
    return Verdict(~bad_space & ~black, codes, lambda idx: [
        "output endpoint undefined" if no_out[i] else f"space {fmt(usable[i])} GB" if short[i] else "blacklisted"
        for i in idx])  # fmt: skip


def f_walltime(ctx: AnalContext) -> Verdict | None:
    """AtlasAnalJobBroker.py:1237-1372: cpuTime x events against the scaled maxtime/mintime; scouts and tasks
    without a cpuTime need a scaled maxtime of 24 h x 10 HS06 x cores."""
    t, qa = ctx.task, ctx.qa
    unit = str(t.get("cputimeunit") or "")
    hs06 = unit in ("HS06sPerEvent", "HS06sPerEventFixed", "mHS06sPerEvent", "mHS06sPerEventFixed")
    cpu = (float(t.get("cputime") or 0) / (1000.0 if unit.startswith("m") else 1.0)) if hs06 else 0.0
    need = cpu * job_size(ctx)[0] if hs06 else 0.0
    maxtime, mintime = qa["maxtime"].astype(float), qa["mintime"].astype(float)
    site_max, site_min = panda_rules._scaled(ctx, maxtime, hs06), panda_rules._scaled(ctx, mintime, hs06)
    code = np.full(ctx.n, "", dtype=object)
    if need > 0 and not merge_chunk(ctx):
        code[(maxtime != 0) & (need > site_max)] = "-shortwalltime"
        code[(code == "") & (mintime != 0) & (need < site_min)] = "-longwalltime"
    scout = bool(t.get("is_scout")) and not _site_preassigned(ctx)
    if scout or (hs06 and not cpu) or not unit:
        cores = qa["corecount"].astype(float)
        floor = ZERO_WALLTIME_HS06_S * np.where(cores > 0, cores, 1.0)
        code[(code == "") & (site_max != 0) & (site_max < floor)] = "-scout_walltime" if scout else "-min_walltime"
    return Verdict(code == "", np.where(code == "", "-shortwalltime", code).astype(object),
                   lambda idx: [f"walltime {fmt(need)} vs [{fmt(site_min[i])}, {fmt(site_max[i])}]" for i in idx])  # fmt: skip


def f_pilot(ctx: AnalContext) -> Verdict | None:
    """AtlasAnalJobBroker.py:1376-1395: queues without pilots fail, except for test-label tasks."""
    if str(ctx.task.get("prodsourcelabel") or "") == "test":
        return None
    return NOPILOT.run(ctx)


def overload(ctx: AnalContext) -> tuple[np.ndarray, np.ndarray]:
    """Per queue: overloaded (nQueue > OVERLOAD_MIN_QUEUE and nRunning 0 or nQueue/nRunning > grand ratio x offset)
    in the task's gshare, and the VP variant (-overloaded_vp: a queue holding the data only through VP)."""
    c = ctx.counts
    nq = sum(c[s] for s in OVERLOAD_STATES)
    nr = c["running"]
    tq, tr = float(nq.sum()), float(nr.sum())
    grand = tq / tr if tr > 0 else 0.0
    ratio = np.divide(nq, nr, out=np.full(ctx.n, np.inf), where=nr > 0)
    min_queue, offset = float(ctx.config["OVERLOAD_MIN_QUEUE"]), float(ctx.config["OVERLOAD_RATIO_OFFSET"])
    over = (nq > min_queue) & ((nr == 0) | (ratio > grand * offset))
    return over, nr == 0


def f_overload(ctx: AnalContext) -> Verdict | None:
    """AtlasAnalJobBroker.py:1545-1610: overloaded queues fail unless every remaining queue is overloaded."""
    if merge_chunk(ctx):
        return None
    over, _ = overload(ctx)
    if not (ctx.alive & ~over).any():
        return None
    return Verdict(~over, "-overloaded", "nQueue > minQueue and the queue/running ratio too high")


def _storage_seed(ctx: AnalContext) -> Verdict | None:
    """The seed's storage space check, then its endpoint blacklist check, as one verdict."""
    space, black = STORAGE.run(ctx), BLACKLIST.run(ctx)
    codes = np.where(space.passed, black.criteria, space.criteria).astype(object)
    return Verdict(space.passed & black.passed, codes, "storage space or endpoint blacklist (seed rules)")


def _switched(
    name: str, jedi: Callable[[AnalContext], Verdict | None], seed: Callable[[AnalContext], Verdict | None] | None
) -> Callable[[AnalContext], Verdict | None]:
    """JEDI's check under switch NAME, else the seed's (None: the seed has no such check)."""

    def fn(ctx: AnalContext) -> Verdict | None:
        if rule(ctx.config, name):
            return jedi(ctx)
        return seed(ctx) if seed is not None else None

    fn.__doc__ = jedi.__doc__
    return fn


PANDA_FILTERS: tuple[Filter, ...] = (
    Filter("input data check", ("-input_data",), "only queues holding the input, with the locality check", f_data),
    Filter("status check", ("-status",), "offline fails; brokeroff and test unless pre-assigned",
           _switched("anal_status_as_jedi", f_status, seed_filters.f_status)),
    Filter("zero share check", ("-zeroshare",), "AtlasBrokerUtils.hasZeroShare",
           _switched("anal_zeroshare_check", f_zeroshare, None)),
    Filter("diskIO check", ("-diskIO",), "queue and task diskIO over the limit",
           _switched("anal_diskio_per_core", f_diskio, DISKIO.run)),
    Filter("avoid VP queue check", ("-avoid_vp",), "avoid VP queues", f_vp),
    Filter("CPU core check", ("-cpucore", "-max_cpucore"), "core count match", f_cpucore),
    Filter("architecture check", ("-architecture",), "GPU queues need an AUTO description without 'excl'",
           _switched("anal_gpu_architecture_check", f_gpu_architecture, None)),
    Filter("too many closed check", ("-closed",), "closed jobs of the task at the queue",
           _switched("anal_closed_check", f_closed, None)),
    Filter("SW/HW check", ("-cache",), "release, cache and architecture",
           _switched("anal_software_as_jedi", f_software, SOFTWARE.run)),
    Filter("memory check", ("-lowmemory", "-highmemory"), "core-scaled RAM within the RSS range",
           _switched("anal_memory_as_jedi", f_memory, MEMORY.run)),
    Filter("scratch disk check", ("-remoteio", "-disk"), "direct IO and scratch space",
           _switched("anal_scratch_as_jedi", f_scratch, seed_filters.f_scratch)),
    Filter("storage space check", ("-disk", "-blacklist"), "output space and endpoint blacklist",
           _switched("anal_storage_as_jedi", f_storage, _storage_seed)),
    Filter("walltime check", ("-shortwalltime", "-longwalltime", "-scout_walltime", "-min_walltime"),
           "walltime against the queue's limits", _switched("anal_walltime_as_jedi", f_walltime, WALLTIME.run)),
    Filter("pilot activity check", ("-nopilot",), "queues without pilots", f_pilot),
    Filter("include/exclude check", ("-excluded", "-notincluded"), "excludedSite and includedSite", f_include),
    Filter("preassign check", ("-nonpreassigned",), "only the pre-assigned site", f_preassigned),
    Filter("overload check", ("-overloaded",), "overloaded queues in the task's gshare",
           _switched("anal_overload_as_jedi", f_overload, seed_filters.f_queue_cap)),
)  # fmt: skip
"""AtlasAnalJobBroker's filters in its order (switch ``anal_order_as_jedi``)."""


def replica_flags(ctx: AnalContext) -> tuple[bool, bool]:
    """AtlasBrokerUtils.get_sites_with_data over every input dataset: (each has a (nearly) complete replica readable
    over LAN or WAN, each has one readable over WAN). Usage: ``complete, remote = replica_flags(ctx)``"""
    snap = ctx.cache.snap
    tid = int(ctx.task["jeditaskid"])
    ds = snap.datasets[(snap.datasets["jeditaskid"] == tid) & (snap.datasets["nfiles"].astype(int) > 0)]
    reps = snap.dataset_replicas[snap.dataset_replicas["jeditaskid"] == tid]
    ep = ctx.ep
    index = {str(n): i for i, n in enumerate(ep.name.tolist())}
    down = ("OFF", "TEST")
    max_missing, min_pct = float(ctx.config["MAX_MISSING_INPUT_FILES"]), float(ctx.config["MIN_INPUT_COMPLETENESS"])
    complete_all, remote_all = True, True
    for d in ds.to_dict("records"):
        total = int(d["nfiles"])
        complete = remote = False
        for r in reps[reps["datasetid"] == d["datasetid"]].to_dict("records"):
            found = min(int(r["nfiles"]), total)
            near = found == total or (found > 0 and (total - found <= max_missing or found / total * 100 >= min_pct))
            i = index.get(str(r["ddm_endpoint_name"]))
            if not near or i is None:
                continue
            lan, wan = ep["read_lan"][i] not in down, ep["read_wan"][i] not in down
            complete |= lan or wan
            remote |= wan
        complete_all &= complete
        remote_all &= remote
    return complete_all, remote_all


def second_loop(ctx: AnalContext) -> bool:
    """AtlasAnalJobBroker.py:504-533: a task with input gets a loop without the data check whenever every input
    dataset is readable over WAN (getNumSitesPerJob() is at least 1, so the last condition always holds)."""
    if ctx.avail["total_files"] <= 0:
        return False
    return replica_flags(ctx)[1]


def problematic(ctx: AnalContext, exempt_preassigned: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """AtlasAnalJobBroker.py:1560-1760: queues JEDI marks problematic for the final check (-badsite): nQueue >
    OVERLOAD_MIN_QUEUE with nothing running, the user's long queue (the Analysis Stabilizer), or (nFailed + nClosed)
    > max(2 x nFinished, MIN_BAD_JOBS_TO_SKIP_PQ); none for merge chunks' user and failure parts. Returns (mask,
    reason per queue)."""
    c = ctx.counts
    nq = sum(c[s] for s in OVERLOAD_STATES)
    idle = (nq > float(ctx.config["OVERLOAD_MIN_QUEUE"])) & (c["running"] == 0) & (not merge_chunk(ctx))
    why = np.where(idle, "nQueue > minQueue and nRunning=0", "").astype(object)
    if not merge_chunk(ctx):
        h = ctx.history
        bad = (h["failed"] + h["closed"]) > np.maximum(2 * h["finished"], float(ctx.config["MIN_BAD_JOBS_TO_SKIP_PQ"]))
        why = np.where((why == "") & ctx.stab.throttled, "long queue of the user", why)
        why = np.where((why == "") & bad, "too many failed or closed jobs", why)
    if exempt_preassigned and (pre := preassigned(ctx)) is not None:  # skipProblematicSites keeps it; the
        why = np.where(pre, "", why)  # temp user problem check (AtlasAnalJobBroker.py:1737) does not exempt it
    return why != "", why


STAGE = {f.name: i for i, f in enumerate(PANDA_FILTERS)}


def panda_pass(
    ctx: AnalContext, start: np.ndarray, funnel: list[FunnelStep]
) -> tuple[np.ndarray, SkipList, list[FunnelStep]]:
    """One JEDI loop over every pseudo queue (switch ``anal_unified_any_pseudo``): a unified queue is brokered as each
    of its resource types' pseudo queues and stays while any passes; when all fail, it is named by the pseudo queue
    that got furthest. Usage: ``alive, skips, funnel = panda_pass(ctx, start, [])``"""
    names = ctx.qa.name
    unified = np.asarray(views.queue_arrays(ctx.cache)["capability"]) == UNIFIED_CAPABILITY
    if ctx.view is None or not unified.any() or not rule(ctx.config, "anal_unified_any_pseudo"):
        return apply_filters(names, start, PANDA_FILTERS, ctx, None, funnel)
    # the overload check reads no pseudo-queue column and looks at every queue left: it runs once, after the views
    own = apply_filters(names, start, PANDA_FILTERS[:-1], ctx, None, funnel)
    cores = np.maximum(views.queue_arrays(ctx.cache)["corecount"].astype(float), 1.0)
    best_alive, best_skips = own[0].copy(), {s.candidate: s for s in own[1]}
    reach = _reach(names, own[0], best_skips)
    for rt in RESOURCE_TYPES.values():
        if rt.name == ctx.view:
            continue
        vctx = replace(ctx, qa=views.pseudo_queue_arrays(ctx.cache, rt.name), view=rt.name, derived={})
        exists = ~unified | (cores >= rt.mincore)
        alive, skips, _ = apply_filters(names, start & exists & unified, PANDA_FILTERS[:-1], vctx, None, [])
        by_name = {s.candidate: s for s in skips}
        further = _reach(names, alive, by_name) > reach
        for i in np.flatnonzero(further & unified):
            name = str(names[i])
            reach[i] = STAGE_ALIVE if alive[i] else STAGE[by_name[name].stage]
            best_skips.pop(name, None) if alive[i] else best_skips.__setitem__(name, by_name[name])
        best_alive |= alive & unified
    kept = [s for s in own[1] if best_skips.get(s.candidate) is s]
    kept += [s for n, s in best_skips.items() if s not in kept and not best_alive[ctx.qa.index[n]]]
    return apply_filters(names, best_alive, PANDA_FILTERS[-1:], ctx, SkipList(kept), own[2])


STAGE_ALIVE = len(PANDA_FILTERS)


def _reach(names: np.ndarray, alive: np.ndarray, skips: dict[str, Any]) -> np.ndarray:
    """How far each queue got: STAGE_ALIVE when it passed, else the index of the filter that removed it (-1: never
    a candidate)."""
    out = np.where(alive, STAGE_ALIVE, -1)
    for i, name in enumerate(names.tolist()):
        s = skips.get(str(name))
        if s is not None and not alive[i]:
            out[i] = STAGE.get(s.stage, -1)
    return out


IGNORE_LOCALITY_PRIORITY = 2000  # task_prio_cutoff_for_input_data_motion


def ignores_locality(ctx: AnalContext) -> bool:
    """JEDI's to_ignore_data_loc: taskPriority >= 2000, or ioIntensity at most IO_INTENSITY_CUTOFF_USER (the frozen-
    time timeout DATA_CHECK_TIMEOUT_USER is not a key of ours: unset, as JEDI's default)."""
    t = ctx.task
    if int(t.get("taskpriority") or 0) >= IGNORE_LOCALITY_PRIORITY:
        return True
    cutoff, io = ctx.config["IO_INTENSITY_CUTOFF_USER"], t.get("iointensity")
    return bool(cutoff) and not pd_isna(io) and bool(io) and float(cutoff) >= float(io)
