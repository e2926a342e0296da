"""The PanDA queues of the demo grid (CRIC's static columns): how many per site and of which kind, their
names, cores, status, limits and settings, and AGLT2 as the seed publishes it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from brokerage.synth.common import split
from brokerage.synth.sites import Sites

KINDS = ("UNI", "ANA", "SCORE", "MCORE", "HIMEM", "TEST", "ANATEST", "VP", "GPU", "SHORT", "HPC", "ES", "ARM", "LOMEM")
K = {k: i for i, k in enumerate(KINDS)}
_KIND_NAME = {
    "UNI": "{p}_UCORE",
    "ANA": "ANALY_{p}",
    "SCORE": "{p}_SCORE",
    "MCORE": "{p}_MCORE",
    "HIMEM": "{p}_MCORE_HIMEM",
    "TEST": "{p}_MCORE_TEST",
    "ANATEST": "ANALY_{p}_TEST",
    "VP": "ANALY_{p}_VP",
    "GPU": "ANALY_{p}_GPU",
    "SHORT": "{p}_SHORT",
    "HPC": "{p}_HPC",
    "ES": "{p}_ES",
    "ARM": "{p}_ARM",
    "LOMEM": "{p}_LOMEM",
}
_ANALYSIS_KINDS = ("ANA", "ANATEST", "VP", "GPU")
_KIND_TYPE = np.array(
    ["unified" if k == "UNI" else "analysis" if k in _ANALYSIS_KINDS else "production" for k in KINDS], dtype=object
)
_KIND_CAPABILITY = np.array(
    [
        "ucore" if k == "UNI" else "mcore" if k in ("MCORE", "HIMEM", "TEST", "HPC", "ES", "ARM") else "score"
        for k in KINDS
    ],
    dtype=object,
)
_POOL = (
    ("MCORE", 0.20),
    ("SCORE", 0.13),
    ("ANA", 0.10),
    ("UNI", 0.10),
    ("HIMEM", 0.07),
    ("TEST", 0.05),
    ("ANATEST", 0.03),
    ("VP", 0.05),
    ("GPU", 0.04),
    ("SHORT", 0.06),
    ("HPC", 0.04),
    ("ES", 0.04),
    ("ARM", 0.03),
    ("LOMEM", 0.06),
)
_FAIRSHARE = (
    "type=evgensimul:100%",
    "type=evgensimul:50%,type=pile:50%",
    "type=reprocessing:0%,type=any:100%",
    "gshare=Data Derivations:0%,type=any:100%",
    "type=any:100%,group=.*:0%",
    "priority<500:0%,type=any:100%",
)
_WNCONN = ("full#IPv4", "full#IPv6", "http#IPv4", "none", "")
_WNCONN_P = (0.6, 0.12, 0.08, 0.03, 0.17)
_EXPLICIT_RELEASES = (["21.0.38", "22.0.41"], ["22.0.41", "23.0.63", "24.0.53"], ["21.2.2.0"])


@dataclass
class Queues:
    """Static queue columns (CRIC) as arrays, plus the kind and site of each queue."""

    name: np.ndarray
    site: np.ndarray  # index into Sites
    kind: np.ndarray  # index into KINDS
    type: np.ndarray
    status: np.ndarray
    corecount: np.ndarray
    cols: dict[str, Any]

    @property
    def n(self) -> int:
        """Number of queues."""
        return len(self.name)


def _is(kind: np.ndarray, *ks: str) -> np.ndarray:
    """Which queues are of one of the kinds KS."""
    return np.isin(kind, [K[k] for k in ks])


def _layout(
    rng: np.random.Generator, sites: Sites, n_queues: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Site, first queue of its site, first-at-site flag and kind of every queue."""
    per_site = 1 + split(n_queues - sites.n, sites.weight)
    site = np.repeat(np.arange(sites.n), per_site)
    start = np.concatenate([[0], np.cumsum(per_site)[:-1]])
    pos = np.arange(n_queues) - start[site]
    kind = np.empty(n_queues, dtype=np.int64)
    first, second, rest = pos == 0, pos == 1, pos >= 2
    kind[first] = rng.choice([K["UNI"], K["MCORE"], K["SCORE"]], size=int(first.sum()), p=[0.6, 0.25, 0.15])
    kind[second] = rng.choice([K["ANA"], K["MCORE"], K["UNI"]], size=int(second.sum()), p=[0.72, 0.16, 0.12])
    kind[rest] = rng.choice([K[k] for k, _ in _POOL], size=int(rest.sum()), p=[p for _, p in _POOL])
    kind[(kind == K["HPC"]) & (sites.tier[site] <= 1)] = K["MCORE"]  # HPC centres are attached to tier-2 sites
    return site, start, first, kind


def _names(prefix: np.ndarray, kind: np.ndarray, first: np.ndarray) -> np.ndarray:
    """CRIC-like queue names from the site prefix and the kind; a site's first unified queue is the bare prefix."""
    names: list[str] = []
    seen: dict[str, int] = {}
    for p, k, first_q in zip(prefix.tolist(), kind.tolist(), first.tolist(), strict=True):
        base = p if (first_q and k == K["UNI"]) else _KIND_NAME[KINDS[k]].format(p=p)
        c = seen.get(base, 0) + 1
        seen[base] = c
        names.append(base if c == 1 else f"{base}_{c}")
    return np.array(names, dtype=object)


def _cores_and_status(
    rng: np.random.Generator, sites: Sites, site: np.ndarray, kind: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Core count by kind, and status (test queues in test, sites in downtime offline)."""
    n = len(kind)
    cc = np.ones(n, dtype=np.int64)
    cc[_is(kind, "UNI", "HIMEM", "TEST", "ES", "ARM")] = 8
    m = _is(kind, "MCORE")
    cc[m] = rng.choice([8, 16], size=int(m.sum()), p=[0.93, 0.07])
    m = _is(kind, "ANA")
    cc[m] = rng.choice([1, 0, 8], size=int(m.sum()), p=[0.75, 0.2, 0.05])
    m = _is(kind, "HPC")
    cc[m] = rng.choice([64, 16, 0], size=int(m.sum()), p=[0.5, 0.3, 0.2])
    status = rng.choice(
        np.array(["online", "offline", "brokeroff", "standby", "test", "paused"], dtype=object),
        size=n,
        p=[0.9, 0.035, 0.035, 0.02, 0.005, 0.005],
    )
    m = _is(kind, "TEST", "ANATEST")
    status[m] = rng.choice(np.array(["test", "brokeroff"], dtype=object), size=int(m.sum()), p=[0.8, 0.2])
    status[np.isin(site, np.concatenate([sites.story["downtime"], sites.story["sat_downtime"]]))] = "offline"
    return cc, status


def _limits(rng: np.random.Generator, kind: np.ndarray, cc: np.ndarray, t1: np.ndarray) -> dict[str, Any]:
    """Memory, walltime and disk limits, core power, direct access and the transferring limit."""
    n = len(kind)
    mem_cores = np.where(cc == 0, 8, cc)
    per_core_rss = rng.choice([2000, 2500, 3000, 4000], size=n, p=[0.45, 0.2, 0.15, 0.2])
    per_core_rss = np.where(_is(kind, "HIMEM"), rng.choice([5000, 6000, 8000], size=n), per_core_rss)
    per_core_rss = np.where(_is(kind, "LOMEM"), rng.choice([1000, 1500], size=n), per_core_rss)
    big_ana = _is(kind, "ANA") & (rng.random(n) < 0.06)
    per_core_rss = np.where(big_ana, 8000, per_core_rss)
    maxrss = per_core_rss * mem_cores
    minrss = np.where(_is(kind, "HIMEM"), 2500 * mem_cores, np.where(big_ana, 4000 * mem_cores, 0))
    maxtime = rng.choice([86400, 129600, 172800, 259200, 345600], size=n, p=[0.15, 0.1, 0.4, 0.2, 0.15])
    maxtime = np.where(_is(kind, "SHORT"), rng.choice([3600, 7200, 14400, 43200], size=n), maxtime)
    mintime = np.where(_is(kind, "HPC"), rng.choice([0, 3600, 7200, 14400], size=n), 0)
    mintime = np.where(rng.random(n) < 0.01, 3600, mintime)
    per_core_wdir = rng.choice([14000, 16000, 18000, 20000], size=n)
    per_core_wdir = np.where(rng.random(n) < 0.03, rng.choice([1500, 2000, 3000], size=n), per_core_wdir)
    maxwdir = per_core_wdir * mem_cores
    corepower = np.round(rng.uniform(8.0, 15.0, n), 1)
    direct = rng.random(n) < np.where(t1, 0.8, 0.4)
    transferringlimit = np.where(rng.random(n) < 0.15, rng.choice([1000, 3000, 5000], size=n), 0)
    return {
        "corepower": corepower,
        "maxrss": maxrss,
        "minrss": minrss,
        "maxtime": maxtime,
        "mintime": mintime,
        "maxwdir": maxwdir,
        "direct_access_lan": direct,
        "transferringlimit": transferringlimit,
    }


def _software_settings(rng: np.random.Generator, kind: np.ndarray, t1: np.ndarray) -> dict[str, Any]:
    """Releases (mostly AUTO), job seed (event service), catch-all flags."""
    n = len(kind)
    rel_draw = rng.random(n)
    releases: list[list[str]] = [
        ["AUTO"] if r < 0.85 else ["ANY"] if r < 0.96 else list(_EXPLICIT_RELEASES[i % len(_EXPLICIT_RELEASES)])
        for i, r in enumerate(rel_draw.tolist())
    ]
    jobseed = np.full(n, "std", dtype=object)
    jobseed[_is(kind, "ES")] = "es"
    m = _is(kind, "HPC")
    jobseed[m] = rng.choice(np.array(["all", "es"], dtype=object), size=int(m.sum()))
    m = _is(kind, "UNI") & t1
    jobseed[m] = rng.choice(np.array(["eshigh", "std", "all"], dtype=object), size=int(m.sum()), p=[0.3, 0.6, 0.1])
    catchall = np.full(n, "", dtype=object)
    catchall[_is(kind, "GPU")] = "gpu"
    m = _is(kind, "HPC") & (rng.random(n) < 0.5)
    catchall[m] = "useJumboJobs"
    catchall[(catchall == "") & (rng.random(n) < 0.02)] = "disableReassign"
    return {"releases": releases, "jobseed": jobseed, "capability": _KIND_CAPABILITY[kind], "catchall": catchall}


def _policies(rng: np.random.Generator, kind: np.ndarray, qtype: np.ndarray) -> dict[str, Any]:
    """Fair-share policy, worker-node connectivity, disk IO limit and average, analysis site class, VP flag."""
    n = len(kind)
    fair = np.full(n, "", dtype=object)
    m = rng.random(n) < 0.07
    fair[m] = rng.choice(np.array(_FAIRSHARE, dtype=object), size=int(m.sum()))
    wnconn = rng.choice(np.array(_WNCONN, dtype=object), size=n, p=_WNCONN_P)
    maxdiskio = np.where(rng.random(n) < 0.2, rng.choice([2000, 3000, 5000], size=n), 0)
    diskio_avg = np.round(rng.lognormal(np.log(800.0), 0.5, n), 1)
    over = (maxdiskio > 0) & (rng.random(n) < 0.25)
    diskio_avg = np.where(over, np.round(maxdiskio * rng.uniform(1.1, 1.5, n), 1), diskio_avg)
    anal = np.isin(qtype, ("analysis", "unified"))
    site_class = np.where(anal, rng.choice([1.0, 0.0, -1.0, np.nan], size=n, p=[0.35, 0.35, 0.2, 0.1]), np.nan)
    return {
        "fairsharepolicy": fair,
        "wnconnectivity": wnconn,
        "maxdiskio": maxdiskio,
        "diskio_avg": diskio_avg,
        "site_class": site_class,
        "is_vp": _is(kind, "VP"),
    }


def _publish_aglt2(q: Queues, i: int) -> None:
    """The CRIC record of AGLT2 (queue I) as published: unified, AUTO, maxdiskio 5000, transferringlimit 3000."""
    q.status[i] = "online"
    q.cols["releases"][i] = ["AUTO"]
    for col, value in (("maxrss", 48000), ("maxdiskio", 5000), ("transferringlimit", 3000)):
        q.cols[col][i] = value
    q.cols["wnconnectivity"][i] = "full#IPv4"


def make_queues(rng: np.random.Generator, sites: Sites, n_queues: int) -> Queues:
    """Queues spread over sites by size; each site starts with a unified and an analysis queue, then a mix."""
    site, start, first, kind = _layout(rng, sites, n_queues)
    aglt2 = np.flatnonzero(sites.name == "AGLT2")
    if len(aglt2):
        kind[start[aglt2[0]]] = K["UNI"]  # the seed's AUTO example queue is named AGLT2
    name = _names(sites.prefix[site], kind, first)
    qtype = _KIND_TYPE[kind]
    cc, status = _cores_and_status(rng, sites, site, kind)
    t1 = sites.tier[site] <= 1
    cols = _limits(rng, kind, cc, t1)
    cols.update(_software_settings(rng, kind, t1))
    cols.update(_policies(rng, kind, qtype))
    q = Queues(name, site, kind, qtype, status, cc, cols)
    if len(aglt2):
        _publish_aglt2(q, int(start[aglt2[0]]))
    return q
