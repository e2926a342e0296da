"""Realistic, deterministic demo grid generator: ATLAS-like sites, queues, storage, links, jobs and tasks."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from brokerage.dirac.demo import dirac_columns
from brokerage.model.gdpconfig import REGISTRY
from brokerage.model.snapshot import TABLES, GridSnapshot

__all__ = ["DEFAULT_TAKEN_AT", "demo_snapshot", "describe"]

DEFAULT_TAKEN_AT = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def _default(key: str) -> Any:
    return REGISTRY[key].default


# The demo grid is built around the gdpconfig defaults so that every rule has cases on both sides.
DISK_THRESHOLD_GB = float(_default("DISK_THRESHOLD")) * 1024.0
STORAGE_MIN_FREE_GB = float(_default("STORAGE_MIN_FREE_SIZE"))
NQUEUED_SAT_CAP = float(_default("NQUEUED_SAT_CAP"))
NQUEUED_NUC_CAP = float(_default("NQUEUED_NUC_CAP"))
NQUEUED_NUC_CAP_FOR_JOBS = float(_default("NQUEUED_NUC_CAP_FOR_JOBS"))
INACTIVE_HOURS = float(_default("INACTIVE_HOURS"))
NO_PILOT_HOURS = float(_default("NO_PILOT_HOURS"))
IO_INTENSITY_CUTOFF = float(_default("IO_INTENSITY_CUTOFF"))
MIN_BAD_JOBS = float(_default("MIN_BAD_JOBS_TO_SKIP_PQ"))
TW_DONE_JOB_STAT_H = float(_default("TW_DONE_JOB_STAT"))
BASE_QUEUE_LENGTH = float(_default("BASE_QUEUE_LENGTH_PER_PQ"))
BASE_WAIT_H = float(_default("BASE_EXPECTED_WAIT_HOUR_ON_PQ"))
BASE_USER_QUEUE = float(_default("BASE_DEFAULT_QUEUE_LENGTH_PER_PQ_USER"))
BASE_QUEUE_RATIO = float(_default("BASE_QUEUE_RATIO_ON_PQ"))
STATIC_QR_RATIO = float(_default("STATIC_MAX_QUEUE_RUNNING_RATIO"))
MAX_WAIT_H = float(_default("MAX_EXPECTED_WAIT_HOUR"))
CLASS_C_USAGE = float(_default("USAGE_THROTTLE_CLASS_C"))
HEAVY_USER_RUNNING = 1000  # running jobs of a user that a CAP_RUNNING_USER_JOBS an operator sets would catch
NETWORK_FRESH_MINUTES = 60  # the brokers read only network rows newer than this

QUEUES_PER_SITE = 3.5  # ~700 PanDA queues over ~200 ATLAS sites
MAX_SITES = 2000  # bigger grids get more queues per site, not more sites: the link matrix stays small
NUCLEUS_FRACTION = 0.1
TASK_ID_BASE = 45_000_000
DATASET_ID_BASE = 700_000_000

# --- site catalogue -----------------------------------------------------------------------------

# (site, tier, cloud, PanDA queue prefix, RSE prefix)
_NUCLEI: tuple[tuple[str, int, str, str, str], ...] = (
    ("CERN-PROD", 0, "CERN", "CERN", "CERN-PROD"),
    ("BNL-ATLAS", 1, "US", "BNL", "BNL-OSG2"),
    ("FZK-LCG2", 1, "DE", "FZK-LCG2", "FZK-LCG2"),
    ("IN2P3-CC", 1, "FR", "IN2P3-CC", "IN2P3-CC"),
    ("INFN-T1", 1, "IT", "INFN-T1", "INFN-T1"),
    ("NDGF-T1", 1, "ND", "NDGF-T1", "NDGF-T1"),
    ("PIC", 1, "ES", "PIC", "PIC"),
    ("RAL-LCG2", 1, "UK", "RAL", "RAL-LCG2-ECHO"),
    ("SARA-MATRIX", 1, "NL", "SARA-MATRIX", "SARA-MATRIX"),
    ("TRIUMF-LCG2", 1, "CA", "TRIUMF", "TRIUMF-LCG2"),
    ("AGLT2", 2, "US", "AGLT2", "AGLT2"),
    ("TOKYO-LCG2", 2, "FR", "TOKYO", "TOKYO-LCG2"),
    ("MWT2", 2, "US", "MWT2", "MWT2"),
    ("SWT2_CPB", 2, "US", "SWT2_CPB", "SWT2_CPB"),
    ("DESY-HH", 2, "DE", "DESY-HH", "DESY-HH"),
    ("LRZ-LMU", 2, "DE", "LRZ-LMU", "LRZ-LMU"),
    ("UKI-NORTHGRID-MAN-HEP", 2, "UK", "UKI-NORTHGRID-MAN-HEP", "UKI-NORTHGRID-MAN-HEP"),
    ("praguelcg2", 2, "DE", "praguelcg2", "praguelcg2"),
    ("UKI-LT2-QMUL", 2, "UK", "UKI-LT2-QMUL", "UKI-LT2-QMUL"),
    ("IFIC-LCG2", 2, "ES", "IFIC", "IFIC-LCG2"),
)

# (site, tier, cloud)
_SATELLITES: tuple[tuple[str, int, str], ...] = (
    ("NET2", 2, "US"),
    ("OU_OCHEP_SWT2", 2, "US"),
    ("UTA_SWT2", 2, "US"),
    ("WT2", 2, "US"),
    ("NERSC", 2, "US"),
    ("CA-SFU-T2", 2, "CA"),
    ("CA-VICTORIA-WESTGRID-T2", 2, "CA"),
    ("CA-WATERLOO-T2", 2, "CA"),
    ("GoeGrid", 2, "DE"),
    ("wuppertalprod", 2, "DE"),
    ("UNI-FREIBURG", 2, "DE"),
    ("MPPMU", 2, "DE"),
    ("DESY-ZN", 2, "DE"),
    ("CSCS-LCG2", 2, "DE"),
    ("UNIBE-LHEP", 2, "DE"),
    ("CYFRONET-LCG2", 2, "DE"),
    ("PSNC", 2, "DE"),
    ("FMPhI-UNIBA", 2, "DE"),
    ("IEPSAS-Kosice", 2, "DE"),
    ("GRIF", 2, "FR"),
    ("IN2P3-CPPM", 2, "FR"),
    ("IN2P3-LAPP", 2, "FR"),
    ("IN2P3-LPC", 2, "FR"),
    ("IN2P3-LPSC", 2, "FR"),
    ("BEIJING-LCG2", 2, "FR"),
    ("RO-07-NIPNE", 2, "FR"),
    ("RO-02-NIPNE", 2, "FR"),
    ("RO-14-ITIM", 2, "FR"),
    ("RO-16-UAIC", 2, "FR"),
    ("INFN-NAPOLI-ATLAS", 2, "IT"),
    ("INFN-MILANO-ATLASC", 2, "IT"),
    ("INFN-ROMA1", 2, "IT"),
    ("INFN-FRASCATI", 2, "IT"),
    ("IFAE", 2, "ES"),
    ("UAM-LCG2", 2, "ES"),
    ("NCG-INGRID-PT", 2, "ES"),
    ("LIP-Lisbon", 2, "ES"),
    ("UKI-SCOTGRID-GLASGOW", 2, "UK"),
    ("UKI-NORTHGRID-LANCS-HEP", 2, "UK"),
    ("UKI-NORTHGRID-LIV-HEP", 2, "UK"),
    ("UKI-SOUTHGRID-OX-HEP", 2, "UK"),
    ("UKI-SOUTHGRID-RALPP", 2, "UK"),
    ("UKI-LT2-RHUL", 2, "UK"),
    ("UKI-SCOTGRID-ECDF", 2, "UK"),
    ("UKI-NORTHGRID-SHEF-HEP", 2, "UK"),
    ("UKI-SOUTHGRID-BHAM-HEP", 2, "UK"),
    ("UKI-SOUTHGRID-SUSX", 2, "UK"),
    ("NIKHEF-ELPROD", 1, "NL"),
    ("IL-TAU-HEP", 2, "NL"),
    ("TECHNION-HEP", 2, "NL"),
    ("WEIZMANN-LCG2", 2, "NL"),
    ("TR-10-ULAKBIM", 2, "NL"),
    ("BEgrid-ULB-VUB", 2, "NL"),
    ("SiGNET", 2, "ND"),
    ("ARNES", 2, "ND"),
    ("CERN-P1", 2, "CERN"),
)
_CLOUDS = ("US", "DE", "FR", "UK", "IT", "ES", "NL", "CA", "ND", "CERN")
_CLOUD_P = (0.22, 0.2, 0.14, 0.12, 0.08, 0.06, 0.06, 0.05, 0.04, 0.03)

# Which nucleus (position in _NUCLEI) plays which part in the demo.
_NUCLEUS_STORIES: dict[str, tuple[int, ...]] = {
    "allow": (1, 11),  # bareNucleus=allow: BNL-ATLAS, TOKYO-LCG2
    "backlogged": (3,),  # > NQUEUED_NUC_CAP files queued to it
    "nearly_full": (4, 14),  # DATADISK free+expired below DISK_THRESHOLD
    "read_wan_test": (5,),
    "links_full": (13,),  # > NQUEUED_NUC_CAP_FOR_JOBS files queued to it
    "write_wan_off": (15,),
    "downtime": (16,),  # every queue offline: no queue can run jobs
    "inactive": (17,),  # nucleus state not ACTIVE
    "only": (19,),  # bareNucleus=only
}


@dataclass
class _Sites:
    """The ATLAS sites of the demo grid as parallel arrays, plus which sites play which story."""

    name: np.ndarray
    prefix: np.ndarray
    rse: np.ndarray
    tier: np.ndarray
    cloud: np.ndarray
    nucleus: np.ndarray
    bare: np.ndarray
    state: np.ndarray
    weight: np.ndarray
    story: dict[str, np.ndarray]

    @property
    def n(self) -> int:
        """Number of sites."""
        return len(self.name)


def _site_catalog(rng: np.random.Generator, n_sites: int) -> _Sites:
    """Real ATLAS nuclei and satellites first, then generated tier-2/3 names; stories by nucleus position."""
    n_nuc = 1 if n_sites < 3 else min(len(_NUCLEI), max(2, round(n_sites * NUCLEUS_FRACTION)))
    n_sat = n_sites - n_nuc
    nuclei = _NUCLEI[:n_nuc]
    real = _SATELLITES[: min(n_sat, len(_SATELLITES))]
    n_gen = n_sat - len(real)
    gen_cloud = rng.choice(len(_CLOUDS), size=n_gen, p=_CLOUD_P)
    gen_tier = np.where(rng.random(n_gen) < 0.7, 2, 3)
    counters: dict[tuple[int, int], int] = {}
    gen_names = []
    for c, t in zip(gen_cloud.tolist(), gen_tier.tolist(), strict=True):
        k = counters.get((c, t), 0) + 1
        counters[(c, t)] = k
        gen_names.append(f"{_CLOUDS[c]}-T{t}-{k:03d}")
    name = [n[0] for n in nuclei] + [s[0] for s in real] + gen_names
    prefix = [n[3] for n in nuclei] + [s[0] for s in real] + gen_names
    rse = [n[4] for n in nuclei] + [s[0] for s in real] + gen_names
    tier = [n[1] for n in nuclei] + [s[1] for s in real] + gen_tier.tolist()
    cloud = [n[2] for n in nuclei] + [s[2] for s in real] + [_CLOUDS[c] for c in gen_cloud.tolist()]
    weight = np.concatenate(
        [
            np.array([30.0 if t == 0 else 18.0 if t == 1 else 8.0 for t in tier[:n_nuc]]),
            rng.lognormal(np.log(3.0), 0.4, len(real)),
            np.where(gen_tier == 2, rng.lognormal(np.log(1.6), 0.4, n_gen), 0.6),
        ]
    )
    nucleus = np.arange(n_sites) < n_nuc
    story = {k: np.array([p for p in pos if p < n_nuc], dtype=np.int64) for k, pos in _NUCLEUS_STORIES.items()}
    bare = np.full(n_sites, "", dtype=object)
    bare[story["allow"]] = "allow"
    bare[story["only"]] = "only"
    state = np.full(n_sites, "ACTIVE", dtype=object)
    state[story["inactive"]] = "INACTIVE"
    sats = np.arange(n_nuc, n_sites)
    perm = rng.permutation(sats)
    n_full = max(2, round(0.04 * len(sats))) if len(sats) >= 8 else 0
    n_down = max(1, round(0.02 * len(sats))) if len(sats) >= 8 else 0
    # four satellites, each with one detailed status down, so that every blacklist code has a case
    story["sat_blacklist"] = perm[:4] if len(sats) >= 8 else np.zeros(0, dtype=np.int64)
    story["sat_full"] = perm[4 : 4 + n_full]
    story["sat_downtime"] = perm[4 + n_full : 4 + n_full + n_down]
    return _Sites(
        name=np.array(name, dtype=object),
        prefix=np.array(prefix, dtype=object),
        rse=np.array(rse, dtype=object),
        tier=np.array(tier, dtype=np.int64),
        cloud=np.array(cloud, dtype=object),
        nucleus=nucleus,
        bare=bare,
        state=state,
        weight=weight,
        story=story,
    )


# --- queues -------------------------------------------------------------------------------------

KINDS = ("UNI", "ANA", "SCORE", "MCORE", "HIMEM", "TEST", "ANATEST", "VP", "GPU", "SHORT", "HPC", "ES", "ARM", "LOMEM")
_K = {k: i for i, k in enumerate(KINDS)}
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
# relative size of a queue of each kind (running jobs)
_KIND_SIZE = np.array([1.5, 0.6, 0.5, 1.0, 0.4, 0.02, 0.02, 0.4, 0.05, 0.3, 2.0, 0.5, 0.3, 0.3])
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
class _Queues:
    """Static queue columns (CRIC) as arrays, plus the kind and site of each queue."""

    name: np.ndarray
    site: np.ndarray  # index into _Sites
    kind: np.ndarray  # index into KINDS
    type: np.ndarray
    status: np.ndarray
    corecount: np.ndarray
    cols: dict[str, Any]

    @property
    def n(self) -> int:
        """Number of queues."""
        return len(self.name)


def _split(total: int, weight: np.ndarray) -> np.ndarray:
    """Split TOTAL into integers proportional to WEIGHT (largest remainder)."""
    share = total * weight / weight.sum()
    out = np.floor(share).astype(np.int64)
    left = total - int(out.sum())
    if left > 0:
        out[np.argsort(-(share - out), kind="stable")[:left]] += 1
    return out


def _queues(rng: np.random.Generator, sites: _Sites, n_queues: int) -> _Queues:
    """Queues spread over sites by size; each site starts with a unified and an analysis queue, then a mix."""
    per_site = 1 + _split(n_queues - sites.n, sites.weight)
    site = np.repeat(np.arange(sites.n), per_site)
    start = np.concatenate([[0], np.cumsum(per_site)[:-1]])
    pos = np.arange(n_queues) - start[site]
    n = n_queues
    kind = np.empty(n, dtype=np.int64)
    first, second, rest = pos == 0, pos == 1, pos >= 2
    kind[first] = rng.choice([_K["UNI"], _K["MCORE"], _K["SCORE"]], size=int(first.sum()), p=[0.6, 0.25, 0.15])
    kind[second] = rng.choice([_K["ANA"], _K["MCORE"], _K["UNI"]], size=int(second.sum()), p=[0.72, 0.16, 0.12])
    kind[rest] = rng.choice([_K[k] for k, _ in _POOL], size=int(rest.sum()), p=[p for _, p in _POOL])
    kind[(kind == _K["HPC"]) & (sites.tier[site] <= 1)] = _K["MCORE"]  # HPC centres are attached to tier-2 sites
    aglt2 = np.flatnonzero(sites.name == "AGLT2")
    if len(aglt2):
        kind[start[aglt2[0]]] = _K["UNI"]  # the seed's AUTO example queue is named AGLT2
    names: list[str] = []
    seen: dict[str, int] = {}
    for p, k, first_q in zip(sites.prefix[site].tolist(), kind.tolist(), first.tolist(), strict=True):
        base = p if (first_q and k == _K["UNI"]) else _KIND_NAME[KINDS[k]].format(p=p)
        c = seen.get(base, 0) + 1
        seen[base] = c
        names.append(base if c == 1 else f"{base}_{c}")
    name = np.array(names, dtype=object)
    qtype = _KIND_TYPE[kind]

    def is_kind(*ks: str) -> np.ndarray:
        return np.isin(kind, [_K[k] for k in ks])

    cc = np.ones(n, dtype=np.int64)
    cc[is_kind("UNI", "HIMEM", "TEST", "ES", "ARM")] = 8
    m = is_kind("MCORE")
    cc[m] = rng.choice([8, 16], size=int(m.sum()), p=[0.93, 0.07])
    m = is_kind("ANA")
    cc[m] = rng.choice([1, 0, 8], size=int(m.sum()), p=[0.75, 0.2, 0.05])
    m = is_kind("HPC")
    cc[m] = rng.choice([64, 16, 0], size=int(m.sum()), p=[0.5, 0.3, 0.2])
    mem_cores = np.where(cc == 0, 8, cc)

    status = rng.choice(
        np.array(["online", "offline", "brokeroff", "standby", "test", "paused"], dtype=object),
        size=n,
        p=[0.9, 0.035, 0.035, 0.02, 0.005, 0.005],
    )
    m = is_kind("TEST", "ANATEST")
    status[m] = rng.choice(np.array(["test", "brokeroff"], dtype=object), size=int(m.sum()), p=[0.8, 0.2])
    status[np.isin(site, np.concatenate([sites.story["downtime"], sites.story["sat_downtime"]]))] = "offline"

    per_core_rss = rng.choice([2000, 2500, 3000, 4000], size=n, p=[0.45, 0.2, 0.15, 0.2])
    per_core_rss = np.where(is_kind("HIMEM"), rng.choice([5000, 6000, 8000], size=n), per_core_rss)
    per_core_rss = np.where(is_kind("LOMEM"), rng.choice([1000, 1500], size=n), per_core_rss)
    big_ana = is_kind("ANA") & (rng.random(n) < 0.06)
    per_core_rss = np.where(big_ana, 8000, per_core_rss)
    maxrss = per_core_rss * mem_cores
    minrss = np.where(is_kind("HIMEM"), 2500 * mem_cores, np.where(big_ana, 4000 * mem_cores, 0))
    maxtime = rng.choice([86400, 129600, 172800, 259200, 345600], size=n, p=[0.15, 0.1, 0.4, 0.2, 0.15])
    maxtime = np.where(is_kind("SHORT"), rng.choice([3600, 7200, 14400, 43200], size=n), maxtime)
    mintime = np.where(is_kind("HPC"), rng.choice([0, 3600, 7200, 14400], size=n), 0)
    mintime = np.where(rng.random(n) < 0.01, 3600, mintime)
    per_core_wdir = rng.choice([14000, 16000, 18000, 20000], size=n)
    per_core_wdir = np.where(rng.random(n) < 0.03, rng.choice([1500, 2000, 3000], size=n), per_core_wdir)
    maxwdir = per_core_wdir * mem_cores
    corepower = np.round(rng.uniform(8.0, 15.0, n), 1)
    t1 = sites.tier[site] <= 1
    direct = rng.random(n) < np.where(t1, 0.8, 0.4)
    transferringlimit = np.where(rng.random(n) < 0.15, rng.choice([1000, 3000, 5000], size=n), 0)
    rel_draw = rng.random(n)
    releases: list[list[str]] = [
        ["AUTO"] if r < 0.85 else ["ANY"] if r < 0.96 else list(_EXPLICIT_RELEASES[i % len(_EXPLICIT_RELEASES)])
        for i, r in enumerate(rel_draw.tolist())
    ]
    jobseed = np.full(n, "std", dtype=object)
    jobseed[is_kind("ES")] = "es"
    m = is_kind("HPC")
    jobseed[m] = rng.choice(np.array(["all", "es"], dtype=object), size=int(m.sum()))
    m = is_kind("UNI") & t1
    jobseed[m] = rng.choice(np.array(["eshigh", "std", "all"], dtype=object), size=int(m.sum()), p=[0.3, 0.6, 0.1])
    catchall = np.full(n, "", dtype=object)
    catchall[is_kind("GPU")] = "gpu"
    m = is_kind("HPC") & (rng.random(n) < 0.5)
    catchall[m] = "useJumboJobs"
    catchall[(catchall == "") & (rng.random(n) < 0.02)] = "disableReassign"
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

    cols: dict[str, Any] = {
        "corepower": corepower,
        "maxrss": maxrss,
        "minrss": minrss,
        "maxtime": maxtime,
        "mintime": mintime,
        "maxwdir": maxwdir,
        "direct_access_lan": direct,
        "transferringlimit": transferringlimit,
        "releases": releases,
        "jobseed": jobseed,
        "capability": _KIND_CAPABILITY[kind],
        "catchall": catchall,
        "fairsharepolicy": fair,
        "wnconnectivity": wnconn,
        "maxdiskio": maxdiskio,
        "diskio_avg": diskio_avg,
        "site_class": site_class,
        "is_vp": is_kind("VP"),
    }
    q = _Queues(name, site, kind, qtype, status, cc, cols)
    if len(aglt2):
        # the CRIC record of AGLT2 as published (unified, AUTO, maxdiskio 5000, transferringlimit 3000)
        i = int(start[aglt2[0]])
        q.status[i] = "online"
        releases[i] = ["AUTO"]
        for col, value in (("maxrss", 48000), ("maxdiskio", 5000), ("transferringlimit", 3000)):
            cols[col][i] = value
        cols["wnconnectivity"][i] = "full#IPv4"
    return q


# --- storage ------------------------------------------------------------------------------------


def _endpoints(rng: np.random.Generator, sites: _Sites, q: _Queues) -> dict[str, Any]:
    """DDM endpoints: DATADISK everywhere, DATATAPE at tier 0/1, some SCRATCHDISK, VP_DISK where VP queues are."""
    n = sites.n
    tier = sites.tier
    has_vp = np.bincount(q.site[q.kind == _K["VP"]], minlength=n) > 0
    rows_site: list[np.ndarray] = []
    rows_type: list[str] = []
    blocks = [
        ("DATADISK", np.arange(n)),
        ("DATATAPE", np.flatnonzero(tier <= 1)),
        ("SCRATCHDISK", np.flatnonzero(rng.random(n) < 0.5)),
        ("VP_DISK", np.flatnonzero(has_vp)),
    ]
    for typ, idx in blocks:
        rows_site.append(idx)
        rows_type += [typ] * len(idx)
    site = np.concatenate(rows_site)
    typ = np.array(rows_type, dtype=object)
    m = len(site)
    name = np.array([f"{r}_{t}" for r, t in zip(sites.rse[site].tolist(), rows_type, strict=True)], dtype=object)
    is_tape = typ == "DATATAPE"
    disk = typ == "DATADISK"
    st = tier[site]
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
    status = {}
    for act in ("read_lan", "write_lan", "read_wan", "write_wan"):
        r = rng.random(m)
        status[act] = np.where(r < 0.012, "OFF", np.where(r < 0.02, "TEST", "ON")).astype(object)
    # zip stops at the shortest: small grids have fewer than four such satellites
    forced = zip(
        ("read_lan", "write_lan", "read_wan", "write_wan"),
        ("OFF", "TEST", "OFF", "TEST"),
        sites.story["sat_blacklist"].tolist(),
        strict=False,
    )
    for act, value, s in forced:
        status[act][disk & (site == s)] = value
    for act, value, story in (("read_wan", "TEST", "read_wan_test"), ("write_wan", "OFF", "write_wan_off")):
        status[act][disk & np.isin(site, sites.story[story])] = value
    down = np.isin(site, sites.story["sat_downtime"])
    for act in status:
        status[act][down] = "OFF"
    return {
        "ddm_endpoint_name": name,
        "site_name": sites.name[site],
        "type": typ,
        "is_tape": is_tape,
        "space_total": np.round(total, 1),
        "space_free": np.round(free, 1),
        "space_expired": np.round(expired, 1),
        **status,
        "_site": site,
    }


def _relations(sites: _Sites, q: _Queues, ep: dict[str, Any]) -> dict[str, Any]:
    """Every queue reads from its site's DATADISK (default write); tier 0/1 queues also from DATATAPE; VP and SCRATCH."""
    ep_site, ep_type, ep_name = ep["_site"], ep["type"], ep["ddm_endpoint_name"]
    parts_q, parts_e, parts_w = [], [], []
    for typ, mask, default in (
        ("DATADISK", np.ones(q.n, dtype=bool), True),
        ("DATATAPE", sites.tier[q.site] <= 1, False),
        ("VP_DISK", q.kind == _K["VP"], False),
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


# --- network ------------------------------------------------------------------------------------


def _network(rng: np.random.Generator, sites: _Sites, taken: pd.Timestamp) -> dict[str, Any]:
    """NETWORK_MATRIX_KV rows for every site -> nucleus link (closeness, queued files, FTS throughput)."""
    nuc = np.flatnonzero(sites.nucleus)
    src = np.repeat(np.arange(sites.n), len(nuc))
    dst = np.tile(nuc, sites.n)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    n = len(src)
    same_cloud = sites.cloud[src] == sites.cloud[dst]
    big_pair = (sites.tier[src] <= 1) & (sites.tier[dst] <= 1)  # tier 0/1 are linked by the LHC optical network
    closeness = np.where(same_cloud | big_pair, rng.integers(0, 4, n), rng.integers(3, 12, n)).astype(float)
    blocked = rng.random(n) < 0.004
    if n >= 10:
        blocked[rng.choice(n, size=3, replace=False)] = True
    closeness[blocked] = -1.0
    has_close = (rng.random(n) < 0.95) | blocked
    # files queued: most links idle, a few busy; totals per nucleus stay below NQUEUED_NUC_CAP unless a story says so
    queued = np.where(rng.random(n) < 0.55, 0.0, np.floor(rng.exponential(12.0, n)))
    has_queued = rng.random(n) < 0.88
    busy = np.zeros(n, dtype=bool)
    story_nuc = np.concatenate([sites.story["backlogged"], sites.story["links_full"]])
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
    express = np.floor(rng.exponential(2.0, n))
    has_express = rng.random(n) < 0.5
    base = rng.lognormal(np.log(25.0), 1.2, n) * np.where(big_pair, 6.0, 1.0)
    pattern = rng.choice(5, size=n, p=[0.45, 0.2, 0.15, 0.15, 0.05])  # all / 1d+1w / 1w / none / 1h only
    has_1h = (pattern == 0) | (pattern == 4)
    has_1d = pattern <= 1
    has_1w = pattern <= 2
    link_age = rng.uniform(60.0, 55 * 60.0, n)
    stale_link = rng.random(n) < 0.03
    stale_link[blocked | busy] = False  # the cases the demo is about stay fresh
    link_age = np.where(stale_link, rng.uniform(2 * 3600.0, 48 * 3600.0, n), link_age)
    story_links = np.isin(dst, story_nuc)
    link_age[story_links] = np.minimum(link_age[story_links], 50 * 60.0)
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
        "ts": _times(taken, age),
    }


def _last_pilot_age(npilot: np.ndarray, laststart_age: np.ndarray) -> np.ndarray:
    """Seconds since the last pilot, consistent with NPILOT pilots over NO_PILOT_HOURS (no random draw, so the
    rest of the demo grid stays as it was): pilots arriving evenly, the last one half a gap ago; a queue
    without pilots last saw one an hour past the window or at its last job start, whichever is older."""
    window = NO_PILOT_HOURS * 3600.0
    silent = np.maximum(np.nan_to_num(laststart_age, nan=0.0), window + 3600.0)
    age = np.where(npilot > 0, window / (2.0 * np.maximum(npilot, 1)), silent)
    return np.where((npilot <= 0) & np.isnan(laststart_age), np.nan, age)  # never seen a pilot


def _times(taken: pd.Timestamp, seconds_ago: np.ndarray) -> pd.DatetimeIndex:
    """Timestamps SECONDS_AGO before TAKEN, rounded to the second (NaN -> missing)."""
    return taken - pd.to_timedelta(np.round(seconds_ago), unit="s")


# --- jobs ---------------------------------------------------------------------------------------

PROD_SHARES = (
    "MC Simulation",
    "MC Event Generation",
    "MC Reconstruction",
    "Data Derivations",
    "Reprocessing",
    "MC Merging",
    "Express",
    "Validation",
)
ANAL_SHARES = ("User Analysis", "Express Analysis", "Group Analysis")
SHARES = PROD_SHARES + ANAL_SHARES
_PROD_POP = np.array([0.34, 0.12, 0.15, 0.16, 0.06, 0.09, 0.03, 0.05])
_ANAL_P = (0.85, 0.05, 0.10)
COUNT_STATUSES = ("running", "activated", "assigned", "starting", "defined", "transferring")
USER_STATUSES = ("running", "activated", "assigned", "starting", "defined")
_S = {s: i for i, s in enumerate(COUNT_STATUSES)}
_SHARE_USAGE = {
    "User Analysis": 92.0,  # above USAGE_THROTTLE_CLASS_C (90) and below ..._B (95): class C tasks are throttled
    "Express Analysis": 45.0,
    "Group Analysis": 78.0,
    "MC Simulation": 104.0,
    "MC Event Generation": 87.0,
    "MC Reconstruction": 96.0,
    "Data Derivations": 112.0,
    "Reprocessing": 35.0,
    "MC Merging": 60.0,
    "Express": 20.0,
    "Validation": 15.0,
}
_GROUPS = ("phys-higgs", "phys-susy", "phys-top", "phys-exotics", "phys-sm", "perf-egamma", "perf-muons", "perf-jets")
_FIRST = (
    "Anna", "Ben", "Chiara", "David", "Elena", "Felix", "Giulia", "Hiro", "Ines", "Jakub", "Kenji", "Laura",
    "Marco", "Nadia", "Oscar", "Paula", "Qiang", "Rosa", "Stefan", "Tomoko", "Ugo", "Vera", "Wei", "Yuki",
)  # fmt: skip
_LAST = (
    "Abe", "Bauer", "Costa", "Dubois", "Eriksson", "Fischer", "Garcia", "Horvat", "Ivanova", "Jensen", "Kowalski",
    "Lindqvist", "Moreau", "Novak", "Okafor", "Petrov", "Quinn", "Rossi", "Schmidt", "Tanaka", "Urban", "Varga",
    "Wang", "Yilmaz",
)  # fmt: skip


@dataclass
class _Jobs:
    """Job counts per queue, share and status; user counts; users; and the dynamic queue columns."""

    jc: np.ndarray  # (queue, share, status)
    pairs: dict[str, np.ndarray]  # user_job_counts per (queue, user, share)
    users: np.ndarray  # user names
    user_group: np.ndarray
    user_pop: np.ndarray
    dynamic: dict[str, Any]


def _user_names(rng: np.random.Generator, n: int) -> np.ndarray:
    """N distinct personal names, as PanDA shows prodUserName."""
    combos = [f"{f} {last}" for f in _FIRST for last in _LAST]
    pick = rng.permutation(len(combos))
    names = [combos[i] for i in pick[: min(n, len(combos))]]
    names += [f"{combos[pick[i % len(combos)]]} {i // len(combos) + 1}" for i in range(len(names), n)]
    return np.array(names, dtype=object)


def _jobs(rng: np.random.Generator, sites: _Sites, q: _Queues, taken: pd.Timestamp) -> _Jobs:
    """Running and queued jobs per queue and share, user jobs at analysis queues, and pilot/worker activity."""
    n = q.n
    G, S = len(SHARES), len(COUNT_STATUSES)
    online = q.status == "online"
    kind = q.kind
    sf = np.sqrt(sites.weight[q.site] / np.median(sites.weight))
    job_cores = np.where(q.corecount == 0, 4, q.corecount)
    cores = rng.lognormal(np.log(900.0), 0.9, n) * sf * _KIND_SIZE[kind]
    R = np.round(cores / job_cores)
    R = np.where(q.status == "brokeroff", np.round(R * rng.uniform(0.0, 0.3, n)), R)
    R = np.where(q.status == "standby", np.round(R * 0.5), R)
    R = np.where(np.isin(q.status, ("offline", "paused")), 0, R)
    R = np.where(q.status == "test", np.minimum(R, rng.integers(0, 20, n)), R)

    draw = rng.random(n)
    bootstrap = online & (draw < 0.04)
    low = online & (draw >= 0.04) & (draw < 0.08)
    R = np.where(bootstrap, 0, np.where(low, rng.integers(1, 20, n), R))
    overloaded = online & ~bootstrap & (rng.random(n) < np.where(kind == _K["VP"], 0.4, 0.06))
    prod_capable = q.type != "analysis"
    many_tr = online & prod_capable & ~bootstrap & (R > 0) & (rng.random(n) < 0.03)
    inactive = online & ~bootstrap & (R > 0) & (rng.random(n) < 0.03)

    act_ratio = np.where(overloaded, rng.uniform(2.5, 5.0, n), rng.lognormal(np.log(0.35), 0.6, n))
    as_ratio = np.where(rng.random(n) < 0.05, rng.uniform(1.5, 3.0, n), rng.uniform(0.02, 0.4, n))
    st_ratio = rng.uniform(0.005, 0.03, n)
    df_ratio = rng.uniform(0.01, 0.08, n)
    tr_ratio = rng.uniform(0.02, 0.15, n)
    stuck = np.isin(q.status, ("offline", "brokeroff")) & (rng.random(n) < 0.4)

    jc = np.zeros((n, G, S), dtype=np.int64)
    R_prod = np.where(q.type == "unified", np.round(R * 0.85), np.where(q.type == "production", R, 0))
    R_anal = R - R_prod
    f = rng.dirichlet(_PROD_POP * 3.0, size=n)
    f[f < 0.04] = 0.0
    f[np.arange(n), np.argmax(f, axis=1)] += 1e-9
    f /= f.sum(axis=1, keepdims=True)
    run = np.round(R_prod[:, None] * f)
    noise = rng.lognormal(0.0, 0.3, (n, len(PROD_SHARES)))
    act = np.round(run * act_ratio[:, None] * noise)
    act = np.where(stuck[:, None] & prod_capable[:, None] & (f > 0.2), rng.integers(1, 200, (n, len(PROD_SHARES))), act)
    jc[:, : len(PROD_SHARES), _S["running"]] = run
    jc[:, : len(PROD_SHARES), _S["activated"]] = act
    jc[:, : len(PROD_SHARES), _S["assigned"]] = np.round(act * as_ratio[:, None] * noise)
    jc[:, : len(PROD_SHARES), _S["starting"]] = np.round(run * st_ratio[:, None])
    jc[:, : len(PROD_SHARES), _S["defined"]] = np.round(run * df_ratio[:, None])
    tr = np.round(run * tr_ratio[:, None])
    limit = np.where(q.cols["transferringlimit"] > 0, q.cols["transferringlimit"], 2000)
    tr_total = np.maximum(limit, 2 * R_prod) * rng.uniform(1.2, 2.0, n)
    tr = np.where(many_tr[:, None], np.round(tr_total[:, None] * f), tr)
    jc[:, : len(PROD_SHARES), _S["transferring"]] = tr

    n_users = int(np.clip(round(n * 0.3), 20, 3000))
    users = _user_names(rng, n_users)
    user_pop = 1.0 / (np.arange(n_users) + 5.0) ** 1.1
    user_pop /= user_pop.sum()
    user_group = rng.choice(np.array(_GROUPS, dtype=object), size=n_users)
    aq = np.flatnonzero((q.type != "production") & (R_anal > 0))
    is_ana = q.type[aq] == "analysis"
    k = np.where(
        is_ana, np.clip(1 + rng.poisson(3 + 3 * np.minimum(sf[aq], 3.0)), 1, 40), 1 + rng.poisson(1.5, len(aq))
    )
    pq = np.repeat(aq, k)
    pu = rng.choice(n_users, size=len(pq), p=user_pop)
    pg = rng.choice(3, size=len(pq), p=_ANAL_P)
    key = (pq * n_users + pu) * 3 + pg
    key, inverse = np.unique(key, return_inverse=True)
    w = np.bincount(inverse, weights=rng.lognormal(0.0, 1.0, len(pq)), minlength=len(key))
    pq, rest = np.divmod(key, n_users * 3)
    pu, pg = np.divmod(rest, 3)
    W = np.bincount(pq, weights=w, minlength=n)
    p_run = np.round(R_anal[pq] * w / W[pq])
    p_act = np.round(p_run * act_ratio[pq] * rng.lognormal(0.0, 0.5, len(pq))) + np.where(
        rng.random(len(pq)) < 0.3, rng.integers(1, 10, len(pq)), 0
    )
    pairs = {
        "queue": pq,
        "user": pu,
        "share": pg,
        "running": p_run,
        "activated": p_act,
        "assigned": np.round(p_act * rng.uniform(0.0, 0.08, len(pq))),
        "starting": np.round(p_run * rng.uniform(0.0, 0.03, len(pq))),
        "defined": np.round(p_act * rng.uniform(0.0, 0.06, len(pq))),
    }

    # trr: jobs starting per hour over the last 6 h ~ running / mean job duration
    R_real = jc[:, :, _S["running"]].sum(axis=1) + np.bincount(pq, weights=p_run, minlength=n)
    trr = np.round(R_real / rng.uniform(1.5, 6.0, n), 1)

    # Analysis Stabilizer cases: one user with a long queue at ~10% of the analysis queues
    ua = pg == 0
    n_ua_users = np.bincount(pq[ua], minlength=n)
    cand = np.flatnonzero(online & (q.type == "analysis") & ~overloaded & (n_ua_users >= 3) & (R_anal >= 40))
    stab = rng.choice(cand, size=min(len(cand), max(3, round(0.1 * len(cand)))), replace=False) if len(cand) else cand
    stab = np.sort(stab)
    for s in stab.tolist():
        rows = np.flatnonzero(ua & (pq == s))
        victim = rows[np.argmin(pairs["running"][rows])]
        nR = float(pairs["running"][rows].sum())
        frac = max(1.0 / len(rows), pairs["running"][victim] / nR if nR > 0 else 0.0)
        others = float(sum(pairs[st][rows].sum() for st in USER_STATUSES[1:]) - pairs["activated"][victim])
        max_nq = max(BASE_QUEUE_LENGTH, STATIC_QR_RATIO * nR)
        max_len = max(BASE_USER_QUEUE, BASE_QUEUE_RATIO * nR, max_nq * frac)
        want = np.ceil(max(max_len * rng.uniform(1.3, 2.0), BASE_QUEUE_LENGTH + 10))
        pairs["activated"][victim] = want
        nq_total = others + want
        # slow to-running rate: nQ(PQ) >= BASE_EXPECTED_WAIT_HOUR_ON_PQ x trr, and MAX_EXPECTED_WAIT_HOUR x trr stays small
        trr[s] = np.round(
            min(nq_total / (BASE_WAIT_H * rng.uniform(1.2, 2.0)), 2 * STATIC_QR_RATIO * nR / MAX_WAIT_H), 1
        )

    for st in USER_STATUSES:
        np.add.at(jc[:, :, _S[st]], (pq, len(PROD_SHARES) + pg), pairs[st])
    anal_run = jc[:, len(PROD_SHARES) :, _S["running"]]
    jc[:, len(PROD_SHARES) :, _S["transferring"]] = np.round(anal_run * tr_ratio[:, None] * 0.3)
    jc[bootstrap] = 0

    running_total = jc[:, :, _S["running"]].sum(axis=1)
    waiting = jc[:, :, _S["activated"]].sum(axis=1) + jc[:, :, _S["starting"]].sum(axis=1)
    inactive &= waiting > 0
    age = rng.exponential(300.0, n)
    age = np.where(inactive, rng.uniform((INACTIVE_HOURS + 1) * 3600, 30 * 3600, n), age)
    age = np.where(bootstrap | (running_total == 0), rng.uniform(86400, 10 * 86400, n), age)
    age = np.where((q.status == "offline") & (rng.random(n) < 0.3), np.nan, age)
    npilot = np.floor(rng.lognormal(np.log(40.0), 1.0, n)) + 1
    npilot = np.where(online & (rng.random(n) < 0.04), 0, npilot)
    npilot = np.where((q.status == "offline") & (rng.random(n) < 0.85), 0, npilot)
    nbatch = np.round(running_total * rng.uniform(1.0, 1.3, n)) + rng.integers(0, 50, n)
    nbatch = np.where(bootstrap, rng.integers(5, 80, n), nbatch)
    nbatch = np.where(low, running_total + rng.integers(20, 200, n), nbatch)
    nbatch = np.where(np.isin(q.status, ("offline", "paused")), 0, nbatch)
    slots_draw = rng.random(n)
    numslots = np.where(slots_draw < 0.02, 0.0, np.where(slots_draw < 0.04, rng.integers(50, 2000, n), np.nan))
    return _Jobs(
        jc=jc,
        pairs=pairs,
        users=users,
        user_group=user_group,
        user_pop=user_pop,
        dynamic={
            "laststart": _times(taken, age),
            "npilot": npilot,
            "lastpilot": _times(taken, _last_pilot_age(npilot, age)),
            "nbatchjob": nbatch,
            "numslots": numslots,
            "trr": trr,
        },
    )


RESOURCE_TYPES = ("SCORE", "MCORE", "MCORE_HIMEM")


def _job_count_rows(rng: np.random.Generator, q: _Queues, jobs: _Jobs) -> dict[str, Any]:
    """job_counts rows for every non-zero (queue, share, resource type, status)."""
    qi, gi, si = np.nonzero(jobs.jc)
    nj = jobs.jc[qi, gi, si]
    queue_rt = np.where(q.corecount == 1, 0, np.where(q.kind == _K["HIMEM"], 2, 1))
    anal = gi >= len(PROD_SHARES)
    rt = np.where(anal, np.where(q.corecount[qi] > 1, 1, 0), queue_rt[qi])
    # unified queues run single- and multi-core production jobs side by side
    uni = (q.type[qi] == "unified") & ~anal
    score_frac = rng.uniform(0.15, 0.4, q.n)[qi]
    n_score = np.where(uni, np.floor(nj * score_frac), 0).astype(np.int64)
    extra = np.flatnonzero(n_score > 0)
    qi = np.concatenate([qi, qi[extra]])
    gi = np.concatenate([gi, gi[extra]])
    si = np.concatenate([si, si[extra]])
    rt = np.concatenate([rt, np.zeros(len(extra), dtype=rt.dtype)])
    nj = np.concatenate([nj - n_score, n_score[extra]])
    ok = nj > 0
    order = np.lexsort((si[ok], rt[ok], gi[ok], qi[ok]))
    qi, gi, si, rt, nj = (a[ok][order] for a in (qi, gi, si, rt, nj))
    return {
        "panda_queue": q.name[qi],
        "gshare": np.array(SHARES, dtype=object)[gi],
        "resource_type": np.array(RESOURCE_TYPES, dtype=object)[rt],
        "jobstatus": np.array(COUNT_STATUSES, dtype=object)[si],
        "njobs": nj,
    }


# JEDI work queues of the demo: two Resource queues JobGenerator runs on their own (the throttler's named
# exceptions "Reprocessing default" and "Heavy Ion"), then per label ordered queues ending in a catch-all.
_WORK_QUEUES = (
    (1, "Reprocessing default", "managed", 1, "processingType = 'reprocessing'", {}, "Resource"),
    (2, "Heavy Ion", "managed", 2, "processingType = :pt AND workingGroup = 'AP_HI'", {":pt": "simul"}, "Resource"),
    (3, "evgen", "managed", 10, "processingType IN ('evgen')", {}, ""),
    (4, "simul and pileup", "managed", 11, "processingType IN ('simul', 'pile')", {}, ""),
    (5, "derivations", "managed", 12, "processingType LIKE 'deriv%'", {}, ""),
    (6, "managed", "managed", 100, "", {}, ""),
    (7, "group analysis", "user", 10, "workingGroup IS NOT NULL", {}, ""),
    (8, "user analysis", "user", 100, "", {}, ""),
)
_UNTHROTTLED_SHARES = ("Express",)  # urgent work: the job throttler leaves its work queue alone


def _shares_and_slots(q: _Queues, jobs: _Jobs, usage: list[float]) -> dict[str, dict[str, Any]]:
    """The share tree (Production and Analysis branches, leaf values as pledged by running / usage), the work
    queues and each queue's slots (its running jobs, or Harvester numSlots when larger)."""
    running = jobs.jc[:, :, _S["running"]]
    pledge = running.sum(axis=0) / np.maximum(np.asarray(usage, dtype=float), 1.0)
    leaf = np.round(100.0 * pledge / max(pledge.sum(), 1e-9), 2)
    n_prod = len(PROD_SHARES)
    branches = (("Production", float(leaf[:n_prod].sum())), ("Analysis", float(leaf[n_prod:].sum())))
    names = [b for b, _ in branches] + list(SHARES)
    gshares = {
        "gshare": np.array(names, dtype=object),
        "usage_perc": np.array([100.0, 100.0, *usage]),
        "parent": np.array(["", "", *(["Production"] * n_prod), *(["Analysis"] * len(ANAL_SHARES))], dtype=object),
        "value": np.array([round(v, 2) for _, v in branches] + leaf.tolist()),
        "throttled": np.array([n not in _UNTHROTTLED_SHARES for n in names]),
    }
    cols = list(zip(*_WORK_QUEUES, strict=True))
    work_queues = {
        "queue_id": np.array(cols[0]), "queue_name": np.array(cols[1], dtype=object),
        "queue_type": np.array(cols[2], dtype=object), "vo": np.array(["atlas"] * len(_WORK_QUEUES), dtype=object),
        "queue_order": np.array(cols[3]), "criteria": np.array(cols[4], dtype=object), "variables": list(cols[5]),
        "queue_function": np.array(cols[6], dtype=object), "status": np.array(["active"] * len(_WORK_QUEUES), dtype=object),
    }  # fmt: skip
    numslots = np.nan_to_num(np.asarray(jobs.dynamic["numslots"], dtype=float), nan=0.0)
    slots = {"panda_queue": q.name, "nslots": np.maximum(running.sum(axis=1), numslots).astype(np.int64)}
    return {"gshares": gshares, "work_queues": work_queues, "queue_slots": slots}


def _quota_users(n_users: int) -> list[int]:
    """Two occasional users whose global disk quota is exceeded."""
    return sorted({n_users // 2, n_users // 2 + 1} & set(range(n_users)))


def _user_rows(q: _Queues, jobs: _Jobs) -> tuple[dict[str, Any], dict[str, Any]]:
    """user_job_counts rows, and the users table with running slots at hi-class sites."""
    p = jobs.pairs
    cores = np.where((q.type == "analysis") & (q.corecount > 1), q.corecount, 1)[p["queue"]]
    parts = []
    for st in USER_STATUSES:
        idx = np.flatnonzero(p[st] > 0)
        parts.append((idx, np.full(len(idx), st, dtype=object), p[st][idx]))
    idx = np.concatenate([x[0] for x in parts])
    st = np.concatenate([x[1] for x in parts])
    nj = np.concatenate([x[2] for x in parts]).astype(np.int64)
    order = np.lexsort((idx,))
    idx, st, nj = idx[order], st[order], nj[order]
    share = p["share"][idx]
    user = p["user"][idx]
    wg = np.where(share == 2, jobs.user_group[user], "").astype(object)
    rows = {
        "panda_queue": q.name[p["queue"][idx]],
        "gshare": np.array(ANAL_SHARES, dtype=object)[share],
        "produsername": jobs.users[user],
        "workinggroup": wg,
        "jobstatus": st,
        "njobs": nj,
        "ncores": nj * cores[idx],
    }
    hi = (q.cols["site_class"] == 1.0)[p["queue"]]
    slots = np.bincount(p["user"], weights=p["running"] * cores * hi, minlength=len(jobs.users))
    users = {
        "produsername": jobs.users,
        "running_slots_hi": slots.astype(np.int64),
        "disk_quota_exceeded": np.isin(np.arange(len(jobs.users)), _quota_users(len(jobs.users))),
    }
    return rows, users


# --- software -----------------------------------------------------------------------------------

AGLT2_SOFTWARE: dict[str, Any] = {
    "cmtconfigs": [
        "x86_64-centos7-gcc62-opt",
        "x86_64-centos7-gcc8-opt",
        "x86_64-slc6-gcc49-opt",
        "x86_64-slc6-gcc62-opt",
        "x86_64-slc6-gcc8-opt",
    ],
    "containers": ["any", "/cvmfs"],
    "cvmfs": ["atlas", "nightlies"],
    "architectures": [
        {"arch": ["x86_64"], "instr": ["avx2"], "type": "cpu", "vendor": ["intel", "excl"]},
        {"type": "gpu", "vendor": ["nvidia", "excl"], "model": ["kt100"]},
    ],
    "tags": [
        {
            "cmtconfig": "x86_64-slc6-gcc62-opt",
            "container_name": "",
            "project": "AthDerivation",
            "release": "21.2.2.0",
            "sources": [],
            "tag": "VO-atlas-AthDerivation-21.2.2.0-x86_64-slc6-gcc62-opt",
        },
        {
            "cmtconfig": "x86_64-slc6-gcc62-opt",
            "container_name": "",
            "project": "Athena",
            "release": "21.0.38",
            "sources": [],
            "tag": "VO-atlas-Athena-21.0.38-x86_64-slc6-gcc62-opt",
        },
    ],
}
"""The seed's example of what queue AGLT2 publishes for releases=AUTO."""

EL9 = "x86_64-el9-gcc13-opt"
CC7_11 = "x86_64-centos7-gcc11-opt"
CC7_8 = "x86_64-centos7-gcc8-opt"
CC7_62 = "x86_64-centos7-gcc62-opt"
SLC6_62 = "x86_64-slc6-gcc62-opt"
ARM_EL9 = "aarch64-el9-gcc13-opt"
CVMFS_REGISTRY = "/cvmfs/unpacked.cern.ch/registry.hub.docker.com/"
# (project, release, cmtconfig): the releases and caches tasks use and queues publish as tags
RELEASES: tuple[tuple[str, str, str], ...] = (
    ("AthGeneration", "23.6.31", EL9),
    ("AthGeneration", "21.6.104", CC7_62),
    ("Athena", "21.0.38", SLC6_62),
    ("Athena", "22.0.41", CC7_11),
    ("Athena", "23.0.63", EL9),
    ("Athena", "24.0.53", EL9),
    ("Athena", "25.0.20", EL9),
    ("AthDerivation", "21.2.2.0", SLC6_62),
    ("AnalysisBase", "24.2.10", EL9),
    ("AnalysisBase", "21.2.247", CC7_8),
    ("AthAnalysis", "24.2.30", EL9),
    ("Athena", "24.0.53", ARM_EL9),
)
CONTAINERS = (
    "atlas/athena:23.0.63",
    "atlas/athena:24.0.53",
    "atlas/athena:25.0.20",
    "atlas/athena:22.0.41",
    "atlas/analysisbase:24.2.10",
    "atlas/athanalysis:24.2.30",
    "atlas/centos7-atlasos:latest",
)
_CMT_PROFILES = (
    (EL9, CC7_11, CC7_8, CC7_62),
    (EL9, CC7_11, CC7_8),
    (EL9, CC7_11, CC7_8, CC7_62, SLC6_62),
    (CC7_11, CC7_8, CC7_62, SLC6_62, "x86_64-slc6-gcc49-opt"),
)
_CPU_ARCH = (
    {"arch": ["x86_64"], "instr": ["avx2"], "type": "cpu", "vendor": ["intel"]},
    {"arch": ["x86_64"], "instr": ["avx2", "avx512"], "type": "cpu", "vendor": ["intel"]},
    {"arch": ["x86_64"], "instr": ["avx2"], "type": "cpu", "vendor": ["amd"]},
    {"arch": ["x86_64"], "instr": ["sse4", "avx2"], "type": "cpu", "vendor": ["intel", "amd"]},
    {"arch": ["x86_64"], "instr": ["avx2", "avx512"], "type": "cpu", "vendor": ["intel", "excl"]},
)
_GPU_MODELS = ("a100", "v100", "t4", "h100")


def _tag(project: str, release: str, cmtconfig: str, container: str = "") -> dict[str, Any]:
    return {
        "cmtconfig": cmtconfig,
        "container_name": container,
        "project": project,
        "release": release,
        "sources": [CVMFS_REGISTRY + container] if container else [],
        "tag": f"VO-atlas-{project}-{release}-{cmtconfig}",
    }


_QUEUE_CONTAINERS = (
    ["any", "/cvmfs"],
    ["/cvmfs"],
    [CVMFS_REGISTRY + "atlas/athena", CVMFS_REGISTRY + "atlas/analysisbase"],
    [],
)
_QUEUE_CONTAINERS_CUM = (0.8, 0.84, 0.94)
_QUEUE_CVMFS = (["atlas", "nightlies"], ["atlas"], ["any"])
_QUEUE_CVMFS_CUM = (0.7, 0.98)
_ARM_ARCH = {"arch": ["aarch64", "excl"], "type": "cpu", "vendor": ["arm"]}


def _clone(d: dict[str, Any]) -> dict[str, Any]:
    """Copy of a flat JSON dict whose values are scalars or lists of scalars."""
    return {k: list(v) if isinstance(v, list) else v for k, v in d.items()}


def _software_rows(rng: np.random.Generator, q: _Queues) -> dict[str, Any]:
    """The AUTO JSON of every releases=['AUTO'] queue (a few missing), AGLT2's verbatim, and the ALL dictionary."""
    auto = np.array([r == ["AUTO"] for r in q.cols["releases"]], dtype=bool)
    auto &= (rng.random(q.n) >= 0.02) | (q.name == "AGLT2")
    idx = np.flatnonzero(auto)
    cmt_pick = rng.choice(len(_CMT_PROFILES), size=q.n, p=[0.45, 0.25, 0.18, 0.12]).tolist()
    cont_pick = np.searchsorted(_QUEUE_CONTAINERS_CUM, rng.random(q.n), side="right").tolist()
    cvmfs_pick = np.searchsorted(_QUEUE_CVMFS_CUM, rng.random(q.n), side="right").tolist()
    arch_pick = rng.integers(0, len(_CPU_ARCH), q.n).tolist()
    no_arch = (rng.random(q.n) < 0.1).tolist()
    gpu_pick = rng.integers(0, len(_GPU_MODELS), q.n).tolist()
    tag_keep = (rng.random((q.n, len(RELEASES))) < 0.6).tolist()
    profiles = [*_CMT_PROFILES, (ARM_EL9,)]
    compatible = [[j for j, r in enumerate(RELEASES) if r[2] in prof] for prof in profiles]
    # explicit-container queues publish their releases as tag containers too
    templates = [
        (_tag(p, r, c), _tag(p, r, c, f"atlas/{p.lower()}:{r}" if p in ("Athena", "AnalysisBase") else ""))
        for p, r, c in RELEASES
    ]
    out: dict[str, list[Any]] = {
        k: [] for k in ("panda_queue", "cmtconfigs", "containers", "cvmfs", "architectures", "tags")
    }
    names, kinds = q.name.tolist(), q.kind.tolist()
    for i in idx.tolist():
        kind = KINDS[kinds[i]]
        if names[i] == "AGLT2":
            row = {k: _copy_json(v) for k, v in AGLT2_SOFTWARE.items()}
        else:
            prof = len(_CMT_PROFILES) if kind == "ARM" else cmt_pick[i]
            hpc = kind == "HPC"
            # no CVMFS on the HPC: only what the tags list
            containers = [] if hpc else list(_QUEUE_CONTAINERS[cont_pick[i]])
            cvmfs = [] if hpc else list(_QUEUE_CVMFS[cvmfs_pick[i]])
            explicit = int(cont_pick[i] == 2 and not hpc)
            if kind == "ARM":
                arch = [_clone(_ARM_ARCH)]
            elif no_arch[i]:
                arch = []
            else:
                arch = [_clone(_CPU_ARCH[arch_pick[i]])]
            if kind == "GPU":
                arch.append({"type": "gpu", "vendor": ["nvidia", "excl"], "model": [_GPU_MODELS[gpu_pick[i]]]})
            keep = tag_keep[i]
            tags = [_clone(templates[j][explicit]) for j in compatible[prof] if keep[j] or hpc]
            row = {
                "cmtconfigs": list(profiles[prof]),
                "containers": containers,
                "cvmfs": cvmfs,
                "architectures": arch,
                "tags": tags,
            }
        out["panda_queue"].append(names[i])
        for k in ("cmtconfigs", "containers", "cvmfs", "architectures", "tags"):
            out[k].append(row[k])
    out["panda_queue"].append("ALL")
    for k in ("cmtconfigs", "containers", "cvmfs", "architectures"):
        out[k].append([])
    out["tags"].append(
        [
            {
                "cmtconfig": "",
                "container_name": c,
                "project": "",
                "release": "",
                "sources": [CVMFS_REGISTRY + c],
                "tag": "",
            }
            for c in CONTAINERS
        ]
    )
    return out


def _copy_json(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _copy_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy_json(x) for x in v]
    return v


# --- tasks and data -----------------------------------------------------------------------------

PROD_TYPES = ("evgen", "simul", "pile", "reprocessing", "deriv", "merge", "urgent")
_PROD_TYPE_P = (0.14, 0.32, 0.14, 0.05, 0.2, 0.12, 0.03)
_TYPE_SHARE = {
    "evgen": "MC Event Generation",
    "simul": "MC Simulation",
    "pile": "MC Reconstruction",
    "reprocessing": "Reprocessing",
    "deriv": "Data Derivations",
    "merge": "MC Merging",
    "urgent": "Express",
}
# release choices per processing type: (index into RELEASES, probability)
_TYPE_RELEASE: dict[str, tuple[tuple[int, float], ...]] = {
    "evgen": ((0, 0.85), (1, 0.15)),
    "simul": ((4, 0.65), (3, 0.25), (2, 0.05), (11, 0.05)),
    "pile": ((5, 0.7), (3, 0.3)),
    "reprocessing": ((5, 0.6), (4, 0.4)),
    "deriv": ((6, 0.6), (5, 0.3), (7, 0.1)),
    "merge": ((4, 0.5), (5, 0.5)),
    "urgent": ((5, 1.0),),
    "user": ((8, 0.38), (10, 0.15), (9, 0.1), (5, 0.1)),  # the rest: no release, or a nightly
}
# per master input type: (datatype, MB per event, events per file, median files)
_INPUT = {
    "evgen": ("pseudo", 0.0, 0, 0),
    "simul": ("EVNT", 0.05, 10000, 50),
    "urgent": ("EVNT", 0.05, 10000, 10),
    "pile": ("HITS", 1.0, 2000, 200),
    "reprocessing": ("RAW", 1.2, 2500, 1500),
    "deriv": ("AOD", 0.4, 10000, 300),
    "merge": ("HITS", 1.0, 200, 2000),
    "user": ("DAOD_PHYS", 0.04, 50000, 150),
}
_CPUTIME = {
    "evgen": 30.0,
    "simul": 600.0,
    "pile": 300.0,
    "reprocessing": 150.0,
    "deriv": 3.0,
    "merge": 0.5,
    "urgent": 600.0,
}
# events per job: (smallest, largest); inside that range the job is sized to run ~JOB_HOURS
_JOB_EVENTS = {
    "evgen": (200, 10000),
    "simul": (50, 1000),
    "pile": (200, 2000),
    "reprocessing": (200, 2000),
    "deriv": (2000, 20000),
    "merge": (1000, 5000),
    "urgent": (50, 500),
    "user": (1000, 50000),
}
JOB_HOURS = {"managed": 8.0, "user": 3.0}  # median target walltime of a job
REFERENCE_CORE_POWER = 10.0  # HS06 per core used to size jobs
_OUT_KB_PER_EVENT = {
    "evgen": 100.0,
    "simul": 1000.0,
    "pile": 500.0,
    "reprocessing": 600.0,
    "deriv": 20.0,
    "urgent": 1000.0,
}
_PHYSICS = (
    "PhPy8EG_A14_ttbar_hdamp258p75_SingleLep",
    "PhPy8EG_A14_ttbar_hdamp258p75_dil",
    "Sh_2214_Zee_maxHTpTV2_BFilter",
    "Sh_2214_Wmunu_maxHTpTV2_CVetoBVeto",
    "PhPy8EG_AZNLO_Zmumu",
    "MGPy8EG_A14N23LO_SS_direct_1200_100",
    "PhPy8EG_PDF4LHC21_ggH125_gammagamma",
    "Py8EG_A14NNPDF23LO_jj_JZ2",
    "aMCPy8EG_NNPDF30NLO_A14N23LO_ttW",
)
_MINBIAS = (
    "mc23_13p6TeV.800831.Py8EG_minbias_inelastic_highjetphotonlepton.simul.HITS_FILT.e8514_s4159_s4114",
    "mc23_13p6TeV.900311.Epos_minbias_inelastic_lowjetphoton.simul.HITS_FILT.e8514_s4159_s4114",
)
_INCLUDE_PATTERNS = ("ANALY_CERN*", "ANALY_BNL*,ANALY_MWT2*", "*_GPU", "ANALY_*_VP", "UKI-*")
_EXCLUDE_PATTERNS = ("ANALY_*_VP", "ANALY_*_TEST", "UKI-SCOTGRID-*", "ANALY_TOKYO*", "RO-*")
_DOCKER_IMAGES = (
    "docker://gitlab-registry.cern.ch/atlas-physics/hdbs/analysis:v1.2",
    "docker://ghcr.io/atlas-user/fitter:3",
)


def _choice_by(rng: np.random.Generator, table: tuple[tuple[int, float], ...], size: int) -> np.ndarray:
    values = np.array([v for v, _ in table])
    p = np.array([p for _, p in table])
    return rng.choice(values, size=size, p=p / p.sum())


def _tasks(
    rng: np.random.Generator,
    n: int,
    sites: _Sites,
    q: _Queues,
    ep: dict[str, Any],
    jobs: _Jobs,
    taken: pd.Timestamp,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Tasks, their input datasets and replicas, and the recent job history of analysis tasks."""
    tid = TASK_ID_BASE + np.cumsum(rng.integers(1, 30, n))
    user = rng.random(n) < 0.3
    prod = ~user
    ptype = np.where(prod, rng.choice(np.array(PROD_TYPES, dtype=object), size=n, p=_PROD_TYPE_P), "user").astype(
        object
    )
    anal_share = rng.choice(np.array(ANAL_SHARES, dtype=object), size=n, p=_ANAL_P)
    gshare = np.array([_TYPE_SHARE.get(t, "") for t in ptype.tolist()], dtype=object)
    gshare[user] = anal_share[user]
    status = np.where(
        prod,
        rng.choice(
            np.array(["assigning", "ready", "running", "scouting", "pending", "defined"], dtype=object),
            size=n,
            p=[0.28, 0.2, 0.3, 0.1, 0.08, 0.04],
        ),
        rng.choice(
            np.array(["ready", "running", "scouting", "pending"], dtype=object), size=n, p=[0.3, 0.5, 0.12, 0.08]
        ),
    ).astype(object)

    # nuclei for production tasks past task brokerage (not the inactive one; bare 'only' ones take only full chains)
    nuc = np.flatnonzero(sites.nucleus)
    usable = nuc[(sites.state[nuc] == "ACTIVE") & (sites.bare[nuc] != "only")]
    if not len(usable):
        usable = nuc
    nw = np.where(sites.tier[usable] <= 1, 3.0, 1.0)
    has_nucleus = prod & (
        np.isin(status, ("ready", "running", "scouting")) | ((status == "pending") & (rng.random(n) < 0.5))
    )
    nucleus = np.full(n, None, dtype=object)
    nucleus[has_nucleus] = sites.name[rng.choice(usable, size=int(has_nucleus.sum()), p=nw / nw.sum())]

    prio = rng.choice(
        [300, 400, 450, 500, 550, 600, 700, 800, 850], size=n, p=[0.05, 0.1, 0.1, 0.25, 0.15, 0.15, 0.1, 0.05, 0.05]
    )
    r = rng.random(n)
    prio = np.where(
        r < 0.06, rng.choice([900, 950], size=n), np.where(r < 0.08, rng.choice([1000, 1100], size=n), prio)
    )
    # urgent tasks are express whatever their priority; below 800 they are not held to their nucleus
    urgent_prio = rng.choice([600, 700, 950, 1000, 1050], size=n, p=[0.35, 0.25, 0.15, 0.15, 0.1])
    prio = np.where(ptype == "urgent", urgent_prio, prio)
    taskprio = prio.copy()
    uprio = np.where(rng.random(n) < 0.04, 2000, 1000)
    uprio = np.where((anal_share == "Express Analysis") & (rng.random(n) < 0.3), 2000, uprio)
    taskprio = np.where(user, uprio, taskprio)
    prio = np.where(user, np.where(uprio >= 2000, uprio, 1000 - rng.integers(0, 100, n)), prio)

    cc = np.ones(n, dtype=np.int64)
    mc = np.isin(ptype, ("simul", "pile", "reprocessing", "urgent"))
    cc[mc] = np.where(rng.random(int(mc.sum())) < 0.88, 8, 1)
    m = ptype == "evgen"
    cc[m] = np.where(rng.random(int(m.sum())) < 0.4, 8, 1)
    m = ptype == "deriv"
    cc[m] = np.where(rng.random(int(m.sum())) < 0.7, 8, 1)
    cc[user] = rng.choice([1, 0, 8], size=int(user.sum()), p=[0.9, 0.05, 0.05])
    cc[prod & (rng.random(n) < 0.05)] = 0
    maxcc = np.where((cc == 0) & (rng.random(n) < 0.4), 8.0, np.nan)

    ramunit = np.where(
        prod,
        rng.choice(np.array(["MBPerCore", "MB", "MBPerCoreFixed"], dtype=object), size=n, p=[0.85, 0.12, 0.03]),
        rng.choice(np.array(["MB", "MBPerCore"], dtype=object), size=n, p=[0.7, 0.3]),
    ).astype(object)
    per_core = rng.choice([1500, 2000, 2500, 3000], size=n, p=[0.15, 0.5, 0.2, 0.15])
    per_core = np.where(rng.random(n) < 0.02, rng.choice([8000, 12000, 16000], size=n), per_core)
    ram = np.where(ramunit == "MB", per_core * np.where(cc > 1, 2, 1), per_core)
    uram = rng.choice([2000, 4000, 8000, 16000], size=n, p=[0.6, 0.25, 0.1, 0.05])
    ram = np.where(user, np.where(ramunit == "MB", uram, uram // 2), ram)
    baseram = np.where((cc > 1) & (rng.random(n) < 0.3), rng.choice([500, 1000, 1500], size=n), 0)
    rtype = np.where(cc == 1, "SCORE", "MCORE").astype(object)
    himem = np.where(ramunit == "MB", ram / np.maximum(cc, 1), ram) > 2000
    rtype = np.where(himem, rtype + "_HIMEM", rtype).astype(object)

    cputime = np.array([_CPUTIME.get(t, 0.0) for t in ptype.tolist()]) * rng.lognormal(0.0, 0.5, n)
    cputime = np.where(ptype == "evgen", np.exp(rng.uniform(np.log(0.5), np.log(3000.0), n)), cputime)
    cputime = np.where(user, np.where(rng.random(n) < 0.3, 0.0, rng.uniform(0.5, 50.0, n)), cputime)
    cputime = np.round(cputime, 2)
    basewall = np.where(rng.random(n) < 0.3, 0, rng.integers(180, 1800, n))
    cpueff = np.where(user, rng.integers(50, 91, n), np.where(rng.random(n) < 0.8, 90, rng.integers(70, 101, n)))
    outkb = np.array([_OUT_KB_PER_EVENT.get(t, 0.0) for t in ptype.tolist()]) * rng.uniform(0.7, 1.3, n)
    outunit = np.where(np.isin(ptype, ("merge", "user")), "kB", "kBPerEvent").astype(object)
    outdisk = np.round(np.where(ptype == "merge", 1.0, np.where(user, rng.uniform(0.05, 0.5, n), outkb)), 3)
    workdisk = np.where(rng.random(n) < 0.02, rng.integers(40000, 80000, n), rng.integers(200, 2000, n))
    workdisk = np.where(user, rng.integers(0, 2000, n), workdisk)
    io_draw = rng.random(n)
    io = np.where(
        io_draw < 0.07,
        rng.uniform(200.0, 500.0, n),
        np.where(io_draw < 0.1, rng.uniform(500.0, 2000.0, n), rng.lognormal(np.log(40.0), 0.8, n)),
    )
    io = np.where(np.isin(ptype, ("reprocessing", "pile")) & (rng.random(n) < 0.3), rng.uniform(200.0, 900.0, n), io)
    io = np.round(np.where((rng.random(n) < 0.1) | (user & (rng.random(n) < 0.7)), np.nan, io), 1)
    diskio = np.where(rng.random(n) < 0.03, rng.uniform(4000.0, 9000.0, n), rng.lognormal(np.log(600.0), 0.6, n))
    diskio = np.round(np.where(rng.random(n) < 0.25, np.nan, diskio), 1)
    ipconn = rng.choice(
        np.array(["", "http#IPv4", "full#IPv6", "full#IPv4", "none"], dtype=object),
        size=n,
        p=[0.88, 0.03, 0.03, 0.04, 0.02],
    )
    allowlan = np.where(prod & np.isin(ptype, ("deriv", "reprocessing")) & (rng.random(n) < 0.08), "only", "").astype(
        object
    )
    es = prod & np.isin(ptype, ("simul", "evgen")) & (rng.random(n) < 0.08)

    rel_idx = np.full(n, -1, dtype=np.int64)
    for t, table in _TYPE_RELEASE.items():
        m = ptype == t
        rel_idx[m] = _choice_by(rng, table, int(m.sum()))
    u_draw = rng.random(n)
    rel_idx = np.where(user & (u_draw >= 0.73), -1, rel_idx)
    nightly = user & (u_draw >= 0.73) & (u_draw < 0.76)
    transhome = np.array(
        [f"{RELEASES[i][0]}-{RELEASES[i][1]}" if i >= 0 else "" for i in rel_idx.tolist()], dtype=object
    )
    transhome[nightly] = "Athena-rel_3"
    sw = np.array([RELEASES[i][2] if i >= 0 else "" for i in rel_idx.tolist()], dtype=object)
    sw[nightly] = EL9
    sw[user & (rel_idx < 0) & ~nightly & (rng.random(n) < 0.5)] = EL9
    arch = sw.copy()
    a_draw = rng.random(n)
    el9 = sw == EL9
    cc7 = np.char.find(sw.astype(str), "centos7") >= 0
    arch[cc7 & (a_draw < 0.08)] = [f"{s}@centos7" for s in sw[cc7 & (a_draw < 0.08)]]
    m = el9 & (a_draw < 0.05)
    arch[m] = [f"{s}@centos7" for s in sw[m]]
    m = el9 & (a_draw >= 0.05) & (a_draw < 0.08)
    arch[m] = "(x86_64|aarch64)-el9-gcc13-opt"
    m = (sw != "") & (a_draw >= 0.08) & (a_draw < 0.13)
    arch[m] = [
        f"{s}#{c}"
        for s, c in zip(
            sw[m], rng.choice(["x86_64-intel-avx2", "x86_64-*-avx2", "x86_64"], size=int(m.sum())), strict=True
        )
    ]
    m = user & (sw != "") & (a_draw >= 0.13) & (a_draw < 0.15)
    arch[m] = [f"{s}&{g}" for s, g in zip(sw[m], rng.choice(["nvidia", "nvidia-a100"], size=int(m.sum())), strict=True)]
    container = np.full(n, "", dtype=object)
    c_draw = rng.random(n)
    has_c = (c_draw < np.where(user, 0.15, 0.08)) | ((sw != "") & (rel_idx < 0))
    kind_draw = rng.random(n)
    picks = rng.integers(0, len(CONTAINERS), n)
    for i in np.flatnonzero(has_c).tolist():
        k, r = kind_draw[i], int(rel_idx[i])
        # the image of the task's own release by name or by path; users also bring their own images
        c = f"atlas/{RELEASES[r][0].lower()}:{RELEASES[r][1]}" if r >= 0 else CONTAINERS[picks[i]]
        if k < 0.5:
            container[i] = c
        elif k < 0.8 or not user[i]:
            container[i] = CVMFS_REGISTRY + c
        else:
            container[i] = _DOCKER_IMAGES[picks[i] % len(_DOCKER_IMAGES)]
    onlytags = has_c & (rng.random(n) < 0.05)
    container[onlytags] = "atlas/athena:24.0.53"  # published as a tag container by the explicit-container queues

    t1w = np.where(prod, rng.choice([np.nan, 0.0, 2.0, -1.0], size=n, p=[0.93, 0.03, 0.02, 0.02]), np.nan)
    on_master = prod & (rng.random(n) < 0.04)
    prestage = prod & (((ptype == "reprocessing") & (rng.random(n) < 0.8)) | (rng.random(n) < 0.01))
    scout = status == "scouting"
    merge = ptype == "merge"
    ev_lo = np.array([_JOB_EVENTS[t][0] for t in ptype.tolist()])
    ev_hi = np.array([_JOB_EVENTS[t][1] for t in ptype.tolist()])
    hours = rng.lognormal(np.log(np.where(user, JOB_HOURS["user"], JOB_HOURS["managed"])), 0.5)
    job_cores = np.where(cc == 0, 8, cc)
    fit = hours * 3600.0 * job_cores * REFERENCE_CORE_POWER * cpueff / 100.0 / np.maximum(cputime, 1e-3)
    chunk_ev = np.round(np.clip(fit, ev_lo, ev_hi)).astype(np.int64)
    chunk_ev = np.where(rng.random(n) < 0.04, chunk_ev * 10, chunk_ev)  # jobs too long for most queues
    njobs = np.where(user, np.ceil(rng.lognormal(np.log(50.0), 1.2, n)), np.ceil(rng.lognormal(np.log(20.0), 1.0, n)))
    preassigned = np.full(n, None, dtype=object)
    prod_q = np.flatnonzero(q.type != "analysis")
    anal_q = np.flatnonzero(q.type != "production")
    m = prod & (rng.random(n) < 0.015) & (len(prod_q) > 0)
    for i in np.flatnonzero(m).tolist():
        k = 1 if rng.random() < 0.7 else 2
        preassigned[i] = ",".join(q.name[rng.choice(prod_q, size=min(k, len(prod_q)), replace=False)].tolist())
    m = user & (rng.random(n) < 0.01) & (len(anal_q) > 0)
    preassigned[m] = q.name[rng.choice(anal_q, size=int(m.sum()))] if len(anal_q) else None

    # full-chain workflows: parents on bare nuclei, children follow them
    fullchain = np.full(n, "", dtype=object)
    parent = np.full(n, np.nan)
    bare = np.flatnonzero(sites.bare != "")
    prod_idx = np.flatnonzero(prod)
    if len(bare) and len(prod_idx) >= 10:
        n_chain = max(2, round(0.01 * len(prod_idx)))
        heads = np.sort(
            rng.choice(prod_idx[: len(prod_idx) // 2], size=min(n_chain, len(prod_idx) // 2), replace=False)
        )
        later = prod_idx[len(prod_idx) // 2 :]
        for j, h in enumerate(heads.tolist()):
            b = bare[j % len(bare)]
            mode = str(sites.bare[b])
            status[h] = "running"
            nucleus[h] = sites.name[b]
            fullchain[h] = "only" if mode == "only" else "require"
            for c in rng.choice(later, size=int(rng.integers(1, 3)), replace=False).tolist():
                if fullchain[c] or not np.isnan(parent[c]):
                    continue
                parent[c] = tid[h]
                fullchain[c] = rng.choice(["only", "capable"] if mode == "only" else ["require", "capable"])
                if rng.random() < 0.5:
                    status[c], nucleus[c] = "assigning", None
                else:
                    status[c], nucleus[c] = "running", sites.name[b]
        # roots of new chains still waiting for a (bare) nucleus, and capable children of normal tasks
        free = np.flatnonzero(prod & (fullchain == "") & np.isnan(parent))
        for c in rng.choice(free, size=min(len(free), max(2, n_chain // 2)), replace=False).tolist():
            fullchain[c] = rng.choice(["only", "require"])
            status[c], nucleus[c] = "assigning", None
        normal = np.flatnonzero(prod & (fullchain == "") & np.isnan(parent) & np.not_equal(nucleus, None))
        kids = np.flatnonzero(prod & (fullchain == "") & np.isnan(parent))
        for h in rng.choice(normal, size=min(len(normal), max(1, n_chain // 3)), replace=False).tolist():
            c = kids[kids > h]
            if len(c):
                c0 = int(c[int(rng.integers(0, len(c)))])
                if fullchain[c0] == "":
                    parent[c0], fullchain[c0] = tid[h], "capable"
    nucleus[status == "assigning"] = None

    wg = np.full(n, "", dtype=object)
    owner = rng.choice(len(jobs.users), size=n, p=jobs.user_pop)
    owner[user & (rng.random(n) < 0.01)] = rng.choice(_quota_users(len(jobs.users)))
    owner = np.minimum(owner, len(jobs.users) - 1)
    username = np.where(user, jobs.users[owner], "").astype(object)
    prod_owner = np.array(["atlas-prod", "atlas-dpd-production", "atlas-mc-production"], dtype=object)
    username[prod] = rng.choice(prod_owner, size=int(prod.sum()))
    group_task = user & (anal_share == "Group Analysis")
    wg[group_task] = jobs.user_group[owner[group_task]]
    included = np.where(
        user & (rng.random(n) < 0.04), rng.choice(np.array(_INCLUDE_PATTERNS, dtype=object), size=n), ""
    )
    excluded = np.where(
        user & (rng.random(n) < 0.06), rng.choice(np.array(_EXCLUDE_PATTERNS, dtype=object), size=n), ""
    )
    avoidvp = user & (rng.random(n) < 0.06)
    tclass = np.where(
        user & (anal_share == "User Analysis"),
        rng.choice([1.0, 0.0, -1.0, 2.0], size=n, p=[0.55, 0.25, 0.12, 0.08]),
        np.nan,
    )
    tclass = np.where(user & (anal_share == "Express Analysis"), 2.0, tclass)

    ds, reps = _datasets(rng, n, tid, ptype, status, nucleus, io, sites, ep)
    per_event_mb = ds.pop("_master_mb_per_event")
    chunk_in = np.round(per_event_mb * chunk_ev, 1)

    age_h = np.where(rng.random(n) < 0.12, rng.uniform(7 * 24, 30 * 24, n), rng.uniform(0.5, 6 * 24, n))
    frozen = np.where(status == "defined", np.nan, age_h * 3600.0)
    mod = np.where(status == "assigning", rng.uniform(0, 2 * 3600, n), rng.uniform(0, 6 * 3600, n))
    names = _task_names(rng, ptype, tid, username, sw)
    tasks = {
        "jeditaskid": tid,
        "taskname": names,
        "status": status,
        "prodsourcelabel": np.where(user, "user", "managed").astype(object),
        "processingtype": np.where(
            user,
            rng.choice(
                np.array(["panda-client-1.5.80-jedi-run", "panda-client-1.5.80-jedi-athena"], dtype=object), size=n
            ),
            ptype,
        ).astype(object),
        "gshare": gshare,
        "resource_type": rtype,
        "currentpriority": prio,
        "taskpriority": taskprio,
        "username": username,
        "workinggroup": wg,
        "corecount": cc,
        "maxcorecount": maxcc,
        "ramcount": ram,
        "ramunit": ramunit,
        "baseramcount": baseram,
        "cputime": cputime,
        "basewalltime": basewall,
        "cpuefficiency": cpueff,
        "outdiskcount": outdisk,
        "outdiskunit": outunit,
        "workdiskcount": workdisk,
        "iointensity": io,
        "diskio": diskio,
        "ipconnectivity": ipconn,
        "allowinputlan": allowlan,
        "eventservice": es,
        "nucleus": nucleus,
        "site": preassigned,
        "architecture": arch,
        "transhome": transhome,
        "container_name": container,
        "onlytagsforfc": onlytags,
        "parent_tid": parent,
        "fullchain": fullchain,
        "t1weight": t1w,
        "taskbrokeronmaster": on_master,
        "inputprestaging": prestage,
        "includedsite": included,
        "excludedsite": excluded,
        "avoidvp": avoidvp,
        "task_class": tclass,
        "is_scout": scout,
        "is_merge": merge,
        "chunk_nevents": chunk_ev,
        "chunk_input_mb": chunk_in,
        "chunk_njobs": njobs.astype(np.int64),
        "frozentime": _times(taken, frozen),
        "modificationtime": _times(taken, mod),
    }
    history = _history(rng, tid, user & np.isin(status, ("running", "pending")), q, jobs, taken)
    return tasks, ds, reps, history


def _task_names(
    rng: np.random.Generator, ptype: np.ndarray, tid: np.ndarray, username: np.ndarray, sw: np.ndarray
) -> np.ndarray:
    """Task names in ATLAS nomenclature (mc23_13p6TeV.<dsid>.<physics>.<step>..., user.<nick>...)."""
    n = len(ptype)
    dsid = rng.integers(500000, 999999, n)
    phys = rng.integers(0, len(_PHYSICS), n)
    run = rng.integers(470000, 490000, n)
    step = {
        "evgen": "evgen",
        "simul": "simul",
        "pile": "recon",
        "reprocessing": "recon",
        "deriv": "deriv",
        "merge": "merge",
        "urgent": "simul",
    }
    out = []
    for t, d, p, rn, u, i in zip(
        ptype.tolist(), dsid.tolist(), phys.tolist(), run.tolist(), username.tolist(), tid.tolist(), strict=True
    ):
        if t == "user":
            nick = (
                "".join(part[0] for part in u.split()[:-1]).lower() + u.split()[-1].lower() if " " in u else u.lower()
            )
            out.append(f"user.{nick}.{_PHYSICS[p].split('_')[0]}.ana.{i}")
        elif t == "reprocessing":
            out.append(f"data24_13p6TeV.{rn:08d}.physics_Main.{step[t]}.f1500_m2248")
        else:
            out.append(f"mc23_13p6TeV.{d}.{_PHYSICS[p]}.{step[t]}.e8514_s4162_tid{i}")
    return np.array(out, dtype=object)


def _datasets(
    rng: np.random.Generator,
    n: int,
    tid: np.ndarray,
    ptype: np.ndarray,
    status: np.ndarray,
    nucleus: np.ndarray,
    io: np.ndarray,
    sites: _Sites,
    ep: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Master and secondary input datasets of every task, and their replicas at DDM endpoints."""
    spec = [_INPUT[t] for t in ptype.tolist()]
    dtype = np.array([s[0] for s in spec], dtype=object)
    mb_ev = np.array([s[1] for s in spec])
    ev_file = np.array([s[2] for s in spec])
    med = np.array([s[3] for s in spec], dtype=float)
    pseudo = (dtype == "pseudo") | ((ptype == "user") & (rng.random(n) < 0.05))
    nfiles = np.where(pseudo, 0, np.maximum(1, np.round(rng.lognormal(np.log(np.maximum(med, 1)), 0.9)))).astype(
        np.int64
    )
    nevents = np.where(pseudo, np.round(np.exp(rng.uniform(np.log(1e5), np.log(2e7), n)), -3), nfiles * ev_file).astype(
        np.int64
    )
    size = np.round(nfiles * ev_file * mb_ev / 1024.0, 3)
    used_frac = np.select(
        [np.isin(status, ("assigning", "defined")), status == "ready", status == "scouting", status == "running"],
        [0.0, rng.uniform(0, 0.2, n), rng.uniform(0, 0.05, n), rng.uniform(0.1, 0.9, n)],
        rng.uniform(0, 0.5, n),
    )
    used = np.floor(nevents * used_frac).astype(np.int64)
    # secondaries: pile-up minimum bias, and a second input for a few other tasks
    sec_pile = ptype == "pile"
    sec_other = ~sec_pile & ~pseudo & (rng.random(n) < 0.06)
    sec_task = np.concatenate([np.flatnonzero(sec_pile), np.flatnonzero(sec_pile), np.flatnonzero(sec_other)])
    sec_kind = np.concatenate(
        [
            np.zeros(int(sec_pile.sum()), dtype=np.int64),
            np.ones(int(sec_pile.sum()), dtype=np.int64),
            np.full(int(sec_other.sum()), 2),
        ]
    )
    order = np.argsort(sec_task, kind="stable")
    sec_task, sec_kind = sec_task[order], sec_kind[order]
    m = len(sec_task)
    sec_nfiles = np.where(
        sec_kind < 2, rng.integers(5000, 20000, m), np.maximum(1, np.round(nfiles[sec_task] * rng.uniform(0.1, 0.5, m)))
    ).astype(np.int64)
    sec_nev = np.where(sec_kind < 2, sec_nfiles * 5000, sec_nfiles * np.maximum(ev_file[sec_task], 1))
    sec_size = np.round(
        np.where(
            sec_kind < 2,
            sec_nfiles * 5000 * 0.5 / 1024.0,
            sec_nfiles * np.maximum(ev_file[sec_task], 1) * mb_ev[sec_task] / 1024.0,
        ),
        3,
    )

    task_of = np.concatenate([np.arange(n), sec_task])
    is_master = np.concatenate([np.ones(n, dtype=bool), np.zeros(m, dtype=bool)])
    order = np.lexsort((~is_master, task_of))
    task_of, is_master = task_of[order], is_master[order]
    d_nfiles = np.concatenate([nfiles, sec_nfiles])[order]
    d_size = np.concatenate([size, sec_size])[order]
    d_nev = np.concatenate([nevents, sec_nev])[order]
    d_used = np.concatenate([used, np.zeros(m, dtype=np.int64)])[order]
    d_kind = np.concatenate([np.full(n, -1), sec_kind])[order]
    nd = len(task_of)
    dsid = DATASET_ID_BASE + np.arange(nd)
    dnames = []
    dsn = rng.integers(500000, 999999, nd)
    phys = rng.integers(0, len(_PHYSICS), nd)
    runs = rng.integers(470000, 490000, nd)
    for t, k, d, p, rn, i in zip(
        task_of.tolist(),
        d_kind.tolist(),
        dsn.tolist(),
        phys.tolist(),
        runs.tolist(),
        tid[task_of].tolist(),
        strict=True,
    ):
        dt = dtype[t]
        if k in (0, 1):
            dnames.append(_MINBIAS[k])
        elif dt == "pseudo" or (k == -1 and nfiles[t] == 0):
            dnames.append(f"pseudo_dataset.{i}")
        elif dt == "RAW":
            dnames.append(f"data24_13p6TeV.{rn:08d}.physics_Main.daq.RAW")
        elif dt == "DAOD_PHYS":
            dnames.append(f"mc23_13p6TeV.{d}.{_PHYSICS[p]}.deriv.DAOD_PHYS.e8514_s4162_r15540_p6266")
        elif ptype[t] == "merge":
            dnames.append(f"mc23_13p6TeV.{d}.{_PHYSICS[p]}.simul.HITS.e8514_s4162_tid{i - 7}_00")
        else:
            step = {"EVNT": "evgen", "HITS": "simul", "AOD": "recon"}[dt]
            dnames.append(f"mc23_13p6TeV.{d}.{_PHYSICS[p]}.{step}.{dt}.e8514_s4162{'_r15540' if dt == 'AOD' else ''}")
    datasets = {
        "jeditaskid": tid[task_of],
        "datasetid": dsid,
        "datasetname": np.array(dnames, dtype=object),
        "is_master": is_master,
        "nfiles": d_nfiles,
        "size_gb": d_size,
        "nevents": d_nev,
        "neventsused": d_used,
        "_master_mb_per_event": mb_ev,
    }

    # replicas: 1-4 disk copies (nuclei hold more), RAW on tape, minimum bias everywhere big
    ep_site = ep["_site"]
    disk = np.flatnonzero(ep["type"] == "DATADISK")
    tape = np.flatnonzero(ep["type"] == "DATATAPE")
    w = sites.weight[ep_site[disk]] * np.where(sites.nucleus[ep_site[disk]], 4.0, 1.0)
    w /= w.sum()
    has_data = d_nfiles > 0
    n_rep = np.where(
        d_kind >= 0,
        np.where(d_kind < 2, rng.integers(6, 12, nd), rng.integers(1, 3, nd)),
        rng.choice([1, 2, 3, 4], size=nd, p=[0.3, 0.35, 0.22, 0.13]),
    )
    n_rep = np.where(has_data, n_rep, 0)
    r_ds = np.repeat(np.arange(nd), n_rep)
    r_first = np.cumsum(n_rep) - n_rep
    r_pos = np.arange(len(r_ds)) - np.repeat(r_first, n_rep)
    r_ep = disk[rng.choice(len(disk), size=len(r_ds), p=w)]
    lookup = np.full(sites.n, -1, dtype=np.int64)
    lookup[ep_site[disk]] = disk
    name_to_site = {s: i for i, s in enumerate(sites.name.tolist())}
    nuc_site = np.array([name_to_site.get(x, -1) if x else -1 for x in nucleus[task_of[r_ds]].tolist()], dtype=np.int64)
    # input mostly at the nucleus already; IO-intensive tasks were sent where their data is
    io_heavy = io[task_of[r_ds]] > IO_INTENSITY_CUTOFF
    p_local = np.where(io_heavy, 0.9, 0.55)
    local = (r_pos == 0) & (nuc_site >= 0) & (is_master[r_ds] | io_heavy) & (rng.random(len(r_ds)) < p_local)
    r_ep = np.where(local, lookup[np.maximum(nuc_site, 0)], r_ep)
    tape_lookup = np.full(sites.n, -1, dtype=np.int64)
    tape_lookup[ep_site[tape]] = tape
    raw = np.array([dtype[t] == "RAW" for t in task_of[r_ds].tolist()], dtype=bool) & is_master[r_ds]
    tape_only = is_master[r_ds] & ~raw & (np.repeat(rng.random(nd) < 0.03, n_rep))
    on_tape = ((raw | tape_only) & (r_pos == 0)) if len(tape) else np.zeros(len(r_ds), dtype=bool)
    if len(tape):
        # RAW sits on the tape of the nucleus when the nucleus has one (data carousel stages it from there)
        own_tape = tape_lookup[np.maximum(nuc_site, 0)]
        some_tape = tape[rng.integers(0, len(tape), len(r_ds))]
        r_ep = np.where(on_tape, np.where((nuc_site >= 0) & (own_tape >= 0) & raw, own_tape, some_tape), r_ep)
    drop = tape_only & (r_pos > 0)
    drop |= raw & (r_pos > 0) & (np.repeat(rng.random(nd), n_rep) > 0.3)
    full = np.where(r_pos == 0, rng.random(len(r_ds)) < 0.9, rng.random(len(r_ds)) < 0.6) | on_tape
    full |= local & io_heavy
    frac = np.where(full, 1.0, rng.uniform(0.05, 0.95, len(r_ds)))
    keep = ~drop
    r_ds, r_ep, frac = r_ds[keep], r_ep[keep], frac[keep]
    # pile-up minimum bias is kept complete at every nucleus
    mb = np.flatnonzero((d_kind >= 0) & (d_kind < 2))
    nuc_disk = disk[sites.nucleus[ep_site[disk]]]
    r_ds = np.concatenate([r_ds, np.repeat(mb, len(nuc_disk))])
    r_ep = np.concatenate([r_ep, np.tile(nuc_disk, len(mb))])
    frac = np.concatenate([frac, np.ones(len(mb) * len(nuc_disk))])
    pair = r_ds * (len(ep_site) + 1) + r_ep
    _, first = np.unique(pair, return_index=True)
    first = np.sort(first)
    r_ds, r_ep, frac = r_ds[first], r_ep[first], frac[first]
    replicas = {
        "jeditaskid": tid[task_of[r_ds]],
        "datasetid": dsid[r_ds],
        "ddm_endpoint_name": ep["ddm_endpoint_name"][r_ep],
        "nfiles": np.round(d_nfiles[r_ds] * frac).astype(np.int64),
        "size_gb": np.round(d_size[r_ds] * frac, 3),
    }
    return datasets, replicas


def _history(
    rng: np.random.Generator, tid: np.ndarray, active: np.ndarray, q: _Queues, jobs: _Jobs, taken: pd.Timestamp
) -> dict[str, Any]:
    """finished/failed/closed jobs of running analysis tasks per queue and hour; some queues failing badly."""
    anal_q = np.flatnonzero((q.type != "production") & (q.status == "online"))
    tasks = np.flatnonzero(active & (rng.random(len(tid)) < 0.45))
    if not len(anal_q) or not len(tasks):
        return {k: [] for k in ("jeditaskid", "panda_queue", "jobstatus", "modificationtime", "njobs")}
    k = rng.integers(1, 5, len(tasks))
    t = np.repeat(tasks, k)
    qi = anal_q[rng.integers(0, len(anal_q), len(t))]
    bad = rng.random(len(t)) < 0.12
    counts = {
        "finished": np.where(bad, rng.integers(0, 3, len(t)), rng.poisson(20, len(t))),
        "failed": np.where(bad, rng.integers(int(MIN_BAD_JOBS) + 1, 40, len(t)), rng.poisson(1.5, len(t))),
        "closed": np.where(bad, rng.integers(0, 5, len(t)), rng.poisson(0.3, len(t))),
    }
    hours_ago = np.where(
        rng.random(len(t)) < 0.85,
        rng.uniform(0, TW_DONE_JOB_STAT_H, len(t)),
        rng.uniform(TW_DONE_JOB_STAT_H, 30, len(t)),
    )
    when = (taken - pd.to_timedelta(hours_ago * 3600.0, unit="s")).floor("h")
    parts = []
    for st, c in counts.items():
        idx = np.flatnonzero(c > 0)
        parts.append((idx, np.full(len(idx), st, dtype=object), c[idx]))
    idx = np.concatenate([p[0] for p in parts])
    order = np.argsort(idx, kind="stable")
    idx = idx[order]
    return {
        "jeditaskid": tid[t[idx]],
        "panda_queue": q.name[qi[idx]],
        "jobstatus": np.concatenate([p[1] for p in parts])[order],
        "modificationtime": when[idx],
        "njobs": np.concatenate([p[2] for p in parts])[order].astype(np.int64),
    }


# --- assembly -----------------------------------------------------------------------------------


def _rows(cols: dict[str, Any]) -> list[dict[str, Any]]:
    """Column arrays -> row dicts for ``frame`` (columns starting with '_' are private and dropped)."""
    keys = [k for k in cols if not k.startswith("_")]
    values = [cols[k].tolist() if isinstance(cols[k], np.ndarray) else list(cols[k]) for k in keys]
    return [dict(zip(keys, row, strict=True)) for row in zip(*values, strict=True)]


def _length(cols: dict[str, Any]) -> int:
    return max((len(v) for k, v in cols.items() if not k.startswith("_")), default=0)


def _table(name: str, cols: dict[str, Any]) -> pd.DataFrame:
    """Table NAME from column arrays, typed exactly as ``frame(name, _rows(cols))`` but column by column.

    ``frame`` walks every row for every column, which is too slow for 50000-queue grids; tests check both agree.
    """
    n = _length(cols)
    data: dict[str, pd.Series] = {}
    for c in TABLES[name]:
        v = cols.get(c.name)
        if v is None:
            v = [list(c.default) if isinstance(c.default, list) else c.default for _ in range(n)]
        if c.type == "time" and isinstance(v, pd.DatetimeIndex):
            data[c.name] = pd.Series(v)
        elif c.type == "time":
            data[c.name] = pd.to_datetime(pd.Series(list(v), dtype="object"), utc=True, format="ISO8601")
        elif c.type in ("int", "float"):
            arr = v if isinstance(v, np.ndarray) else np.array([np.nan if x is None else x for x in v], dtype=float)
            series = pd.Series(arr.astype("float64"))
            data[c.name] = series.astype("int64") if c.type == "int" and not c.nullable else series
        elif c.type == "bool":
            data[c.name] = pd.Series(np.asarray(v, dtype=bool))
        else:
            data[c.name] = pd.Series(v.tolist() if isinstance(v, np.ndarray) else list(v), dtype="object")
    return pd.DataFrame(data)


def _columns(seed: int, queues: int, tasks: int, taken: pd.Timestamp) -> dict[str, dict[str, Any]]:
    """Every table of the demo grid as column arrays."""
    streams = np.random.SeedSequence(seed).spawn(8)
    names = ("sites", "queues", "ep", "net", "jobs", "sw", "tasks", "rows")
    rng = {k: np.random.default_rng(s) for k, s in zip(names, streams, strict=True)}
    n_sites = max(1, min(MAX_SITES, round(queues / QUEUES_PER_SITE), queues))
    sites = _site_catalog(rng["sites"], n_sites)
    q = _queues(rng["queues"], sites, queues)
    ep = _endpoints(rng["ep"], sites, q)
    jobs = _jobs(rng["jobs"], sites, q, taken)
    jc_rows = _job_count_rows(rng["rows"], q, jobs)
    user_rows, users = _user_rows(q, jobs)
    task_cols, ds, reps, history = _tasks(rng["tasks"], tasks, sites, q, ep, jobs, taken)
    queue_cols: dict[str, Any] = {
        "panda_queue": q.name,
        "atlas_site": sites.name[q.site],
        "cloud": sites.cloud[q.site],
        "type": q.type,
        "status": q.status,
        "corecount": q.corecount,
        **q.cols,
        **jobs.dynamic,
    }
    jitter = rng["rows"].uniform(0.9, 1.1, len(SHARES))
    usage = [
        _SHARE_USAGE[g] if g == "User Analysis" else round(_SHARE_USAGE[g] * j, 1)
        for g, j in zip(SHARES, jitter, strict=True)
    ]
    site_cols = {
        "site_name": sites.name,
        "role": np.where(sites.nucleus, "nucleus", "satellite").astype(object),
        "tier_level": sites.tier,
        "cloud": sites.cloud,
        "state": sites.state,
        "bare_nucleus": sites.bare,
    }
    return {
        "queues": queue_cols,
        "sites": site_cols,
        "ddm_endpoints": ep,
        "panda_ddm_relation": _relations(sites, q, ep),
        "network": _network(rng["net"], sites, taken),
        "job_counts": jc_rows,
        "user_job_counts": user_rows,
        "task_job_counts": history,
        "users": users,
        **_shares_and_slots(q, jobs, usage),
        "tasks": task_cols,
        "datasets": ds,
        "dataset_replicas": reps,
        "queue_software": _software_rows(rng["sw"], q),
        "task_status_log": {"jeditaskid": [], "status": [], "modificationtime": []},
        **dirac_columns(seed),
    }


def demo_snapshot(
    seed: int = 0, queues: int = 700, tasks: int = 3000, taken_at: datetime | None = None
) -> GridSnapshot:
    """A realistic ATLAS-like grid, identical for the same (seed, queues, tasks, taken_at).

    Usage: ``snap = demo_snapshot(seed=1); describe(snap)["backlogged_nuclei"]``
    """
    if seed < 0:
        raise ValueError(f"seed: {seed} is below the minimum 0")
    if queues < 1:
        raise ValueError(f"queues: {queues} is below the minimum 1")
    if tasks < 0:
        raise ValueError(f"tasks: {tasks} is below the minimum 0")
    when = taken_at or DEFAULT_TAKEN_AT
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    taken = pd.Timestamp(when).tz_convert("UTC").floor("s")
    columns = _columns(seed, queues, tasks, taken)
    tables = {name: _table(name, columns[name]) for name in TABLES}
    return GridSnapshot(tables, taken.to_pydatetime(), snapshot_id=f"demo-s{seed}-q{queues}-t{tasks}")


# --- coverage -----------------------------------------------------------------------------------


def describe(snapshot: GridSnapshot) -> dict[str, int]:
    """Counts of the situations a snapshot holds that make brokerage rules fire (coverage facts).

    Usage: ``describe(demo_snapshot())["blocked_links"] > 0``
    """
    s = snapshot
    taken = pd.Timestamp(s.taken_at)
    q, sites, ep, net, t = s.queues, s.sites, s.ddm_endpoints, s.network, s.tasks
    facts: dict[str, int] = {
        "queues": len(q),
        "sites": len(sites),
        "nuclei": int((sites["role"] == "nucleus").sum()),
        "satellites": int((sites["role"] == "satellite").sum()),
        "ddm_endpoints": len(ep),
        "network_rows": len(net),
        "tasks": len(t),
        "production_tasks": int((t["prodsourcelabel"] == "managed").sum()),
        "analysis_tasks": int((t["prodsourcelabel"] == "user").sum()),
        "users": len(s.users),
    }
    fresh = net[net["ts"].isna() | (net["ts"] >= taken - pd.Timedelta(minutes=NETWORK_FRESH_MINUTES))]
    closeness = fresh[fresh["key"] == "AGIS_closeness"]
    queued = fresh[fresh["key"] == "Production Output_queued"]
    totals = queued.groupby("dst")["value"].sum()
    links = net[["src", "dst"]].drop_duplicates()
    mbps = net[net["key"].str.startswith("dashb_mbps_")][["src", "dst"]].drop_duplicates()
    facts.update(
        blocked_links=int((closeness["value"] == -1).sum()),
        busy_links=int((queued["value"] > NQUEUED_SAT_CAP).sum()),
        backlogged_nuclei=int((totals > NQUEUED_NUC_CAP).sum()),
        links_full_nuclei=int((totals > NQUEUED_NUC_CAP_FOR_JOBS).sum()),
        links_without_throughput=len(links) - len(mbps),
        stale_network_rows=len(net) - len(fresh),
    )
    role = dict(zip(sites["site_name"], sites["role"], strict=True))
    disk = ep[ep["type"] == "DATADISK"]
    avail = disk["space_free"] + disk["space_expired"]
    at_nucleus = disk["site_name"].map(role) == "nucleus"
    down = ep[["read_lan", "write_lan", "read_wan", "write_wan"]].isin(("OFF", "TEST"))
    facts.update(
        nearly_full_nuclei=int((at_nucleus & (avail < DISK_THRESHOLD_GB)).sum()),
        full_storages=int((avail < STORAGE_MIN_FREE_GB).sum()),
        tape_endpoints=int(ep["is_tape"].sum()),
        blacklisted_endpoints=int(down.any(axis=1).sum()),
        bare_nuclei_only=int((sites["bare_nucleus"] == "only").sum()),
        bare_nuclei_allow=int((sites["bare_nucleus"] == "allow").sum()),
        inactive_nuclei=int(((sites["role"] == "nucleus") & (sites["state"] != "ACTIVE")).sum()),
    )
    jc = s.job_counts.pivot_table(index="panda_queue", columns="jobstatus", values="njobs", aggfunc="sum", fill_value=0)
    jc = jc.reindex(index=q["panda_queue"], columns=list(COUNT_STATUSES), fill_value=0)
    run, act, start = (jc[c].to_numpy(dtype=float) for c in ("running", "activated", "starting"))
    queued_all = act + start + jc["assigned"].to_numpy(dtype=float) + jc["defined"].to_numpy(dtype=float)
    online = (q["status"] == "online").to_numpy()
    hours = ((taken - q["laststart"]).dt.total_seconds() / 3600.0).to_numpy(dtype=float, na_value=np.inf)
    limit = np.where(q["transferringlimit"] > 0, q["transferringlimit"], 2000)
    maxio = q["maxdiskio"].to_numpy(dtype=float)
    facts.update(
        test_named_queues=int(q["panda_queue"].str.contains("test", case=False).sum()),
        not_online_queues=int((~online).sum()),
        inactive_queues=int(((hours > INACTIVE_HOURS) & (act + start > 0)).sum()),
        no_pilot_queues=int((online & (q["npilot"] == 0)).sum()),
        bootstrap_queues=int((online & (run == 0) & (queued_all == 0)).sum()),
        nbatchjob_bootstrap_queues=int((online & (run < 20) & (q["nbatchjob"] > run)).sum()),
        numslots_queues=int(q["numslots"].notna().sum()),
        overloaded_queues=int((online & (act + start > 2 * run)).sum()),
        many_transferring_queues=int((jc["transferring"].to_numpy() > np.maximum(limit, 2 * run)).sum()),
        zero_share_queues=int((q["fairsharepolicy"] != "").sum()),
        diskio_over_queues=int(((maxio > 0) & (q["diskio_avg"] > maxio)).sum()),
        short_maxtime_queues=int(((q["maxtime"] > 0) & (q["maxtime"] < 86400)).sum()),
        mintime_queues=int((q["mintime"] > 0).sum()),
        high_memory_queues=int((q["minrss"] > 0).sum()),
        vp_queues=int(q["is_vp"].sum()),
        gpu_queues=int(q["catchall"].str.contains("gpu").sum()),
        es_queues=int(q["jobseed"].isin(("es", "eshigh")).sum()),
        any_release_queues=int(q["releases"].map(lambda r: "ANY" in r).sum()),
        auto_release_queues=int(q["releases"].map(lambda r: "AUTO" in r).sum()),
        explicit_release_queues=int(q["releases"].map(lambda r: "ANY" not in r and "AUTO" not in r).sum()),
        direct_access_queues=int(q["direct_access_lan"].sum()),
    )
    facts["stabilizer_throttled_pairs"] = _stabilizer_pairs(s, q, jc)
    h = s.task_job_counts
    recent = h[h["modificationtime"] >= taken - pd.Timedelta(hours=TW_DONE_JOB_STAT_H)]
    per = recent.pivot_table(
        index=["jeditaskid", "panda_queue"], columns="jobstatus", values="njobs", aggfunc="sum", fill_value=0
    )
    per = per.reindex(columns=["finished", "failed", "closed"], fill_value=0)
    usage = dict(zip(s.gshares["gshare"], s.gshares["usage_perc"], strict=True))
    uj = s.user_job_counts
    user_running = uj[uj["jobstatus"] == "running"].groupby("produsername")["njobs"].sum()
    ua = (t["gshare"] == "User Analysis") & (t["prodsourcelabel"] == "user")
    reps = s.dataset_replicas.merge(ep[["ddm_endpoint_name", "is_tape"]], on="ddm_endpoint_name")
    tape_only = reps.groupby("datasetid")["is_tape"].all()
    facts.update(
        bad_history_pairs=int((per["failed"] + per["closed"] > np.maximum(2 * per["finished"], MIN_BAD_JOBS)).sum()),
        users_quota_exceeded=int(s.users["disk_quota_exceeded"].sum()),
        heavy_users=int((user_running > HEAVY_USER_RUNNING).sum()),
        class_c_throttled_tasks=int((ua & (t["task_class"] == -1)).sum())
        if usage.get("User Analysis", 0) > CLASS_C_USAGE
        else 0,
        tasks_assigning=int((t["status"] == "assigning").sum()),
        tasks_with_nucleus=int(t["nucleus"].notna().sum()),
        tasks_pending=int((t["status"] == "pending").sum()),
        scout_tasks=int(t["is_scout"].sum()),
        merge_tasks=int(t["is_merge"].sum()),
        urgent_or_express_tasks=int(((t["processingtype"] == "urgent") | (t["currentpriority"] >= 1000)).sum()),
        high_priority_tasks=int(((t["currentpriority"] >= 800) & (t["prodsourcelabel"] == "managed")).sum()),
        negative_t1weight_tasks=int((t["t1weight"] < 0).sum()),
        fullchain_tasks=int((t["fullchain"] != "").sum()),
        prestaging_tasks=int(t["inputprestaging"].sum()),
        master_only_tasks=int(t["taskbrokeronmaster"].sum()),
        io_intensive_tasks=int((t["iointensity"] > IO_INTENSITY_CUTOFF).sum()),
        eventservice_tasks=int(t["eventservice"].sum()),
        ipconnectivity_tasks=int((t["ipconnectivity"] != "").sum()),
        direct_access_only_tasks=int((t["allowinputlan"] == "only").sum()),
        preassigned_tasks=int(t["site"].notna().sum()),
        container_tasks=int((t["container_name"] != "").sum()),
        gpu_tasks=int(t["architecture"].str.contains("&").sum()),
        cpu_spec_tasks=int(t["architecture"].str.contains("#").sum()),
        included_site_tasks=int((t["includedsite"] != "").sum()),
        excluded_site_tasks=int((t["excludedsite"] != "").sum()),
        avoid_vp_tasks=int(t["avoidvp"].sum()),
        tape_only_datasets=int(tape_only.sum()),
    )
    return facts


def _stabilizer_pairs(s: GridSnapshot, q: pd.DataFrame, jc_all: pd.DataFrame) -> int:
    """(PQ, user) pairs in User Analysis where the user's queue exceeds max_q_len (seed's Analysis Stabilizer)."""
    u = s.user_job_counts
    u = u[u["gshare"] == "User Analysis"]
    if not len(u):
        return 0
    queued_st = ("defined", "assigned", "activated", "starting")
    u = u.assign(
        q=np.where(u["jobstatus"].isin(queued_st), u["njobs"], 0),
        r=np.where(u["jobstatus"] == "running", u["njobs"], 0),
    )
    pairs = u.groupby(["panda_queue", "produsername"])[["q", "r"]].sum().reset_index()
    jc = s.job_counts[s.job_counts["gshare"] == "User Analysis"]
    per_q = jc.pivot_table(index="panda_queue", columns="jobstatus", values="njobs", aggfunc="sum", fill_value=0)
    per_q = per_q.reindex(columns=list(COUNT_STATUSES), fill_value=0)
    nQ = per_q[list(queued_st)].sum(axis=1)
    nR = per_q["running"]
    trr = q.set_index("panda_queue")["trr"]
    n_users = pairs.groupby("panda_queue").size()
    p = pairs.assign(
        nQ=pairs["panda_queue"].map(nQ).fillna(0),
        nR=pairs["panda_queue"].map(nR).fillna(0),
        trr=pairs["panda_queue"].map(trr).fillna(0),
        nUsers=pairs["panda_queue"].map(n_users),
    )
    can = (p["nQ"] >= BASE_QUEUE_LENGTH) & (p["nQ"] >= BASE_WAIT_H * p["trr"])
    max_nq = np.maximum.reduce([np.full(len(p), BASE_QUEUE_LENGTH), STATIC_QR_RATIO * p["nR"], MAX_WAIT_H * p["trr"]])
    share = np.maximum(1.0 / p["nUsers"], np.where(p["nR"] > 0, p["r"] / p["nR"].where(p["nR"] > 0, 1), 0.0))
    max_len = np.maximum.reduce([np.full(len(p), BASE_USER_QUEUE), BASE_QUEUE_RATIO * p["nR"], max_nq * share])
    return int((can & (p["q"] > max_len)).sum())
