"""PanDA 1.0.4's task (nucleus) brokerage rules, used by ``brokers/nucleus.py`` when the rule profile switches them on.

Only the pieces that differ from the seed's nucleus broker live here: the WAN-readable input test that fails the
whole task, the storage endpoint check (WAN blacklists and the space with the full RW), JEDI's remaining work per
work queue and priority, and JEDI's weight. The contexts are ``nucleus.NucleusContext`` (duck-typed: this module
is imported by ``nucleus.py``, never the other way round).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from brokerage.framework import Verdict
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.profiles import rule

BAD_STATUS = ("OFF", "TEST")  # DdmSpec.DOWNTIME_STATUSES
CUT_OFF_RW = 50  # AtlasProdTaskBroker cutOffRW: 1/RW only when RW >= 50 (HS06 s), else 1
NEG_WEIGHT_TAPE = 0.001
OUTPUT_GB_PER_CORE_DAY = 0.25  # tmpSpaceToUse = int(fullRW / 10 / 24 / 3600 * 0.25)
CORE_POWER = 10
FREE_DISK_CUTOFF_DEFAULT = 1000  # TB
RW_STATUSES = ("ready", "scouting", "running", "pending")
DEFAULT_CPUTIME = 300.0


def _task_rw(cache: GridCache) -> pd.DataFrame:
    """Every task's remaining work in HS06 s (JEDI's fullRW quirk: mHS06 not divided), with nucleus, share, prio."""

    def build() -> pd.DataFrame:
        snap = cache.snap
        t = snap.tasks
        cpu = t["cputime"].astype(float).where(t["cputime"].astype(float) > 0, DEFAULT_CPUTIME)
        ds = snap.datasets[snap.datasets["is_master"]]
        left = (ds["nevents"].astype(float) - ds["neventsused"].astype(float)).clip(lower=0.0)
        per = pd.Series(left.to_numpy(), index=ds["jeditaskid"].astype(np.int64).to_numpy()).groupby(level=0).sum()
        tid = t["jeditaskid"].astype(np.int64).to_numpy()
        rw = per.reindex(tid).fillna(0.0).to_numpy() * cpu.to_numpy()
        counted = t["status"].isin(RW_STATUSES).to_numpy() & t["nucleus"].notna().to_numpy()
        return pd.DataFrame({"tid": tid, "nucleus": t["nucleus"].to_numpy(), "gshare": t["gshare"].to_numpy(),
                             "prio": t["currentpriority"].astype(float).to_numpy(), "rw": rw, "counted": counted})  # fmt: skip

    return cache.get("nucleus_panda:task_rw", build)


def jedi_rw(cache: GridCache, task: dict[str, Any]) -> tuple[dict[str, float], dict[str, float]]:
    """(fullRW, prioRW) per nucleus as JEDI's calculateWorldRWwithPrio_JEDI: all tasks, and those of the task's work
    queue (its global share) with currentPriority >= the task's.

    Usage: ``full, prio = jedi_rw(cache, views.task_row(cache, 1))``
    """
    f = _task_rw(cache)
    f = f[f["counted"]]
    full = f.groupby("nucleus")["rw"].sum().to_dict()
    prio = int(task.get("currentpriority") or 0)
    sel = f[(f["gshare"] == task.get("gshare")) & (f["prio"] >= prio)]
    return full, sel.groupby("nucleus")["rw"].sum().to_dict()


def wan_unreadable_input(ctx: Any) -> str | None:
    """JEDI's task-level error (switch ``nucleus_as_jedi``): some input dataset has no complete replica at an
    endpoint readable over WAN anywhere."""
    snap = ctx.cache.snap
    tid = int(ctx.task["jeditaskid"])
    ds = snap.datasets[(snap.datasets["jeditaskid"] == tid) & (snap.datasets["nfiles"] > 0)]
    if ctx.task.get("taskbrokeronmaster"):
        ds = ds[ds["is_master"]]
    reps = snap.dataset_replicas[snap.dataset_replicas["jeditaskid"] == tid]
    ep = snap.ddm_endpoints.set_index("ddm_endpoint_name")["read_wan"]
    for d in ds.to_dict("records"):
        rows = reps[reps["datasetid"] == d["datasetid"]]
        ok = [e for e, n in zip(rows["ddm_endpoint_name"], rows["nfiles"], strict=True)
              if int(n) == int(d["nfiles"]) and ep.get(e) not in BAD_STATUS]  # fmt: skip
        if not ok:
            return f"dataset={d['datasetname']} is incomplete/missing at online endpoints with read_wan=ON"
    return None


def _endpoints(ctx: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per nucleus: read_wan, write_wan of its output endpoint, usable GB after the projected output, total GB."""
    na = ctx.na
    ep = views.endpoint_arrays(ctx.cache)
    full, _ = jedi_rw(ctx.cache, ctx.task)
    row = np.array([ep.index.get(str(e), -1) for e in na.endpoint], dtype=np.int64)
    safe = np.maximum(row, 0)
    read_wan = np.where(row >= 0, ep["read_wan"][safe], "ON")
    write_wan = np.where(row >= 0, ep["write_wan"][safe], "ON")
    reserved = np.array([int(full.get(str(n), 0.0) / CORE_POWER / 24 / 3600 * OUTPUT_GB_PER_CORE_DAY) for n in na.name])
    usable = na.space_free + na.space_expired - reserved
    return read_wan, write_wan, usable, na.space_total


def f_endpoint(ctx: Any) -> Verdict:
    """JEDI's storage endpoint check: no DATADISK (-match), read_wan or write_wan OFF/TEST (-source_blacklist,
    -destination_blacklist), usable − int(fullRW/10/24/3600 × 0.25) < DISK_THRESHOLD × 1024 GB (-space)."""
    read_wan, write_wan, usable, _total = _endpoints(ctx)
    thr = float(ctx.config["DISK_THRESHOLD"]) * 1024.0
    code = np.full(ctx.n, "", dtype=object)
    code[ctx.na.endpoint == ""] = "-match"
    code[(code == "") & np.isin(read_wan, BAD_STATUS)] = "-source_blacklist"
    code[(code == "") & np.isin(write_wan, BAD_STATUS)] = "-destination_blacklist"
    code[(code == "") & (usable < thr)] = "-space"
    texts = {"-match": "no endpoint with ATLASDATADISK", "-source_blacklist": "output endpoint read_wan is OFF/TEST",
             "-destination_blacklist": "output endpoint write_wan is OFF/TEST", "-space": "disk shortage"}  # fmt: skip
    return Verdict(code == "", np.where(code == "", "-space", code).astype(object),
                   lambda idx: [texts[str(code[i])] for i in idx.tolist()])  # fmt: skip


def weights(ctx: Any) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """JEDI's nucleus weight: (1/RW_prio if RW_prio >= 50 else 1) x [ava_any/tot if IO-intensive or unset] x [0.001
    if some input is only on tape] x (usable/total) x min(FREE_DISK_CUTOFF, usable // 1024). Returns (weight, factors)."""
    cfg, na, inp = ctx.config, ctx.na, ctx.inputs
    _, prio = jedi_rw(ctx.cache, ctx.task)
    rw = np.array([float(prio.get(str(n), 0.0)) for n in na.name])
    f_rw = np.where(rw >= CUT_OFF_RW, 1.0 / np.maximum(rw, CUT_OFF_RW), 1.0)
    use_data = not ctx.locality.get("disabled", False) and inp.total_gb > 0
    io = ctx.task.get("iointensity")
    io_ok = io is None or float(io) > float(cfg["MIN_IO_INTENSITY_WITH_LOCAL_DATA"])
    f_local = inp.local_gb / inp.total_gb if use_data and io_ok else np.ones(ctx.n)
    f_tape = np.where(use_data & (inp.local_gb > inp.local_disk_gb), NEG_WEIGHT_TAPE, 1.0)
    _r, _w, usable, total = _endpoints(ctx)
    frac = np.divide(usable, total, out=np.ones(ctx.n), where=np.nan_to_num(total) > 0)
    cutoff = float(cfg["FREE_DISK_CUTOFF"]) if "FREE_DISK_CUTOFF" in cfg.effective() else FREE_DISK_CUTOFF_DEFAULT
    f_free = np.minimum(cutoff, np.floor(usable / 1024.0))
    factors = {"rw": f_rw, "local": f_local, "tape": f_tape, "space": frac * f_free}
    return f_rw * f_local * f_tape * frac * f_free, factors


def on(ctx: Any) -> bool:
    """The switch ``nucleus_as_jedi``."""
    return rule(ctx.config, "nucleus_as_jedi")
