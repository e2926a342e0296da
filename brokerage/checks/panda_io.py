"""PanDA 1.0.4's IO, endpoint blacklist (inside its storage check) and direct-access checks of the production job broker."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from brokerage.checks.storage import STORAGE
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


DOWN = ("OFF", "TEST")  # DdmSpec DOWNTIME_STATUSES
NEAR_MISSING, NEAR_PCT = "MAX_MISSING_INPUT_FILES", "MIN_INPUT_COMPLETENESS"
BLACKLIST_CODES = ("-read_lan_blacklist", "-write_lan_blacklist", "-write_wan_blacklist", "-read_wan_blacklist",
                   "-source_blacklist")  # fmt: skip


def _complete_per_dataset(ctx: Any) -> tuple[np.ndarray | None, bool]:
    """(endpoints holding a (nearly) complete replica of every input dataset, None without input; whether every
    dataset has such a replica readable over WAN: JEDI's remote_source_available)."""
    snap, ep = ctx.cache.snap, ctx.ep
    tid = int(ctx.task["jeditaskid"])
    ds = snap.datasets[(snap.datasets["jeditaskid"] == tid) & (snap.datasets["nfiles"].astype(int) > 0)]
    if ds.empty:
        return None, True
    reps = snap.dataset_replicas[snap.dataset_replicas["jeditaskid"] == tid]
    miss, pct = float(ctx.config[NEAR_MISSING]), float(ctx.config[NEAR_PCT])
    out = np.ones(len(ep.name), dtype=bool)
    wan_ok = ~np.isin(ep["read_wan"], DOWN)
    remote = True
    for d in ds.to_dict("records"):
        total, here = int(d["nfiles"]), np.zeros(len(ep.name), dtype=bool)
        for r in reps[reps["datasetid"] == d["datasetid"]].to_dict("records"):
            i, found = ep.index.get(r["ddm_endpoint_name"]), min(int(r["nfiles"]), total)
            if i is not None and found > 0 and (found == total or total - found <= miss or found / total * 100 >= pct):
                here[i] = True
        out &= here
        remote = remote and bool((here & wan_ok).any() or not here.any())
    return out, remote


def jedi_blacklist(ctx: Any) -> tuple[np.ndarray, np.ndarray]:
    """AtlasBrokerUtils.check_endpoints_with_blacklist(storage_type='DATADISK') per queue: (passed, code). Only
    DATADISK endpoints count (a queue without one cannot read or write over LAN); the nucleus' own queues need no
    WAN, except to receive input at endpoints without a complete replica. In hint mode (the task broker's job check)
    JEDI counts the queues of every nucleus as the nucleus' (AtlasProdJobBroker.py:269-273)."""
    qa, ep = ctx.qa, ctx.ep
    disk = np.asarray(ep["type"]) == "DATADISK"
    rq, re_ = qa.rel_queue, qa.rel_endpoint
    nucleus = np.asarray(qa.site_is_nucleus if ctx.hint_mode else ctx.at_nucleus, dtype=bool)
    complete, remote = _complete_per_dataset(ctx)

    def any_at(ok: np.ndarray) -> np.ndarray:
        return np.bincount(rq, weights=(disk[re_] & ok[re_]).astype(float), minlength=qa.n) > 0

    read_lan = any_at(~np.isin(ep["read_lan"], DOWN))
    # an empty set of complete locations is falsy in JEDI: the nucleus' queues then need no WAN at all
    satellite_ep = np.zeros(len(ep.name), dtype=bool) if complete is None or not complete.any() else ~complete
    wan_in = ~np.isin(ep["write_wan"], DOWN)
    recv = np.bincount(rq, weights=(disk[re_] & np.where(nucleus[rq] & ~satellite_ep[re_], True, wan_in[re_])).astype(float),
                       minlength=qa.n) > 0  # fmt: skip
    out, safe = qa.out_endpoint, np.maximum(qa.out_endpoint, 0)
    out_disk = (out >= 0) & disk[safe]
    write_lan = out_disk & ~np.isin(ep["write_lan"][safe], DOWN)
    send = out_disk & (nucleus | ~np.isin(ep["read_wan"][safe], DOWN))
    source = np.full(qa.n, remote) | nucleus  # a nucleus queue reads the input locally
    codes = np.full(qa.n, "", dtype=object)
    for code, ok in reversed(list(zip(BLACKLIST_CODES, (read_lan, write_lan, recv, send, source), strict=True))):
        codes = np.where(ok, codes, code)
    return codes == "", codes


def blacklist(base: Filter) -> Filter:
    """The endpoint blacklist with JEDI's DATADISK-only test (switch ``blacklist_as_jedi``), a temporary problem."""

    def fn(ctx: Any) -> Verdict | None:
        if not rule(ctx.config, "blacklist_as_jedi"):
            return base.run(ctx)
        passed, codes = jedi_blacklist(ctx)
        return Verdict(passed, np.where(passed, "-read_lan_blacklist", codes).astype(object),
                       "endpoints blacklisted for the activity (DATADISK endpoints only)", True)  # fmt: skip

    return replace(base, fn=fn, reads=None, codes=(*base.codes, "-source_blacklist"))


def blacklist_temporary(base: Filter) -> Filter:
    """The endpoint blacklist check as part of JEDI's storage check, whose skips are temporary (switch
    ``blacklist_temporary``)."""

    def fn(ctx: Any) -> Verdict | None:
        v = base.run(ctx)
        if v is None or not rule(ctx.config, "blacklist_temporary"):
            return v
        return Verdict(v.passed, v.criteria, v.reasons, True)

    return replace(base, fn=fn, reads=None)


def space_first(base: Filter) -> Filter:
    """The blacklist test inside JEDI's storage check (switch ``blacklist_temporary``): a queue short of output space
    has that check's -disk message and is not tested for the blacklist (AtlasProdJobBroker.py:1005-1018), so its
    deferred -disk is not overwritten by a blacklist skip."""

    def fn(ctx: Any) -> Verdict | None:
        v = base.run(ctx)
        if v is None or not rule(ctx.config, "blacklist_temporary"):
            return v
        space = STORAGE.run(ctx)
        passed = v.passed if space is None else v.passed | ~space.passed
        return Verdict(passed, v.criteria, v.reasons, v.temporary)

    return replace(base, fn=fn, reads=None)


def remoteio(base: Filter) -> Filter:
    """The direct access check without merge jobs (switch ``remoteio_not_for_merge``): JEDI skips it for them."""

    def fn(ctx: Any) -> Verdict | None:
        if rule(ctx.config, "remoteio_not_for_merge") and ctx.merge:
            return None
        return base.run(ctx)

    return replace(base, fn=fn, reads=None)
