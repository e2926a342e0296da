"""The storage of the demo grid: DDM endpoints (space and read/write status) and which queue reads from and
writes to which endpoint (``ddm_endpoints``, ``panda_ddm_relation``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from brokerage.synth.common import STORAGE_MIN_FREE_GB
from brokerage.synth.queues import K, Queues
from brokerage.synth.sites import Sites

_VP = K["VP"]
ACTIVITIES = ("read_lan", "write_lan", "read_wan", "write_wan")


def _layout(rng: np.random.Generator, sites: Sites, q: Queues) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Site and type of every endpoint: DATADISK everywhere, DATATAPE at tier 0/1, some SCRATCHDISK, VP_DISK."""
    n = sites.n
    has_vp = np.bincount(q.site[q.kind == _VP], minlength=n) > 0
    rows_site: list[np.ndarray] = []
    rows_type: list[str] = []
    blocks = [
        ("DATADISK", np.arange(n)),
        ("DATATAPE", np.flatnonzero(sites.tier <= 1)),
        ("SCRATCHDISK", np.flatnonzero(rng.random(n) < 0.5)),
        ("VP_DISK", np.flatnonzero(has_vp)),
    ]
    for typ, idx in blocks:
        rows_site.append(idx)
        rows_type += [typ] * len(idx)
    return np.concatenate(rows_site), np.array(rows_type, dtype=object), rows_type


def _space(rng: np.random.Generator, sites: Sites, site: np.ndarray, typ: np.ndarray) -> dict[str, np.ndarray]:
    """Total, free and expired space in GB; a few nuclei and satellites nearly full."""
    m = len(site)
    is_tape = typ == "DATATAPE"
    disk = typ == "DATADISK"
    st = sites.tier[site]
    nuc = sites.nucleus[site]
    # space in GB (log-uniform): T0/T1 disk 2-20 PB, T2 nuclei 1-5 PB, T2 0.1-2 PB, T3 20-200 TB; tape 10-60 PB
    kinds = [disk & (st <= 1), disk & nuc, disk & (st == 2), disk, is_tape, typ == "SCRATCHDISK"]
    lo = np.select(kinds, [2e6, 1e6, 1e5, 2e4, 1e7, 5e4], 1e5)
    hi = np.select(kinds, [2e7, 5e6, 2e6, 2e5, 6e7, 5e5], 5e5)
    total = np.exp(rng.uniform(np.log(lo), np.log(hi)))
    free = total * np.where(is_tape, rng.uniform(0.1, 0.4, m), rng.uniform(0.05, 0.35, m))
    expired = np.where(disk, total * rng.uniform(0.0, 0.04, m), 0.0)
    full_nuc = disk & np.isin(site, sites.story["nearly_full"])
    free = np.where(full_nuc, rng.uniform(2e4, 8e4, m), free)
    expired = np.where(full_nuc, rng.uniform(0.0, 1.5e4, m), expired)
    # nearly full satellites: free+expired below STORAGE_MIN_FREE_SIZE
    full_sat = disk & (np.isin(site, sites.story["sat_full"]) | (~nuc & (rng.random(m) < 0.01)))
    free = np.where(full_sat, rng.uniform(0.0, 0.6 * STORAGE_MIN_FREE_GB, m), free)
    expired = np.where(full_sat, rng.uniform(0.0, 0.3 * STORAGE_MIN_FREE_GB, m), expired)
    return {
        "space_total": np.round(total, 1),
        "space_free": np.round(free, 1),
        "space_expired": np.round(expired, 1),
    }


def _status(rng: np.random.Generator, sites: Sites, site: np.ndarray, typ: np.ndarray) -> dict[str, np.ndarray]:
    """ON/TEST/OFF per activity: a few at random, one code per blacklisted satellite, stories, downtimes."""
    m = len(site)
    disk = typ == "DATADISK"
    status = {}
    for act in ACTIVITIES:
        r = rng.random(m)
        status[act] = np.where(r < 0.012, "OFF", np.where(r < 0.02, "TEST", "ON")).astype(object)
    # zip stops at the shortest: small grids have fewer than four such satellites
    forced = zip(ACTIVITIES, ("OFF", "TEST", "OFF", "TEST"), sites.story["sat_blacklist"].tolist(), strict=False)
    for act, value, s in forced:
        status[act][disk & (site == s)] = value
    for act, value, story in (("read_wan", "TEST", "read_wan_test"), ("write_wan", "OFF", "write_wan_off")):
        status[act][disk & np.isin(site, sites.story[story])] = value
    down = np.isin(site, sites.story["sat_downtime"])
    for act in status:
        status[act][down] = "OFF"
    return status


def endpoints(rng: np.random.Generator, sites: Sites, q: Queues) -> dict[str, Any]:
    """DDM endpoints: DATADISK everywhere, DATATAPE at tier 0/1, some SCRATCHDISK, VP_DISK where VP queues are."""
    site, typ, rows_type = _layout(rng, sites, q)
    name = np.array([f"{r}_{t}" for r, t in zip(sites.rse[site].tolist(), rows_type, strict=True)], dtype=object)
    return {
        "ddm_endpoint_name": name,
        "site_name": sites.name[site],
        "type": typ,
        "is_tape": typ == "DATATAPE",
        **_space(rng, sites, site, typ),
        **_status(rng, sites, site, typ),
        "_site": site,
    }


def relations(sites: Sites, q: Queues, ep: dict[str, Any]) -> dict[str, Any]:
    """Every queue reads from its site's DATADISK (default write); tier 0/1 queues also from DATATAPE; VP and SCRATCH."""
    ep_site, ep_type, ep_name = ep["_site"], ep["type"], ep["ddm_endpoint_name"]
    parts_q, parts_e, parts_w = [], [], []
    for typ, mask, default in (
        ("DATADISK", np.ones(q.n, dtype=bool), True),
        ("DATATAPE", sites.tier[q.site] <= 1, False),
        ("VP_DISK", q.kind == _VP, False),
        ("SCRATCHDISK", q.type != "production", False),
    ):
        lookup = np.full(sites.n, -1, dtype=np.int64)
        sel = np.flatnonzero(ep_type == typ)
        lookup[ep_site[sel]] = sel
        e = lookup[q.site]
        ok = mask & (e >= 0)
        parts_q.append(np.flatnonzero(ok))
        parts_e.append(e[ok])
        parts_w.append(np.full(int(ok.sum()), default))
    qi = np.concatenate(parts_q)
    order = np.argsort(qi, kind="stable")
    return {
        "panda_queue": q.name[qi[order]],
        "ddm_endpoint_name": ep_name[np.concatenate(parts_e)[order]],
        "default_write": np.concatenate(parts_w)[order],
    }
