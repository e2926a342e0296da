"""The nucleus brokerage's filters (seed 000 step 2, the job check of seed 003, the full-chain rules)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from brokerage.brokers import nucleus_panda
from brokerage.brokers.nucleus_context import (
    ACTIVE,
    GB_PER_TB,
    OUTPUT_ENDPOINT_TYPE,
    RW_UNIT,
    NucleusContext,
    disk_threshold,
    projected_output_gb,
)
from brokerage.checks import production_queues
from brokerage.checks.context import ProdContext
from brokerage.framework import Filter, Reads, Verdict, keys_of
from brokerage.model.explain import Skip, fmt
from brokerage.model.profiles import rule

BARE_MODES = ("only", "allow")  # catchall bareNucleus=only|allow
JOB_REASON_LIMIT = 6  # queue names listed per filter in a -job sentence


def f_status(ctx: NucleusContext) -> Verdict | None:
    """Nuclei must be in the ACTIVE status (not checked under ``nucleus_state_always_active``: JEDI reads every
    site as ACTIVE)."""
    if rule(ctx.config, "nucleus_state_always_active"):
        return None
    state = ctx.na.state
    return Verdict(state == ACTIVE, "-status", lambda idx: [f"status={state[i]} is not {ACTIVE}" for i in idx])


def f_transfer_backlog(ctx: NucleusContext) -> Verdict | None:
    """Skip nuclei with long transfer backlogs (> NQUEUED_NUC_CAP files queued) unless the task's t1Weight < 0."""
    t1 = ctx.task.get("t1weight")
    if t1 is not None and t1 < 0:
        return None
    cap = ctx.config["NQUEUED_NUC_CAP"]
    q = ctx.na.backlog
    return Verdict(
        q <= cap,
        "-transfer_backlog",
        lambda idx: [
            f"long transfer backlog: {fmt(q[i])} files queued to the nucleus > NQUEUED_NUC_CAP={cap}" for i in idx
        ],
        temporary=True,
    )


def f_match(ctx: NucleusContext) -> Verdict:
    """Nuclei must have associated storages (an output endpoint of type DATADISK)."""
    return Verdict(
        ctx.na.endpoint != "", "-match", f"no {OUTPUT_ENDPOINT_TYPE} endpoint is associated with the nucleus"
    )


def f_space(ctx: NucleusContext) -> Verdict:
    """spaceFree + spaceExpired − normalizedExpOutSize × RW must exceed DISK_THRESHOLD(_<gshare>)."""
    na = ctx.na
    demand = projected_output_gb(ctx.rw_days, ctx.config)
    left = na.space_free + na.space_expired - demand
    key, thr_tb = disk_threshold(ctx.config, ctx.task.get("gshare"))
    thr = thr_tb * GB_PER_TB
    ok = np.nan_to_num(left, nan=-np.inf) > thr
    rw = ctx.rw_days
    return Verdict(
        ok,
        "-space",
        lambda idx: [
            f"disk shortage at {na.endpoint[i]}: free {fmt(na.space_free[i])} GB + expired {fmt(na.space_expired[i])} GB"
            f" − projected output {fmt(demand[i])} GB (RW={fmt(rw[i])} {RW_UNIT}) = {fmt(left[i] / GB_PER_TB)} TB"
            f" <= {key}={fmt(thr_tb)} TB"
            for i in idx
        ],
    )


def _locality_off_reason(ctx: NucleusContext) -> str | None:
    """Why the data locality check may be dropped when no nucleus passes it (None: it may not)."""
    cfg, t = ctx.config, ctx.task
    io = t.get("iointensity")
    io_v = 0.0 if io is None else float(io)
    total = ctx.inputs.total_gb
    max_prio = cfg["MAX_TASK_PRIO_WITH_LOCAL_DATA"]
    prio = int(t.get("taskpriority") or 0)
    reasons = []
    if io_v <= cfg["MIN_IO_INTENSITY_WITH_LOCAL_DATA"] and total <= cfg["MIN_INPUT_SIZE_WITH_LOCAL_DATA"]:
        reasons.append(
            f"ioIntensity={'unset' if io is None else fmt(io_v)} <= MIN_IO_INTENSITY_WITH_LOCAL_DATA="
            f"{cfg['MIN_IO_INTENSITY_WITH_LOCAL_DATA']} and total input {fmt(total)} GB <= "
            f"MIN_INPUT_SIZE_WITH_LOCAL_DATA={cfg['MIN_INPUT_SIZE_WITH_LOCAL_DATA']} GB"
        )
    if prio >= max_prio:
        reasons.append(f"taskPriority={prio} >= MAX_TASK_PRIO_WITH_LOCAL_DATA={max_prio}")
    return " or ".join(reasons) if reasons else None


def locality_verdict(ctx: NucleusContext) -> tuple[np.ndarray, np.ndarray]:
    """Per nucleus: does it pass the data locality rules, and which code fails it ('' when it passes)."""
    cfg, inp = ctx.config, ctx.inputs
    size_frac = cfg["INPUT_SIZE_FRACTION"] / 100.0
    num_frac = cfg["INPUT_NUM_FRACTION"] / 100.0
    prestaged = bool(ctx.task.get("inputprestaging")) & ((inp.local_files > 0) | (inp.local_gb > 0))
    codes = np.full(ctx.n, "", dtype=object)
    if inp.total_gb > cfg["INPUT_SIZE_THRESHOLD"]:
        codes = np.where(inp.local_gb / inp.total_gb > size_frac, codes, "-insize")
    if inp.total_files > cfg["INPUT_NUM_THRESHOLD"]:
        short = ~(inp.local_files / inp.total_files > num_frac)
        codes = np.where((codes == "") & short, "-innum", codes)
    codes = np.where(prestaged, "", codes)
    return codes == "", codes


def frozen_past_period(ctx: NucleusContext) -> str | None:
    """JEDI's data check period (switch ``data_check_period_as_jedi``): why the task, frozen longer than
    DATA_LOCATION_CHECK_PERIOD days (0: 7) before the snapshot, skips the data locality check (None: it does not)."""
    if not rule(ctx.config, "data_check_period_as_jedi"):
        return None
    frozen = ctx.task.get("frozentime")
    if frozen is None or pd.isna(frozen):
        return None
    days = int(ctx.config["DATA_LOCATION_CHECK_PERIOD"]) or 7
    waited = pd.Timestamp(ctx.cache.snap.taken_at) - pd.Timestamp(frozen)
    if waited <= pd.Timedelta(days=days):
        return None
    return f"frozen {fmt(waited.total_seconds() / 86400.0)} days ago > DATA_LOCATION_CHECK_PERIOD={days} days"


def f_data_locality(ctx: NucleusContext) -> Verdict:
    """Data locality: enough of the input size and files at the nucleus; the whole check may be dropped."""
    inp, cfg = ctx.inputs, ctx.config
    info: dict[str, Any] = {
        "checked": True,
        "disabled": False,
        "considered": inp.considered,
        "total_gb": inp.total_gb,
        "total_files": inp.total_files,
        "inputprestaging": bool(ctx.task.get("inputprestaging")),
    }
    ctx.locality = info
    if (expired := frozen_past_period(ctx)) is not None:
        # JEDI skips the check but keeps the input counts: the weight's data factors still apply
        info.update(checked=False, reason=f"data locality check skipped: the task was {expired}")
        return Verdict(np.ones(ctx.n, dtype=bool), "", "")
    passed, codes = locality_verdict(ctx)
    if not (passed & ctx.alive).any():
        off = _locality_off_reason(ctx)
        if off is not None:
            info.update(disabled=True, reason=f"no nucleus passed the data locality check and {off}")
            return Verdict(np.ones(ctx.n, dtype=bool), "", "")
        info["reason"] = "no nucleus passed the data locality check and it may not be disabled"
    size_thr, num_thr = cfg["INPUT_SIZE_THRESHOLD"], cfg["INPUT_NUM_THRESHOLD"]
    size_frac, num_frac = cfg["INPUT_SIZE_FRACTION"], cfg["INPUT_NUM_FRACTION"]

    def reasons(idx: np.ndarray) -> list[str]:
        out = []
        for i in idx:
            if codes[i] == "-insize":
                out.append(
                    f"insufficient input size: {fmt(inp.local_gb[i])} GB of {fmt(inp.total_gb)} GB at the nucleus, "
                    f"fraction <= INPUT_SIZE_FRACTION={size_frac}% (total > INPUT_SIZE_THRESHOLD={size_thr} GB)"
                )
            else:
                out.append(
                    f"short number of input files: {fmt(inp.local_files[i])} of {fmt(inp.total_files)} at the "
                    f"nucleus, fraction <= INPUT_NUM_FRACTION={num_frac}% (total > INPUT_NUM_THRESHOLD={num_thr})"
                )
        return out

    return Verdict(passed, codes, reasons)


@dataclass
class JobCheck:
    """The production filters run in hint mode over the nuclei's own queues: survivors and who removed the rest."""

    alive: np.ndarray  # per queue
    removed_by: np.ndarray  # per queue: index into ``verdicts`` of the filter that removed it, -1 if none
    verdicts: list[tuple[Filter, Verdict]]

    def skips(self, queues: np.ndarray, names: np.ndarray) -> list[Skip]:
        """The skips of QUEUES (indices), in filter order, as ``apply_filters`` would have recorded them."""
        queues = np.asarray(queues, dtype=np.int64)
        by = self.removed_by[queues]
        queues, by = queues[by >= 0], by[by >= 0]
        order = np.lexsort((queues, by))
        queues, by = queues[order], by[order]
        out: list[Skip] = []
        starts = np.flatnonzero(np.r_[True, by[1:] != by[:-1]]).tolist() if len(by) else []
        for a, b in zip(starts, [*starts[1:], len(by)][: len(starts)], strict=True):
            # the queues one filter removed: their codes and sentences are built together
            f, v = self.verdicts[int(by[a])]
            rows = queues[a:b]
            temporary = v.temporary or f.temporary
            out.extend(
                Skip(str(n), c, t, f.name, temporary)
                for n, c, t in zip(names[rows].tolist(), v.codes(rows), v.texts(rows), strict=True)
            )
        return out


def run_job_filters(pctx: ProdContext, qmask: np.ndarray) -> JobCheck:
    """Run the production job filters over the queues in QMASK, keeping masks only (sentences are built on demand).

    Usage: ``run_job_filters(production_queues.make_context(task, cfg, cache, hint_mode=True), mask).alive``
    """
    alive = qmask.copy()
    removed_by = np.full(len(qmask), -1, dtype=np.int64)
    verdicts: list[tuple[Filter, Verdict]] = []
    jedi = nucleus_panda.on(pctx)
    for f in production_queues.PANDA_HINT_FILTERS if jedi else production_queues.FILTERS:
        if not alive.any():
            break
        pctx.alive = alive
        v = f.run(pctx)
        if v is None:
            continue
        removed = alive & ~v.passed
        removed_by[removed] = len(verdicts)
        verdicts.append((f, v))
        alive &= ~removed
    return JobCheck(alive, removed_by, verdicts)


def f_job(ctx: NucleusContext) -> Verdict:
    """The nucleus' own queues must be able to run the task's jobs (production job filters in hint mode)."""
    na = ctx.na
    # the seed's name rule keeps queues with 'test' in the name out; JEDI has none (switch no_test_name_rule)
    job_queue = na.job_queue | na.job_queue_test if rule(ctx.config, "no_test_name_rule") else na.job_queue
    own = job_queue & (na.queue_nucleus >= 0)
    qmask = own.copy()
    qmask[qmask] = ctx.alive[na.queue_nucleus[qmask]]
    pctx = production_queues.make_context(ctx.task, ctx.config, ctx.cache, hint_mode=True)
    check = run_job_filters(pctx, qmask)
    ok = np.bincount(na.queue_nucleus[check.alive], minlength=ctx.n) > 0
    nqueues = np.bincount(na.queue_nucleus[own], minlength=ctx.n)

    # which filters killed each failing nucleus' queues: part of the decision, not only of its sentence
    failing = np.flatnonzero(~ok & ctx.alive)
    queue_skips = {int(i): check.skips(np.flatnonzero(qmask & (na.queue_nucleus == i)), pctx.qa.name) for i in failing}
    for i, skips in queue_skips.items():
        ctx.job_check[str(na.name[i])] = [s.to_dict("queue") for s in skips]

    def reasons(idx: np.ndarray) -> list[str]:
        out = []
        for i in idx:
            skips = queue_skips[int(i)]
            if nqueues[i] == 0:
                out.append("missing ability to run jobs: the nucleus has no production queue")
                continue
            groups: dict[tuple[str, str], list[str]] = {}
            for s in skips:
                groups.setdefault((s.stage, s.criteria), []).append(s.candidate)
            parts = []
            for (stage, code), queues in groups.items():
                shown = ", ".join(queues[:JOB_REASON_LIMIT]) + (" …" if len(queues) > JOB_REASON_LIMIT else "")
                parts.append(f"{stage} {code} x{len(queues)}: {shown}")
            plural = "queue was" if nqueues[i] == 1 else f"{nqueues[i]} queues were"
            out.append(f"missing ability to run jobs: its {plural} skipped ({'; '.join(parts)})")
        return out

    return Verdict(ok, "-job", reasons)


def fullchain_mode(task: dict[str, Any], parent: dict[str, Any]) -> str:
    """The task's effective fullChain: capable counts only when the parent ran on a bare nucleus (seed)."""
    mode = str(task.get("fullchain") or "")
    if mode == "capable" and parent.get("bare") not in BARE_MODES:
        return ""
    return mode


def f_full_chain(ctx: NucleusContext) -> Verdict:
    """Full-chain rules: only-nuclei take only full-chain tasks; only/require tasks need bare nuclei; follow the parent."""
    mode = fullchain_mode(ctx.task, ctx.parent)
    if mode == "only" and rule(ctx.config, "full_chain_only_as_jedi"):
        mode = "require"  # JEDI tests 'only' and 'require' alike: any bare mode (AtlasProdTaskBroker.py:522-525)
    bare = ctx.na.bare
    codes_ok = np.ones(ctx.n, dtype=bool)
    texts = np.full(ctx.n, "", dtype=object)
    if mode == "":
        bad = bare == "only"
        texts[bad] = "bareNucleus=only accepts only full-chain tasks"
    elif mode == "only":
        bad = bare != "only"
        texts[bad] = "fullChain=only needs a nucleus with bareNucleus=only"
    elif mode == "require":
        bad = ~np.isin(bare, BARE_MODES)
        texts[bad] = "fullChain=require needs a nucleus with bareNucleus=only or allow"
    else:
        bad = np.zeros(ctx.n, dtype=bool)
    codes_ok &= ~bad
    pnuc = ctx.parent.get("nucleus")
    if mode and ctx.parent.get("bare") in BARE_MODES:
        elsewhere = (ctx.na.name != pnuc) & codes_ok
        texts[elsewhere] = f"the parent task {ctx.parent['jeditaskid']} of the full-chain ran on bare nucleus={pnuc}"
        codes_ok &= ~elsewhere
    return Verdict(codes_ok, "-full_chain", lambda idx: list(texts[idx]))


FILTERS: tuple[Filter, ...] = (
    Filter("status check", ("-status",), "nuclei must be in the ACTIVE status", f_status,
           uses=Reads(config=("RULES",))),
    Filter("transfer backlog check", ("-transfer_backlog",),
           "skip nuclei with more than NQUEUED_NUC_CAP files queued to them unless t1Weight < 0",
           f_transfer_backlog, temporary=True, uses=Reads(config=("NQUEUED_NUC_CAP",))),
    Filter("storage endpoint check", ("-match",), "nuclei must have associated storages", f_match),
    Filter("space check", ("-space",),
           "spaceFree + spaceExpired - normalizedExpOutSize x RW must exceed DISK_THRESHOLD", f_space,
           uses=Reads(config=("DISK_THRESHOLD", "OUTPUT_GB_PER_CORE_DAY"))),
    Filter("data locality check", ("-insize", "-innum"),
           "enough of the input size and files must be at the nucleus; the check may be dropped", f_data_locality,
           uses=Reads(config=("INPUT_SIZE_FRACTION", "INPUT_NUM_FRACTION", "INPUT_SIZE_THRESHOLD", "INPUT_NUM_THRESHOLD",
                              "MIN_IO_INTENSITY_WITH_LOCAL_DATA", "MIN_INPUT_SIZE_WITH_LOCAL_DATA",
                              "MAX_TASK_PRIO_WITH_LOCAL_DATA", "RULES", "DATA_LOCATION_CHECK_PERIOD"))),
    Filter("job check", ("-job",), "the nucleus' own queues must be able to run the task's jobs", f_job,
           uses=Reads(config=keys_of(production_queues.FILTERS, ProdContext))),
    Filter("full-chain check", ("-full_chain",), "full-chain tasks follow bare nuclei and their parent", f_full_chain,
           uses=Reads(config=("RULES",))),
)  # fmt: skip
"""Seed 000 step 2 in order, then the job check (seed 003) and the full-chain rules."""
PANDA_FILTERS: tuple[Filter, ...] = (
    FILTERS[0], FILTERS[1],
    Filter("storage endpoint check", ("-match", "-source_blacklist", "-destination_blacklist", "-space"),
           "JEDI's endpoint check: WAN blacklists and space with the full RW", nucleus_panda.f_endpoint),
    FILTERS[5], FILTERS[4], FILTERS[6],
)  # fmt: skip
"""PanDA 1.0.4's order (switch nucleus_as_jedi): status, backlog, endpoint, job, data, full chain."""
