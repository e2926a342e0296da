"""PanDA 1.0.4's IO check of the production job broker (switch ``io_as_jedi``), a wrapper of the seed's IO check."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from brokerage.framework import Filter, Verdict
from brokerage.model.profiles import rule

MIB = 1024.0 * 1024.0


def _complete_input(ctx: Any) -> list[tuple[int, float, np.ndarray, np.ndarray]]:
    """Per real input dataset of the task: (files, bytes per file, queues with a complete disk replica, queues with
    a complete replica on any storage) as the converter describes the files (at most 20,000 per dataset)."""
    snap, qa, ep = ctx.cache.snap, ctx.qa, ctx.ep
    tid = int(ctx.task["jeditaskid"])
    ds = snap.datasets[(snap.datasets["jeditaskid"] == tid) & (snap.datasets["nfiles"].astype(int) > 0)]
    reps = snap.dataset_replicas[snap.dataset_replicas["jeditaskid"] == tid]
    tape = ep["is_tape"].astype(bool)
    out = []
    for d in ds.to_dict("records"):
        total = int(d["nfiles"])
        full = np.zeros(len(ep.name), dtype=bool)
        for r in reps[reps["datasetid"] == d["datasetid"]].to_dict("records"):
            i = ep.index.get(r["ddm_endpoint_name"])
            if i is not None and int(r["nfiles"]) >= total:
                full[i] = True
        n = max(1, min(total, 20000))

        def at(mask: np.ndarray) -> np.ndarray:
            hit = mask[qa.rel_endpoint].astype(float)
            return np.bincount(qa.rel_queue, weights=hit, minlength=qa.n) > 0

        out.append((n, float(int(float(d["size_gb"]) * 1024**3 / n)), at(full & ~tape), at(full)))
    return out


def io(base: Filter) -> Filter:
    """JEDI's IO check (switch ``io_as_jedi``): only complete replicas count; a queue fails when even with its tape
    copies more than SIZE_CUTOFF_TO_MOVE_INPUT GB or NUM_CUTOFF_TO_MOVE_INPUT files must move, and one needing tape
    for that fails only while another queue has it on disk; no queue passing disables the check."""

    def fn(ctx: Any) -> Verdict | None:
        if not rule(ctx.config, "io_as_jedi"):
            return base.run(ctx)
        t = ctx.task
        intensity, cutoff = t.get("iointensity"), ctx.config["IO_INTENSITY_CUTOFF"]
        if intensity is None or intensity != intensity or not float(intensity) > float(cutoff):  # None or NaN
            return None
        if ctx.merge or ctx.preassigned or t.get("eventservice"):
            return None
        parts = _complete_input(ctx)
        total = sum(n * f for n, f, _, _ in parts)
        if total <= 0:
            return None
        files = sum(n for n, _, _, _ in parts)
        disk_b = sum(np.where(d, n * f, 0.0) for n, f, d, _ in parts)
        any_b = sum(np.where(a, n * f, 0.0) for n, f, _, a in parts)
        mb, mb_wt = np.floor((total - disk_b) / MIB), np.floor((total - any_b) / MIB)
        nf = files - sum(np.where(d, n, 0) for n, _, d, _ in parts)
        nf_wt = files - sum(np.where(a, n, 0) for n, _, _, a in parts)
        cut_mb, cut_n = (
            float(ctx.config["SIZE_CUTOFF_TO_MOVE_INPUT"]) * 1024,
            float(ctx.config["NUM_CUTOFF_TO_MOVE_INPUT"]),
        )
        dead = (np.minimum(mb, mb_wt) > cut_mb) | (np.minimum(nf, nf_wt) > cut_n)
        tape_only = ~dead & ((mb > cut_mb) | (nf > cut_n))
        ok = ~dead & ~tape_only
        if not (ctx.alive & (ok | tape_only)).any():
            return None
        passed = ok if (ctx.alive & ok).any() else ~dead
        return Verdict(passed, "-io", lambda idx: [f"{mb[i]:g} MB / {nf[i]:g} files of input to move" for i in idx])

    return replace(base, fn=fn, reads=None)
