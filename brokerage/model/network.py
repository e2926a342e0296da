"""Network weight between a satellite site and a nucleus: queuedWeight, throughputWeight, closeness fallback."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.profiles import rule as profile_rule
from brokerage.model.views import queue_arrays

CLOSENESS = "AGIS_closeness"
QUEUED_PRODUCTION_OUTPUT = "Production Output_queued"
QUEUED_EXPRESS = "Express_queued"
MBPS_KEYS = ("dashb_mbps_1h", "dashb_mbps_1d", "dashb_mbps_1w")  # most recent first
BLOCKED_LINK = -1.0
MIN_CLOSENESS = 0.0
NETWORK_MAX_AGE_MINUTES = 60  # rows older than this are not used (reference §5.1)
# every gdpconfig key the network weight reads: weights are shared under the values of these
NETWORK_KEYS = (
    "MAX_CLOSENESS",
    "MISSING_CLOSENESS_FRACTION",
    "NQUEUED_SAT_CAP",
    "SAME_SITE_NETWORK_WEIGHT",
    "NW_QUEUE_IMPORTANCE",
    "RULES",
)

# throughputWeight step function (strict '>' thresholds, first match). The seed shows it as a plot;
# this follows the plot, which puts 1.7 on (50, 75] MB/s where PanDA's code uses 1.6.
THROUGHPUT_STEPS: tuple[tuple[float, float], ...] = (
    (200, 2.0),
    (100, 1.9),
    (75, 1.8),
    (50, 1.7),
    (20, 1.5),
    (10, 1.3),
    (2, 1.2),
    (1, 1.1),
)
THROUGHPUT_FLOOR = 1.0
JEDI_THROUGHPUT_STEPS = tuple((t, 1.6 if t == 50 else w) for t, w in THROUGHPUT_STEPS)  # rule switch network_as_jedi

RULE_SAME_SITE = "same site as the nucleus"
RULE_BLOCKED = "blocked link (closeness -1)"
RULE_CLOSENESS = "no throughput data: closeness fallback"


def queued_weight(nqueued: np.ndarray | float, cap: float) -> np.ndarray:
    """queuedWeight = 2 - nQueued / NQUEUED_SAT_CAP (linear; 1.0 at the cap).

    Usage: ``queued_weight(75, 150) == 1.5``
    """
    return 2.0 - np.asarray(nqueued, dtype=float) / float(cap)


def over_sat_cap(nqueued: np.ndarray, cap: float, at_nucleus: np.ndarray) -> np.ndarray:
    """Links with over NQUEUED_SAT_CAP files queued to the nucleus (a link from the nucleus itself never is).

    Job brokerage skips their queues (-link_unusable); the network page marks them.
    Usage: ``over_sat_cap(np.array([200.0, 10.0]), 150, np.array([False, False]))``
    """
    q = np.asarray(nqueued, dtype=float)
    over = q > float(cap)
    if cap < 0:  # an unknown count (NaN) reads as 0 files queued
        over |= np.isnan(q)
    return over & ~at_nucleus


def throughput_weight(
    mbps: np.ndarray | float, steps: tuple[tuple[float, float], ...] = THROUGHPUT_STEPS
) -> np.ndarray:
    """throughputWeight from FTS MB/s by the step table THROUGHPUT_STEPS.

    Usage: ``throughput_weight(120.0) == 1.9``
    """
    m = np.asarray(mbps, dtype=float)
    out = np.full(m.shape, THROUGHPUT_FLOOR)
    for threshold, weight in reversed(steps):
        out = np.where(m > threshold, weight, out)
    return out


def closeness_weight(closeness: np.ndarray | float, max_closeness: float) -> np.ndarray:
    """weightNwThroughput = 1 + (MAX_CLOSENESS - closeness) / (MAX_CLOSENESS - MIN_CLOSENESS).

    Usage: ``closeness_weight(0, 11) == 2.0``
    """
    c = np.asarray(closeness, dtype=float)
    return 1.0 + (max_closeness - c) / (max_closeness - MIN_CLOSENESS)


@dataclass(frozen=True)
class LinkTable:
    """Metrics of every link into one nucleus, one row per source site (NaN where a metric is missing)."""

    nucleus: str
    src: np.ndarray
    closeness: np.ndarray
    queued: np.ndarray
    queued_express: np.ndarray
    mbps: np.ndarray
    mbps_source: np.ndarray  # which key gave mbps ('' when none)
    total_queued: float
    total_queued_express: float
    mbps_jedi: np.ndarray | None = None  # PanDA's nested lookup: 1w, then 1d, then 1h, stopping at the first missing

    def lookup(self, sites: np.ndarray) -> np.ndarray:
        """Row index of each site in SITES (-1 when the link has no data)."""
        order = {s: i for i, s in enumerate(self.src)}
        return np.fromiter((order.get(s, -1) for s in sites), dtype=np.int64, count=len(sites))


def link_table(cache: GridCache, nucleus: str) -> LinkTable:
    """The fresh network metrics into NUCLEUS, taking the most recent throughput of 1h, else 1d, else 1w.

    Usage: ``link_table(GridCache(snap), "CERN-PROD").closeness``
    """
    return cache.get(("network", nucleus), lambda: _build_link_table(cache, nucleus))


def _fresh_network(cache: GridCache) -> pd.DataFrame:
    def build() -> pd.DataFrame:
        snapshot = cache.snap
        net = snapshot.network
        cutoff = pd.Timestamp(snapshot.taken_at) - pd.Timedelta(minutes=NETWORK_MAX_AGE_MINUTES)
        fresh = net[net["ts"].isna() | (net["ts"] >= cutoff)]
        return fresh.pivot_table(index=["dst", "src"], columns="key", values="value", aggfunc="last")

    return cache.get("network:fresh", build)


def _build_link_table(cache: GridCache, nucleus: str) -> LinkTable:
    piv = _fresh_network(cache)
    try:
        rows = piv.xs(nucleus, level="dst")
    except KeyError:
        rows = piv.iloc[0:0].droplevel("dst") if len(piv) else pd.DataFrame()

    def col(key: str) -> np.ndarray:
        if key in rows.columns:
            return rows[key].to_numpy(dtype=float)
        return np.full(len(rows), np.nan)

    mbps = np.full(len(rows), np.nan)
    source = np.full(len(rows), "", dtype=object)
    for key in reversed(MBPS_KEYS):  # oldest first so the most recent available value wins
        values = col(key)
        have = ~np.isnan(values)
        mbps = np.where(have, values, mbps)
        source = np.where(have, key.rsplit("_", 1)[1], source)
    queued = col(QUEUED_PRODUCTION_OUTPUT)
    queued_x = col(QUEUED_EXPRESS)
    return LinkTable(
        nucleus=nucleus,
        src=rows.index.to_numpy(dtype=object),
        closeness=col(CLOSENESS),
        queued=queued,
        queued_express=queued_x,
        mbps=mbps,
        mbps_source=source,
        total_queued=float(np.nansum(queued)),
        total_queued_express=float(np.nansum(queued_x)),
        mbps_jedi=_nested_mbps(col),
    )


def _nested_mbps(col: Any) -> np.ndarray:
    """AtlasProdJobBroker's mbps: 1w, overwritten by 1d, then by 1h, stopping at the first missing key."""
    w, d, h = (col(k) for k in reversed(MBPS_KEYS))
    return np.where(np.isnan(w), np.nan, np.where(np.isnan(d), w, np.where(np.isnan(h), d, h)))


@dataclass(frozen=True)
class NetworkWeights:
    """Network weight of each satellite site towards one nucleus, with the numbers behind it."""

    weight: np.ndarray
    queued_weight: np.ndarray
    throughput_weight: np.ndarray
    closeness: np.ndarray
    nqueued: np.ndarray
    mbps: np.ndarray
    rule: np.ndarray  # text naming the rule that produced throughput_weight
    blocked: np.ndarray


def network_weights(
    cache: GridCache, sites: np.ndarray, nucleus: str, config: Config, express: bool = False
) -> NetworkWeights:
    """networkWeight = q x queuedWeight + (1 - q) x throughputWeight for every site in SITES (q = 0.5 by default).

    Usage: ``network_weights(GridCache(snap), np.array(["AGLT2"]), "BNL-ATLAS", Config()).weight``
    """
    if sites is queue_arrays(cache)["atlas_site"]:
        # the same for every task with this nucleus: shared under the values of the keys it reads
        key = ("network_weights", nucleus, express, *(config[k] for k in NETWORK_KEYS))
        return cache.memo(key, lambda: _network_weights(cache, sites, nucleus, config, express))
    return _network_weights(cache, sites, nucleus, config, express)


def _network_weights(
    cache: GridCache, sites: np.ndarray, nucleus: str, config: Config, express: bool
) -> NetworkWeights:
    links = link_table(cache, nucleus)
    if sites is queue_arrays(cache)["atlas_site"]:
        # brokers pass the queues' site column: index it once per snapshot and nucleus
        idx = cache.get(("network:queue_lookup", nucleus), lambda: links.lookup(sites))
    else:
        idx = links.lookup(np.asarray(sites, dtype=object))
    have = idx >= 0
    safe = np.where(have, idx, 0)

    def pick(values: np.ndarray) -> np.ndarray:
        if len(values) == 0:
            return np.full(len(sites), np.nan)
        return np.where(have, values[safe], np.nan)

    max_c = float(config["MAX_CLOSENESS"])
    closeness = pick(links.closeness)
    closeness_used = np.where(np.isnan(closeness), config["MISSING_CLOSENESS_FRACTION"] * max_c, closeness)
    nqueued = np.nan_to_num(pick(links.queued_express if express else links.queued), nan=0.0)
    jedi = profile_rule(config, "network_as_jedi")
    mbps = pick(links.mbps_jedi if jedi and links.mbps_jedi is not None else links.mbps)
    mbps_src = np.where(have, links.mbps_source[safe] if len(links.src) else "", "")

    qw = queued_weight(nqueued, config["NQUEUED_SAT_CAP"])
    has_mbps = ~np.isnan(mbps)
    steps = JEDI_THROUGHPUT_STEPS if jedi else THROUGHPUT_STEPS
    tw = np.where(has_mbps, throughput_weight(np.nan_to_num(mbps), steps), closeness_weight(closeness_used, max_c))
    rule = np.where(has_mbps, np.char.add("throughput dashb_mbps_", mbps_src.astype(str)), RULE_CLOSENESS)
    same = np.asarray(sites, dtype=object) == nucleus
    same_w = float(config["SAME_SITE_NETWORK_WEIGHT"])
    qw = np.where(same, same_w, qw)
    tw = np.where(same, same_w, tw)
    rule = np.where(same, RULE_SAME_SITE, rule)
    blocked = (closeness == BLOCKED_LINK) & ~same
    rule = np.where(blocked, RULE_BLOCKED, rule).astype(object)
    q = float(config["NW_QUEUE_IMPORTANCE"])
    weight = q * qw + (1.0 - q) * tw
    return NetworkWeights(weight, qw, tw, closeness, nqueued, mbps, rule, blocked)
