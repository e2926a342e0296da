"""The network of the demo grid: NETWORK_MATRIX_KV rows for every site -> nucleus link (closeness, files
queued, FTS throughput), with blocked, busy, backlogged and stale links (``network``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from brokerage.synth.common import NQUEUED_NUC_CAP, NQUEUED_NUC_CAP_FOR_JOBS, NQUEUED_SAT_CAP, times
from brokerage.synth.sites import Sites


def _links(sites: Sites) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Source and destination of every site -> nucleus link, same-cloud and tier 0/1 pair flags."""
    nuc = np.flatnonzero(sites.nucleus)
    src = np.repeat(np.arange(sites.n), len(nuc))
    dst = np.tile(nuc, sites.n)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    same_cloud = sites.cloud[src] == sites.cloud[dst]
    big_pair = (sites.tier[src] <= 1) & (sites.tier[dst] <= 1)  # tier 0/1 are linked by the LHC optical network
    return src, dst, same_cloud, big_pair


def _closeness(
    rng: np.random.Generator, same_cloud: np.ndarray, big_pair: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """AGIS closeness (near in the same cloud), a few links blocked (-1), and which links publish it."""
    n = len(same_cloud)
    closeness = np.where(same_cloud | big_pair, rng.integers(0, 4, n), rng.integers(3, 12, n)).astype(float)
    blocked = rng.random(n) < 0.004
    if n >= 10:
        blocked[rng.choice(n, size=3, replace=False)] = True
    closeness[blocked] = -1.0
    has_close = (rng.random(n) < 0.95) | blocked
    return closeness, blocked, has_close


def _busy_links(
    rng: np.random.Generator, nuc: np.ndarray, dst: np.ndarray, story_nuc: np.ndarray, queued: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Up to three busy links per nucleus (over NQUEUED_SAT_CAP); the nucleus total stays below NQUEUED_NUC_CAP."""
    busy = np.zeros(len(dst), dtype=bool)
    has_queued = rng.random(len(dst)) < 0.88
    for d in nuc.tolist():
        links = np.flatnonzero(dst == d)
        if not len(links):
            continue
        if d in story_nuc.tolist():
            continue
        k = min(len(links), int(rng.integers(0, 4)))
        b = rng.choice(links, size=k, replace=False)
        busy[b] = True
        queued[b] = np.floor(rng.uniform(NQUEUED_SAT_CAP + 1, 2.7 * NQUEUED_SAT_CAP, k))
        has_queued[b] = True
        rest = links[~busy[links] & has_queued[links]]
        target = rng.uniform(0.3, 0.9) * NQUEUED_NUC_CAP - queued[b].sum()
        total = queued[rest].sum()
        if total > target > 0:
            queued[rest] = np.floor(queued[rest] * target / total)
    return busy, has_queued


def _backlogs(
    rng: np.random.Generator,
    sites: Sites,
    dst: np.ndarray,
    queued: np.ndarray,
    has_queued: np.ndarray,
    busy: np.ndarray,
) -> None:
    """The backlogged and links-full nuclei: enough files queued to them to pass their caps (in place)."""
    for story, lo, hi in (
        ("backlogged", 1.25 * NQUEUED_NUC_CAP, 3.0 * NQUEUED_NUC_CAP),
        ("links_full", 1.1 * NQUEUED_NUC_CAP_FOR_JOBS, 1.6 * NQUEUED_NUC_CAP_FOR_JOBS),
    ):
        for d in sites.story[story].tolist():
            links = np.flatnonzero(dst == d)
            if not len(links):
                continue
            k = min(len(links), max(3, len(links) // 8))
            b = rng.choice(links, size=k, replace=False)
            has_queued[b] = True
            w = rng.dirichlet(np.ones(k))
            want = rng.uniform(lo, hi) - queued[links][has_queued[links]].sum() + queued[b].sum()
            queued[b] = np.floor(np.maximum(want, 0) * w) + np.floor(rng.uniform(0, 20, k))
            busy[b] = queued[b] > NQUEUED_SAT_CAP


def _link_age(rng: np.random.Generator, keep_fresh: np.ndarray, story_links: np.ndarray) -> np.ndarray:
    """Seconds since each link was last measured: mostly within the hour, a few stale (not the demo's cases)."""
    n = len(keep_fresh)
    link_age = rng.uniform(60.0, 55 * 60.0, n)
    stale_link = rng.random(n) < 0.03
    stale_link[keep_fresh] = False  # the cases the demo is about stay fresh
    link_age = np.where(stale_link, rng.uniform(2 * 3600.0, 48 * 3600.0, n), link_age)
    link_age[story_links] = np.minimum(link_age[story_links], 50 * 60.0)
    return link_age


def _rows(
    rng: np.random.Generator,
    sites: Sites,
    src: np.ndarray,
    dst: np.ndarray,
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
    link_age: np.ndarray,
    taken: pd.Timestamp,
) -> dict[str, Any]:
    """The published (link, key, value) rows grouped by nucleus, then by link, each with its time stamp."""
    idx = np.concatenate([p[0] for p in parts])
    order = np.lexsort((idx, dst[idx]))  # group rows by nucleus, then by link
    idx = idx[order]
    keys = np.concatenate([p[1] for p in parts])[order]
    values = np.concatenate([p[2] for p in parts])[order]
    age = link_age[idx] + rng.uniform(0.0, 120.0, len(idx))
    return {
        "src": sites.name[src[idx]],
        "dst": sites.name[dst[idx]],
        "key": keys,
        "value": values.astype(float),
        "ts": times(taken, age),
    }


def network(rng: np.random.Generator, sites: Sites, taken: pd.Timestamp) -> dict[str, Any]:
    """NETWORK_MATRIX_KV rows for every site -> nucleus link (closeness, queued files, FTS throughput)."""
    src, dst, same_cloud, big_pair = _links(sites)
    n = len(src)
    closeness, blocked, has_close = _closeness(rng, same_cloud, big_pair)
    # files queued: most links idle, a few busy; totals per nucleus stay below NQUEUED_NUC_CAP unless a story says so
    queued = np.where(rng.random(n) < 0.55, 0.0, np.floor(rng.exponential(12.0, n)))
    story_nuc = np.concatenate([sites.story["backlogged"], sites.story["links_full"]])
    busy, has_queued = _busy_links(rng, np.flatnonzero(sites.nucleus), dst, story_nuc, queued)
    _backlogs(rng, sites, dst, queued, has_queued, busy)
    express = np.floor(rng.exponential(2.0, n))
    has_express = rng.random(n) < 0.5
    base = rng.lognormal(np.log(25.0), 1.2, n) * np.where(big_pair, 6.0, 1.0)
    pattern = rng.choice(5, size=n, p=[0.45, 0.2, 0.15, 0.15, 0.05])  # all / 1d+1w / 1w / none / 1h only
    has_1h = (pattern == 0) | (pattern == 4)
    has_1d = pattern <= 1
    has_1w = pattern <= 2
    link_age = _link_age(rng, blocked | busy, np.isin(dst, story_nuc))
    parts = []
    for key, have, value in (
        ("AGIS_closeness", has_close, closeness),
        ("Production Output_queued", has_queued, queued),
        ("Express_queued", has_express, express),
        ("dashb_mbps_1h", has_1h, np.round(base * rng.uniform(0.5, 1.5, n), 2)),
        ("dashb_mbps_1d", has_1d, np.round(base * rng.uniform(0.7, 1.3, n), 2)),
        ("dashb_mbps_1w", has_1w, np.round(base, 2)),
    ):
        idx = np.flatnonzero(have)
        parts.append((idx, np.full(len(idx), key, dtype=object), value[idx]))
    return _rows(rng, sites, src, dst, parts, link_age, taken)
