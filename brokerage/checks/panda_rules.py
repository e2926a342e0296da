"""PanDA 1.0.4's versions of a few production checks, used when the rule profile switches them on.

Each function wraps a seed check and changes only what its switch names (``brokerage/model/profiles.py``), so the
seed checks stay as they are and the ``seed`` profile never reaches this code.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import numpy as np

from brokerage.checks.limits import within_limits
from brokerage.checks.panda_data import MAX_FILES, jedi_local_disk
from brokerage.checks.software import software_verdict
from brokerage.checks.software_container import ALL_QUEUE
from brokerage.checks.software_description import describe, software_index
from brokerage.checks.software_match import RELEASES_ANY, RELEASES_AUTO
from brokerage.checks.software_request import JEDI_ANALYSIS, JEDI_PRODUCTION
from brokerage.framework import Filter, Verdict
from brokerage.model import views
from brokerage.model.architecture import parse_architecture
from brokerage.model.explain import FunnelStep
from brokerage.model.network import link_table
from brokerage.model.profiles import rule

JEDI_NO_AUTO = "without AUTO: only releases=['ANY'] queues pass and only for tasks without a CPU/GPU spec"
JEDI_NO_HW = "with AUTO: the task has a CPU spec (from its architecture) and the queue publishes no cpu architecture"


def _hw_spec(task: dict[str, Any]) -> bool:
    """JEDI's JediTaskSpec.get_host_cpu_spec / get_host_gpu_spec: any architecture with an arch part gives a CPU spec."""
    text = str(task.get("architecture") or "")
    if not text:
        return False
    arch = parse_architecture(text)
    return arch.gpu is not None or arch.cpu is not None


def software(base: Filter, needs_transhome: bool = True, production: bool = True) -> Filter:
    """The release/cache check with JEDI's rules under the switches: no transHome, no check (``sw_check_needs_
    transhome``); explicit release lists fail and ANY fails tasks with a HW spec (``no_auto_queues``); a HW spec
    needs the queue's cpu architecture entry (``hw_spec_needs_cpu_entry``); the JsonSoftwareCheck and cmtconfig
    resolution of the production broker (PRODUCTION, ``sw_check_as_jedi``) or of the analysis broker
    (``anal_sw_check_as_jedi``)."""

    def fn(ctx: Any) -> Verdict | None:
        cfg = ctx.config
        if needs_transhome and rule(cfg, "sw_check_needs_transhome") and not ctx.task.get("transhome"):
            return None
        mode = ""
        if production and rule(cfg, "sw_check_as_jedi"):
            mode = JEDI_PRODUCTION
        elif not production and rule(cfg, "anal_sw_check_as_jedi"):
            mode = JEDI_ANALYSIS
        if mode:
            qa = ctx.qa
            v: Verdict | None = software_verdict(ctx.task, qa.name, qa["releases"], software_index(ctx.cache), mode)
        else:
            v = base.fn(ctx)
        if v is None:
            return v
        extra = np.ones(ctx.n, dtype=bool)
        why = np.full(ctx.n, "", dtype=object)
        hw = _hw_spec(ctx.task)
        releases = ctx.qa["releases"]
        if rule(cfg, "no_auto_queues"):
            for i, rel in enumerate(releases):
                rel = list(rel or [])
                if RELEASES_AUTO not in rel and not (rel == [RELEASES_ANY] and not hw):
                    extra[i], why[i] = False, JEDI_NO_AUTO
        if hw and rule(cfg, "hw_spec_needs_cpu_entry"):
            index = software_index(ctx.cache)
            for i, (name, rel) in enumerate(zip(ctx.qa.name, releases, strict=True)):
                row = index.get(name) if name != ALL_QUEUE else None
                if extra[i] and RELEASES_AUTO in list(rel or []) and row is not None and not describe(row).cpu:
                    extra[i], why[i] = False, JEDI_NO_HW
        if extra.all():
            return v
        passed = v.passed & extra
        base_reasons = v.reasons

        def reasons(idx: np.ndarray) -> list[str]:
            own = base_reasons if isinstance(base_reasons, str) else None
            first = [own] * len(idx) if own is not None else base_reasons(idx)
            return [w or f for w, f in zip(why[idx].tolist(), first, strict=True)]

        crit = v.criteria if isinstance(v.criteria, str) else np.where(extra, v.criteria, "-cache")
        return Verdict(passed, crit, reasons, v.temporary)

    return replace(base, fn=fn, reads=None)


NWORKERS_CUTOFF = 20  # AtlasProdJobBroker nWorkersCutoff
RUNNING_RULES = np.array(["running", "nWorkers bootstrap (UPS)", "numSlots/coreCount", "running+starting (numSlots=0)"],
                         dtype=object)  # fmt: skip


def running(ctx: Any, counts: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """JEDI's nRunning (switch ``running_as_jedi``): Harvester workers replace a low nRunning only at unified (UPS)
    queues with pilots for tasks at priority <= MAX_PRIO_TO_BOOTSTRAP; numSlots is ignored above that priority, 0
    adds the starting jobs, > 0 gives max(int(numSlots / coreCount), nRunning). Returns (nRunning, rule names)."""
    qa, cfg = ctx.qa, ctx.config
    nrun = counts["running"].astype(float).copy()
    which = np.zeros(ctx.n, dtype=np.intp)
    low_prio = ctx.priority <= int(cfg["MAX_PRIO_TO_BOOTSTRAP"])
    pilots = ~views.without_pilots(qa, float(cfg["NO_PILOT_HOURS"]))
    workers = np.minimum(qa["nbatchjob"].astype(float), NWORKERS_CUTOFF)
    ups = qa["capability"] == "ucore"
    boot = pilots & (nrun < NWORKERS_CUTOFF) & (workers > nrun) & ups & low_prio
    nrun = np.where(boot, workers, nrun)
    which[boot] = 1
    slots = qa["numslots"].astype(float)
    if low_prio:
        zero = slots == 0
        nrun = np.where(zero, nrun + counts["starting"], nrun)
        which[zero] = 3
        pos = slots > 0
        per_core = np.floor(slots / np.maximum(qa["corecount"].astype(float), 1.0))
        nrun = np.where(pos, np.maximum(per_core, nrun), nrun)
        which[pos & (per_core > counts["running"])] = 2
    return nrun, RUNNING_RULES[which]


BAD_STATUS = ("OFF", "TEST")  # DOWNTIME_STATUSES of PanDA's endpoint activities


def incomplete_input(ctx: Any) -> str | None:
    """JEDI's input pre-check (switch ``input_completeness_precheck``): every input dataset needs a replica that is
    complete, or nearly so (at most MAX_MISSING_INPUT_FILES missing or at least MIN_INPUT_COMPLETENESS %), at an
    endpoint readable over LAN or WAN; else the whole brokerage fails before any filter. The message, or None."""
    snap, cfg = ctx.cache.snap, ctx.config
    tid = int(ctx.task["jeditaskid"])
    ds = snap.datasets[(snap.datasets["jeditaskid"] == tid) & (snap.datasets["nfiles"] > 0)]
    if ds.empty or ctx.task.get("inputprestaging"):
        return None
    reps = snap.dataset_replicas[snap.dataset_replicas["jeditaskid"] == tid]
    ep = snap.ddm_endpoints.set_index("ddm_endpoint_name")
    readable = {n for n, lan, wan in zip(ep.index, ep["read_lan"], ep["read_wan"], strict=True)
                if lan not in BAD_STATUS or wan not in BAD_STATUS}  # fmt: skip
    max_missing = int(cfg["MAX_MISSING_INPUT_FILES"])
    min_complete = float(cfg["MIN_INPUT_COMPLETENESS"])
    for d in ds.to_dict("records"):
        total = int(d["nfiles"])
        rows = reps[reps["datasetid"] == d["datasetid"]]
        ok = [
            e for e, n in zip(rows["ddm_endpoint_name"], rows["nfiles"], strict=True)
            if e in readable and (total - int(n) <= max_missing or 100.0 * int(n) / total >= min_complete)
        ]  # fmt: skip
        if not ok:
            return f"{d['datasetname']} is incomplete at any online storage"
    return None


# ProcessGroups.processGroups of panda-server 1.0.4 (evgen and simul apart; 'evgensimul' is commented out there)
JEDI_PROCESS_GROUPS = {"evgen": "evgen", "simul": "simul", "reprocessing": "reprocessing", "prod_test": "test",
                       "validation": "test", "mcore": "mcore", "group": "group", "deriv": "deriv", "pile": "pile",
                       "merge": "merge"}  # fmt: skip
_JEDI_PRIO = re.compile(r"^(<=|>=|<|>|==|!=)\s*(-?\d+)$")


def _jedi_match(pattern: str, value: str) -> bool:
    try:
        return re.search(f"^{pattern.replace('*', '.*')}$", value) is not None
    except re.error:
        return False


def jedi_zero_share(policy: str, task: dict[str, Any], priority: int, merge: bool) -> bool:
    """AtlasBrokerUtils.hasZeroShare (switch ``zeroshare_as_jedi``): the first sub-policy whose type (processing
    group), group (working group), gshare and priority all match decides; no match allows the queue."""
    group = JEDI_PROCESS_GROUPS.get(str(task.get("processingtype") or ""), "others")
    if not policy or group == "test":
        return False
    for sub in policy.split(","):
        fields = sub.split(":")
        share = fields[-1]
        ok = True
        for f in fields:
            if f.startswith("type=") and f[5:] not in ("any",):
                ok = ok and _jedi_match(f[5:], group)
            elif f.startswith("group=") and f[6:] not in ("any",):
                ok = ok and _jedi_match(f[6:], str(task.get("workinggroup") or ""))
            elif f.startswith("gshare=") and f[7:] not in ("any",) and task.get("gshare") is not None:
                ok = ok and _jedi_match(f[7:], str(task.get("gshare") or ""))
            elif f.startswith("priority") and not merge and (m := _JEDI_PRIO.match(f[8:].strip())):
                n = int(m.group(2))
                ok = ok and {"<": priority < n, ">": priority > n, "<=": priority <= n, ">=": priority >= n,
                             "==": priority == n, "!=": priority != n}[m.group(1)]  # fmt: skip
        if ok:
            return share in ("0", "0%")
    return False


def zeroshare(base: Filter) -> Filter:
    """The zero share check as JEDI codes it (switch ``zeroshare_as_jedi``)."""

    def fn(ctx: Any) -> Verdict | None:
        if not rule(ctx.config, "zeroshare_as_jedi"):
            return base.run(ctx)
        policies = [str(p or "") for p in ctx.qa["fairsharepolicy"]]
        memo: dict[str, bool] = {}
        zero = np.array([memo.setdefault(p, jedi_zero_share(p, ctx.task, ctx.priority, ctx.merge)) for p in policies])
        return Verdict(~zero, "-zeroshare", lambda idx: [f"zero share in {policies[i]}" for i in idx.tolist()])

    return replace(base, fn=fn, reads=None)


BLOCKED_LINK = -1.0


def _link_chain(ctx: Any) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """JEDI's link check per queue (first matching condition): (blocked, temporary code or '', messages)."""
    nucleus, cfg, qa = ctx.nucleus, ctx.config, ctx.qa
    links = link_table(ctx.cache, nucleus)
    row = links.lookup(qa["atlas_site"])
    total = links.total_queued_express if ctx.express else links.total_queued
    queued_all = links.queued_express if ctx.express else links.queued
    ep = ctx.cache.snap.ddm_endpoints
    bad = ep["write_wan"].isin(BAD_STATUS) & (ep["site_name"] == nucleus) & (ep["type"] == "DATADISK")
    unwritable = bool(bad.any())
    blocked = np.zeros(ctx.n, dtype=bool)
    temp = np.full(ctx.n, "", dtype=object)
    msgs = [""] * ctx.n
    has_output = qa.out_endpoint >= 0
    for i in range(ctx.n):
        if not has_output[i] or qa["atlas_site"][i] == nucleus:
            continue
        if unwritable:
            temp[i], msgs[i] = "-dest_blacklisted", f"nucleus={nucleus} unwritable over WAN"
        elif total >= float(cfg["NQUEUED_NUC_CAP_FOR_JOBS"]):
            temp[i], msgs[i] = "-links_full", f"too many output files being transferred to the nucleus {total}"
        elif row[i] < 0:
            continue
        elif links.closeness[row[i]] == BLOCKED_LINK:
            blocked[i], msgs[i] = True, f"agis_closeness=-1 from satellite={qa['atlas_site'][i]} to nucleus={nucleus}"
        elif queued_all[row[i]] >= float(cfg["NQUEUED_SAT_CAP"]):
            temp[i], msgs[i] = "-link_unusable", f"too many output files queued in the channel {queued_all[row[i]]}"
    return blocked, temp, msgs


def links(base: Filter) -> Filter:
    """JEDI's one link check (switch ``links_as_jedi``): an unwritable nucleus (-dest_blacklisted, temporary) or a
    full nucleus (-links_full, temporary) stops the chain before the closeness test; a blocked link (-link_unusable)
    removes the queue; a long link queue (>= NQUEUED_SAT_CAP) is temporary. Replaces the three seed link filters."""

    def fn(ctx: Any) -> Verdict | None:
        if not rule(ctx.config, "links_as_jedi"):
            return base.run(ctx)
        if ctx.nucleus is None:
            return None
        blocked, _temp, msgs = _link_chain(ctx)
        return Verdict(~blocked, "-link_unusable", lambda idx: [msgs[i] for i in idx.tolist()])

    return replace(base, fn=fn, reads=None)


def links_temporary(base: Filter) -> Filter:
    """The temporary half of JEDI's link check (see ``links``)."""

    def fn(ctx: Any) -> Verdict | None:
        if not rule(ctx.config, "links_as_jedi"):
            return base.run(ctx)
        if ctx.nucleus is None:
            return None
        _blocked, temp, msgs = _link_chain(ctx)
        crit = np.where(temp == "", "-link_unusable", temp)
        return Verdict(temp == "", crit, lambda idx: [msgs[i] for i in idx.tolist()], temporary=True)

    return replace(base, fn=fn, reads=None)


def dropped_by(switch: str) -> Any:
    """A seed filter that switch SWITCH replaces by another one (it then gives no verdict)."""

    def wrap(base: Filter) -> Filter:
        def fn(ctx: Any) -> Verdict | None:
            return None if rule(ctx.config, switch) else base.run(ctx)

        return replace(base, fn=fn, reads=None)

    return wrap


dropped = dropped_by("links_as_jedi")


def task_failure(ctx: Any) -> str | None:
    """Why PanDA's job broker fails the whole task before any filter, under the switches that model it: an
    unknown nucleus (``nucleus_needs_production_queue``: SiteMapper knows a nucleus only through a production or
    unified queue of its site), an incomplete input (``input_completeness_precheck``). None when it goes on."""
    cfg = ctx.config
    if ctx.nucleus and rule(cfg, "nucleus_needs_production_queue"):
        prod = np.isin(views.queue_arrays(ctx.cache)["type"], PRODUCTION_TYPES)
        if not (prod & ctx.at_nucleus).any():
            return f"unknown nucleus {ctx.nucleus}"
    if rule(cfg, "input_completeness_precheck"):
        return incomplete_input(ctx)
    return None


PRODUCTION_TYPES = ("production", "unified")


JEDI_MEMORY_COMPENSATION = 0.9  # JobUtils.MEMORY_COMPENSATION


def memory(base: Filter) -> Filter:
    """JEDI's memory check (switch ``memory_as_jedi``): ramCount x the queue's coreCount + baseRamCount for per-core
    units, ramCount alone for MB, int(x 0.9); merge jobs (no mergeRamCount in the snapshot) are not checked."""

    def fn(ctx: Any) -> Verdict | None:
        if not rule(ctx.config, "memory_as_jedi"):
            return base.run(ctx)
        t = ctx.task
        ram = float(t.get("ramcount") or 0)
        if ctx.merge or ram == 0:
            return None
        if str(t.get("ramunit") or "") in ("MBPerCore", "MBPerCoreFixed"):
            cores = ctx.qa["corecount"].astype(float)
            need = np.where(cores > 0, ram * cores, ram) + float(t.get("baseramcount") or 0)
        else:
            need = np.full(ctx.n, ram)
        need = np.floor(need * JEDI_MEMORY_COMPENSATION)
        return within_limits(
            need, ctx.qa, ("minrss", "maxrss"),
            ("-lowmemory", lambda m, hi: f"job's core-scaled requirement {m} MB > maxrss={hi} MB"),
            ("-highmemory", lambda m, lo: f"job's core-scaled requirement {m} MB < minrss={lo} MB"),
        )  # fmt: skip

    return replace(base, fn=fn, reads=None)


CAP_FACTOR = 2  # AtlasProdJobBroker cutOffFactor and RT_Cap
CAP_FLOOR_DEFAULT = 20  # NQUEUELIMITSITE_<gshare> when unset or 0


def _rt_counts(ctx: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Jobs of the task's gshare and resource type per queue: (has rows, running, queued without assigned), assigned."""
    jc = ctx.cache.snap.job_counts
    jc = jc[(jc["gshare"] == ctx.task.get("gshare")) & (jc["resource_type"] == ctx.task.get("resource_type"))
            & (jc["vo"] == views.task_vo(ctx.task))]  # fmt: skip
    has = np.zeros(ctx.n, dtype=bool)
    per = {s: np.zeros(ctx.n) for s in ("running", "defined", "activated", "starting", "assigned")}
    for q, s, n in zip(jc["panda_queue"], jc["jobstatus"], jc["njobs"], strict=True):
        i = ctx.qa.index.get(q)
        if i is not None:
            has[i] = True
            if s in per:
                per[s][i] += n
    return has, per["running"], np.vstack([per["defined"] + per["activated"] + per["starting"], per["assigned"]])


def _non_local(ctx: Any) -> np.ndarray:
    """JEDI's skipRemoteData (switch ``non_local_check``): a queue whose catchall holds use_only_local_data fails
    when the task has input and any of it (a MB or a file) is not on the queue's disk."""
    local = jedi_local_disk(ctx)
    if local["total_gb"] <= 0:
        return np.zeros(ctx.n, dtype=bool)
    mb = np.floor((local["total_gb"] - local["disk_gb"]) * 1024.0)
    files = local["total_files"] - local["disk_files"]
    only_local = np.array(
        [any(i.startswith("use_only_local_data") for i in str(c or "").split(",")) for c in ctx.qa["catchall"]],
        dtype=bool,
    )
    return only_local & ((mb > 0) | (files > 0))


def final_stage(
    ctx: Any, terms: Any, alive: np.ndarray, skips: Any, funnel: list[Any]
) -> tuple[np.ndarray, np.ndarray]:
    """JEDI's weight-stage classification (switch ``final_stage_as_jedi``), in its order: the queue cap
    activated+starting(+assigned when input moves) > max(NQUEUELIMITSITE_<gshare>, 2 nRunning) for non-unified
    queues (-cap), the express network threshold (-lowNetworkWeight), the resource-type cap (-cap_rt, here -cap),
    then bootstrap: a queue with no job at all gets weight 0 for priority <= MAX_PRIO_TO_BOOTSTRAP (not merge, not
    express). Returns (survivors, weights)."""
    cfg, c, qa = ctx.config, ctx.counts, ctx.qa
    floor = float(cfg[f"NQUEUELIMITSITE_{ctx.task.get('gshare')}"] or 0) or CAP_FLOOR_DEFAULT
    nrun = terms.nrunning
    moves = terms.assigned > 0  # assigned jobs count only where the input must move
    here, total = ctx.avail["avail_gb"], float(ctx.avail["total_gb"])
    if rule(cfg, "data_weight_as_jedi"):  # JEDI's useAssigned reads the same local disk sizes as its data weight
        local = jedi_local_disk(ctx)
        here, total = local["disk_gb"], local["total_gb"]
    use_assigned = np.where(moves | (here < total), 1.0, 0.0)
    ucore = qa["capability"] == "ucore"
    queued = c["activated"] + c["starting"] + use_assigned * c["assigned"]
    over = ~ucore & (queued > np.maximum(floor, CAP_FACTOR * nrun)) & (not ctx.express)
    low_nw = np.zeros(ctx.n, dtype=bool)
    if ctx.nw is not None and cfg["NW_ACTIVE"] and ctx.express:
        low_nw = ctx.nw.weight < float(cfg["NW_THRESHOLD"]) * float(cfg["NW_WEIGHT_MULTIPLIER"])
    has_rt, run_rt, q_rt = _rt_counts(ctx)
    queued_rt = q_rt[0] + use_assigned * q_rt[1]
    over_rt = has_rt & (queued_rt > np.maximum(floor, CAP_FACTOR * np.maximum(run_rt, nrun))) & (not ctx.express)
    code = np.where(over, "-cap", np.where(low_nw, "-lowNetworkWeight", np.where(over_rt, "-cap", "")))
    if rule(cfg, "non_local_check"):
        code = np.where(_non_local(ctx), "-non_local", code)
    gone = alive & (code != "")
    idx = np.flatnonzero(gone)
    if len(idx):
        why = {"-cap": "queued jobs over max(NQUEUELIMITSITE, 2 x nRunning)", "-lowNetworkWeight": "low network weight",
               "-non_local": "non-local data: catchall use_only_local_data and input to move"}  # fmt: skip
        skips.add(qa.name, idx, code[idx], [why[k] for k in code[idx].tolist()], "final check", False)
    left = alive & ~gone
    funnel.append(FunnelStep("final check", int(alive.sum()), int(left.sum())))
    none = (nrun + c["activated"] + c["assigned"] + c["starting"] + c["defined"]) == 0
    boot = none & (ctx.priority <= int(cfg["MAX_PRIO_TO_BOOTSTRAP"])) & (not ctx.merge) & (not ctx.express)
    return left, np.where(boot, 0.0, terms.weight)


ZERO_WALLTIME_HS06_S = 24 * 3600 * 10  # minTimeForZeroWalltime: 24 h at 10 HS06 per core
ES_MAX_ATTEMPTS = 3  # EventServiceUtils.defMaxAttemptEsJob: an event service job's walltime is shared over attempts


def _job_events(ctx: Any) -> float:
    """nEventsPerJob as JEDI's walltime check reads it (InputChunk.getMaxAtomSize): the events of its largest
    sub-chunk, whole master files up to chunk_nevents (floor(chunk_nevents / file events) files, at least one) when a
    file holds fewer events than a job, else chunk_nevents (a file cut into event ranges of one job); a merge job is
    one file (no nFilesPerMergeJob nor nEventsPerMergeJob in the snapshot)."""
    events = float(ctx.task.get("chunk_nevents") or 0)
    _fsize, fev = _master_file(ctx)
    if ctx.merge and fev:
        return fev
    if not fev or fev >= events:
        return events
    return max(1.0, float(events // fev)) * fev


def _scaled(ctx: Any, seconds: np.ndarray, hs06: bool) -> np.ndarray:
    """A queue time limit as JEDI scales it: (t - baseWalltime) x coreCount [x corepower x cpuEfficiency, int]."""
    t = ctx.task
    cores = ctx.qa["corecount"].astype(float)
    out = seconds - (float(t.get("basewalltime") or 0) if hs06 else 0.0)
    out = np.where((out != 0) & (cores > 0), out * cores, out)
    if hs06:
        out = np.where(out != 0, out * ctx.qa["corepower"].astype(float), out)
        out = np.floor(out * float(t.get("cpuefficiency") or 0) / 100.0)
    return out


def walltime(base: Filter) -> Filter:
    """JEDI's walltime check in one pass (switch ``walltime_as_jedi``), replacing the seed's scout and walltime
    filters: cpuTime x events (HS06 units) above the scaled maxtime (-shortwalltime); scouts, merges and tasks
    without a walltime estimate need a scaled maxtime of 24 h x 10 HS06 x cores (-scout_walltime, -min_walltime);
    a job below the scaled mintime, or without an estimate at a queue with a mintime (-longwalltime)."""

    def fn(ctx: Any) -> Verdict | None:
        if not rule(ctx.config, "walltime_as_jedi"):
            return base.run(ctx)
        t, qa = ctx.task, ctx.qa
        unit = str(t.get("cputimeunit") or "")
        hs06 = unit in ("HS06sPerEvent", "HS06sPerEventFixed", "mHS06sPerEvent", "mHS06sPerEventFixed")
        cpu = float(t.get("cputime") or 0) / (1000.0 if unit.startswith("m") else 1.0) if hs06 else 0.0
        need = cpu * _job_events(ctx) if hs06 and cpu else None
        if need and t.get("eventservice"):  # / nEsConsumers (1: no such field) x maxAttemptEsJob (JEDI's default)
            need /= ES_MAX_ATTEMPTS
        maxtime, mintime = qa["maxtime"].astype(float), qa["mintime"].astype(float)
        site_max, site_min = _scaled(ctx, maxtime, hs06), _scaled(ctx, mintime, hs06)
        code = np.full(ctx.n, "", dtype=object)
        if need:
            code[(maxtime != 0) & (need > site_max)] = "-shortwalltime"
        if (ctx.scout and not ctx.preassigned) or ctx.merge or not unit or (hs06 and not cpu):
            cores = qa["corecount"].astype(float)
            floor = ZERO_WALLTIME_HS06_S * np.where(cores > 0, cores, 1.0)
            short = (code == "") & (site_max != 0) & (site_max < floor)
            code[short] = "-scout_walltime" if ctx.scout else "-min_walltime"
        low = (mintime != 0) & ((need is None) or (need < site_min))
        code[(code == "") & low] = "-longwalltime"
        shown = need if need is not None else "None"
        return Verdict(code == "", np.where(code == "", "-shortwalltime", code).astype(object),
                       lambda idx: [f"job walltime {shown} against site limits [{site_min[i]:g}, {site_max[i]:g}]"
                                    for i in idx.tolist()])  # fmt: skip

    return replace(base, fn=fn, reads=None)


def nopilot(base: Filter) -> Filter:
    """JEDI's pilot check (switch ``nopilot_as_jedi``): a queue with numSlots defined never fails it, nor does any
    queue for a test-label task (unless express) or a pre-assigned task."""

    def fn(ctx: Any) -> Verdict | None:
        v = base.run(ctx)
        if v is None or not rule(ctx.config, "nopilot_as_jedi"):
            return v
        if ctx.preassigned or ("test" in str(ctx.task.get("prodsourcelabel") or "") and not ctx.express):
            return None
        slots = ~np.isnan(ctx.qa["numslots"].astype(float))
        return Verdict(v.passed | slots, v.criteria, v.reasons, v.temporary)

    return replace(base, fn=fn, reads=None)


def _jumbo_queue(catchall: Any) -> bool:
    return any(re.search("^useJumboJobs(=|)*", item) for item in str(catchall or "").split(","))


def f_jumbo(ctx: Any) -> Verdict | None:
    """JEDI's jumbo job check (switch ``jumbo_check``): a task without jumbo jobs (none in the snapshot) skips queues
    whose catchall holds useJumboJobs (-jumbo); pre-assigned tasks are not checked."""
    if not rule(ctx.config, "jumbo_check") or ctx.preassigned:
        return None
    jumbo = np.array([_jumbo_queue(c) for c in ctx.qa["catchall"]], dtype=bool)
    return Verdict(~jumbo, "-jumbo", "since it is only for jumbo jobs (catchall useJumboJobs)")


JUMBO = Filter("jumbo job check", ("-jumbo",), "a task without jumbo jobs avoids queues only for jumbo jobs", f_jumbo)


MIB = 1024.0 * 1024.0
DEFAULT_OUTPUT_BYTES = 1500 * MIB  # InputChunk.defaultOutputSize
WORK_DISK_MARGIN = 300 * MIB  # JediTaskSpec.getWorkDiskSize safety margin


def _master_file(ctx: Any) -> tuple[float, float]:
    """(bytes, events) of one file of the task's master dataset, as the crosscheck's converter splits it: the
    snapshot holds a dataset in aggregate, described as at most MAX_FILES equal files (the data weight reads the same
    description, ``panda_data.jedi_local_disk``)."""
    snap = ctx.cache.snap
    ds = snap.datasets[(snap.datasets["jeditaskid"] == int(ctx.task["jeditaskid"])) & snap.datasets["is_master"]]
    if ds.empty or int(ds["nfiles"].iloc[0]) == 0:
        return 0.0, 0.0
    n = max(1, min(int(ds["nfiles"].iloc[0]), MAX_FILES))
    return float(int(float(ds["size_gb"].iloc[0]) * 1024**3 / n)), float(float(ds["nevents"].iloc[0]) // n)


def scratch(base: Filter) -> Filter:
    """JEDI's scratch disk check (switch ``scratch_as_jedi``): max(outDisk x events (or x effective input MB),
    1.5 GiB) + workDisk + 300 MiB, plus the whole input files for copy-to-scratch queues, against maxwdir x task
    cores / queue cores (a single-core task: maxwdir / queue cores; a unified queue's own cores, as JEDI checks the
    unified site, AtlasProdJobBroker.py:943-965)."""

    def fn(ctx: Any) -> Verdict | None:
        if not rule(ctx.config, "scratch_as_jedi"):
            return base.run(ctx)
        t, qa = ctx.task, ctx.qa
        fsize, fev = _master_file(ctx)
        if ctx.merge:  # a merge job takes one file (no nFilesPerMergeJob in the snapshot)
            events, effective_mb, files = fev, fsize / MIB, 1.0
        else:
            events = float(t.get("chunk_nevents") or 0)
            effective_mb = float(t.get("chunk_input_mb") or 0)
            # the converter cuts a file into event ranges of one job (crosscheck/chunks.py): a job never spans a file
            # boundary, so its largest sub-chunk touches ceil(events / file events) files
            files = 1.0 if not fev else float(np.ceil(events / fev))
            if fev and fev < events:  # files smaller than a job: the sub-chunk is whole files up to the job's events
                events = _job_events(ctx)
                files = events / fev
                effective_mb = files * fsize / MIB
        effective_mb = effective_mb or 1.0  # CoreUtils.getEffectiveFileSize: in MB, 1 MB for pseudo input
        out_unit = str(t.get("outdiskunit") or "")
        out = float(t.get("outdiskcount") or 0) * 1024.0 * (events if "PerEvent" in out_unit else effective_mb)
        need = max(out, DEFAULT_OUTPUT_BYTES) + float(t.get("workdiskcount") or 0) * MIB + WORK_DISK_MARGIN
        direct = np.asarray(qa["direct_access_lan"], dtype=bool) & bool(t.get("allowinputlan")) & (not ctx.merge)
        need_mb = np.where(direct, need // MIB, (need + fsize * files) // MIB)
        cores = views.queue_arrays(ctx.cache)["corecount"].astype(
            float
        )  # a unified queue's own, not its pseudo queue's
        site_cc = np.where(cores > 1, cores, 1.0)
        single = int(t.get("corecount") or 0) in (0, 1) and not t.get("eventservice")
        scaled = qa["maxwdir"].astype(float) * (1.0 if single else site_cc) / site_cc
        ok = (qa["maxwdir"].astype(float) == 0) | ~(need_mb > scaled)
        return Verdict(ok, "-disk", lambda idx: [f"small scratch disk {scaled[i]:g} MB less than {need_mb[i]:g} MB"
                                                 for i in idx.tolist()])  # fmt: skip

    return replace(base, fn=fn, reads=None)


JEDI_CONNECTIVITY = ("full", "http")  # task_split_rules.enum_ipConnectivity: 'none' is not a value JEDI stores


def connectivity(base: Filter) -> Filter:
    """JEDI's network check (switch ``connectivity_as_jedi``): a task connectivity full/http needs a 'full' queue,
    or 'http' for http; a task IP stack must equal the queue's; a task without a stack (or with connectivity 'none',
    which JEDI cannot store) is not checked on that part; pre-assigned tasks are not checked."""

    def fn(ctx: Any) -> Verdict | None:
        if not rule(ctx.config, "connectivity_as_jedi"):
            return base.run(ctx)
        conn, _, stack = str(ctx.task.get("ipconnectivity") or "").partition("#")
        conn = conn if conn in JEDI_CONNECTIVITY else ""
        if ctx.preassigned or not (conn or stack):
            return None
        parts = [str(w or "").partition("#") for w in ctx.qa["wnconnectivity"]]
        ok_conn = np.array([not conn or (c or None) == "full" or (c == "http" and conn == "http") for c, _, _ in parts])
        ok_stack = np.array([not stack or stack == (s or None) for _, _, s in parts])
        return Verdict(ok_conn & ok_stack, "-network", lambda idx: [
            f"connectivity or IP stack of wnconnectivity={ctx.qa['wnconnectivity'][i]!r} vs task={conn}#{stack}"
            for i in idx.tolist()])  # fmt: skip

    return replace(base, fn=fn, reads=None)
