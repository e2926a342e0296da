"""A plausible DIRAC community for the demo grid: groups, users, sites, CEs, a few thousand waiting jobs."""

from __future__ import annotations

from typing import Any

import numpy as np

STREAM = 4  # the DIRAC tables draw from their own SeedSequence([seed, STREAM]): the PanDA tables stay bit-identical

T1 = ("LCG.CERN.cern", "LCG.CNAF.it", "LCG.GRIDKA.de", "LCG.IN2P3.fr", "LCG.PIC.es", "LCG.RAL.uk", "LCG.SARA.nl")
T2 = ("LCG.Manchester.uk", "LCG.Glasgow.uk", "LCG.Liverpool.uk", "LCG.CSCS.ch", "LCG.Krakow.pl", "LCG.Beijing.cn",
      "LCG.Lancaster.uk", "CLOUD.CERN.ch", "DIRAC.Yandex.ru")  # fmt: skip
SITES = T1 + T2
UK = ("LCG.RAL.uk", "LCG.Manchester.uk", "LCG.Glasgow.uk", "LCG.Liverpool.uk", "LCG.Lancaster.uk")
MASK = {"LCG.Beijing.cn": "Banned", "LCG.Krakow.pl": "Degraded", "DIRAC.Yandex.ru": "Probing"}
EL9, EL8, ARM = "x86_64-el9", "x86_64-el8", "aarch64-el9"
USERS = ("alice", "bob", "chris", "dana", "eve", "frank", "gina", "hugo", "ines", "jan", "kim", "lena")
GRIDPP_USERS = ("oscar", "pat", "quinn")
GROUPS = (
    # OwnerGroup, VO, JobShare, JobSharing, AllowBackgroundTQs
    ("lhcb_user", "lhcb", 1000.0, False, False),
    ("lhcb_mc", "lhcb", 3000.0, True, False),
    ("lhcb_data", "lhcb", 2000.0, True, False),
    ("lhcb_test", "lhcb", 100.0, True, False),
    ("gridpp_user", "gridpp", 200.0, False, True),
)


def _pick(rng: np.random.Generator, pool: list[Any], n: int, p: list[float] | None = None) -> np.ndarray:
    """N entries drawn from POOL (shared list objects: the columns hold references, never copies)."""
    out = np.empty(len(pool), dtype=object)
    out[:] = pool
    return out[rng.choice(len(pool), size=n, p=p)]


def _empty_lists(n: int) -> np.ndarray:
    out = np.empty(n, dtype=object)
    out[:] = [[]] * n  # one shared empty list: read only
    return out


def job_columns(rng: np.random.Generator, n: int, first_id: int = 50_000_001) -> dict[str, Any]:
    """N waiting DIRAC jobs (about 1 % just Matched) of LHCb production, LHCb users, SAM tests and GridPP users."""
    kind = rng.choice(5, size=n, p=[0.45, 0.15, 0.33, 0.05, 0.02])  # mc, data, user, gridpp, test
    owner = np.empty(n, dtype=object)
    group = np.empty(n, dtype=object)
    vo = np.where(kind == 3, "gridpp", "lhcb").astype(object)
    cpu = np.zeros(n, dtype=np.int64)
    prio = np.ones(n, dtype=np.int64)
    cols = {f: _empty_lists(n) for f in ("Sites", "BannedSites", "GridCEs", "Platforms", "JobTypes", "Tags")}

    m = kind == 0
    k = int(m.sum())
    owner[m], group[m] = "lhcbprod", "lhcb_mc"
    cpu[m] = rng.choice([40000, 120000, 250000, 400000], size=k)
    prio[m] = rng.choice([1, 2, 3], size=k)
    cols["JobTypes"][m] = _pick(rng, [["MCSimulation"]], k)
    cols["Sites"][m] = _pick(rng, [[], list(T1), [*T1, *T2[:4]]], k, [0.7, 0.2, 0.1])
    cols["Platforms"][m] = _pick(rng, [[EL9], [EL9, EL8]], k, [0.6, 0.4])
    cols["Tags"][m] = _pick(rng, [[], ["MultiProcessor", "8Processors"]], k, [0.7, 0.3])

    m = kind == 1
    k = int(m.sum())
    owner[m], group[m] = "lhcbprod", "lhcb_data"
    cpu[m] = rng.choice([20000, 80000, 150000], size=k)
    prio[m] = 5
    cols["JobTypes"][m] = _pick(rng, [["DataReconstruction"], ["Merge"]], k, [0.7, 0.3])
    cols["Sites"][m] = _pick(rng, [[s] for s in T1], k)
    cols["Platforms"][m] = _pick(rng, [[EL9]], k)
    cols["Tags"][m] = _pick(rng, [[], ["4GB"]], k, [0.6, 0.4])

    m = kind == 2
    k = int(m.sum())
    weights = 1.0 / np.arange(1, len(USERS) + 1)
    owner[m] = np.array(USERS, dtype=object)[rng.choice(len(USERS), size=k, p=weights / weights.sum())]
    group[m] = "lhcb_user"
    cpu[m] = rng.choice([300, 3000, 4000, 30000, 86400], size=k, p=[0.2, 0.3, 0.2, 0.2, 0.1])
    prio[m] = rng.choice([0, 1, 2, 5, 10], size=k, p=[0.05, 0.7, 0.1, 0.1, 0.05])
    cols["JobTypes"][m] = _pick(rng, [["User"]], k)
    cols["Sites"][m] = _pick(rng, [[], *[[s] for s in T1[:4]]], k, [0.8, 0.05, 0.05, 0.05, 0.05])
    cols["BannedSites"][m] = _pick(rng, [[], ["LCG.CNAF.it"], ["LCG.Beijing.cn", "DIRAC.Yandex.ru"]], k,
                                   [0.85, 0.1, 0.05])  # fmt: skip
    cols["Platforms"][m] = _pick(rng, [[], [EL9], [ARM]], k, [0.6, 0.37, 0.03])
    cols["Tags"][m] = _pick(rng, [[], ["GPU"]], k, [0.97, 0.03])
    cols["GridCEs"][m] = _pick(rng, [[], ["ce1.cern.ch"]], k, [0.98, 0.02])

    m = kind == 3
    k = int(m.sum())
    owner[m] = np.array(GRIDPP_USERS, dtype=object)[rng.choice(len(GRIDPP_USERS), size=k)]
    group[m] = "gridpp_user"
    cpu[m] = rng.choice([2000, 40000], size=k)
    prio[m] = rng.choice([0, 1], size=k)
    cols["JobTypes"][m] = _pick(rng, [["User"]], k)
    cols["Sites"][m] = _pick(rng, [list(UK)], k)

    m = kind == 4
    k = int(m.sum())
    owner[m], group[m] = "lhcbsam", "lhcb_test"
    cpu[m] = 300
    cols["JobTypes"][m] = _pick(rng, [["Test"]], k)
    cols["Sites"][m] = _pick(rng, [[s] for s in SITES], k)

    status = np.where(rng.random(n) < 0.01, "Matched", "Waiting").astype(object)
    return {"JobID": np.arange(first_id, first_id + n, dtype=np.int64), "Owner": owner, "OwnerGroup": group,
            "VO": vo, "CPUTime": cpu, **cols, "Priority": prio, "Status": status}  # fmt: skip


def _ces(rng: np.random.Generator) -> dict[str, list[Any]]:
    rows: dict[str, list[Any]] = {k: [] for k in ("Site", "GridCE", "Queue", "Platform", "CPUTime", "Tags",
                                                   "RequiredTags", "NumberOfProcessors", "MaxRAM")}  # fmt: skip
    for s in SITES:
        domain = s.split(".", 1)[1].lower().replace(".", "-") + ".org"
        for i in range(1, (3 if s in T1 else 2) + 1):
            multi = i == 2
            rows["Site"].append(s)
            rows["GridCE"].append("ce1.cern.ch" if (s, i) == ("LCG.CERN.cern", 1) else f"ce{i}.{domain}")
            rows["Queue"].append("long" if multi else "default")
            rows["Platform"].append(ARM if s == "CLOUD.CERN.ch" else EL8 if s == "LCG.Krakow.pl" else EL9)
            rows["CPUTime"].append(int(rng.choice([28800, 86400, 172800, 345600])))
            gpu = (s, i) == ("LCG.Manchester.uk", 2)
            rows["Tags"].append(["GPU"] if gpu else [])
            rows["RequiredTags"].append(["GPU"] if gpu else [])
            rows["NumberOfProcessors"].append(8 if multi else 1)
            rows["MaxRAM"].append(16000 if multi else int(rng.choice([2048, 4096])))
    return rows


def dirac_columns(seed: int, n_jobs: int = 3000) -> dict[str, dict[str, Any]]:
    """Every dirac_ table of the demo grid as column arrays (deterministic from SEED, independent of PanDA's).

    Usage: ``cols = dirac_columns(0); len(cols["dirac_jobs"]["JobID"])``
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, STREAM]))
    jobs = job_columns(rng, n_jobs)
    limits = [("LCG.CERN.cern", "", "JobType", "MCSimulation", 3000), ("LCG.RAL.uk", "", "JobType", "User", 800),
              ("LCG.GRIDKA.de", "", "OwnerGroup", "lhcb_user", 500),
              ("LCG.GRIDKA.de", "ce2.gridka-de.org", "JobType", "DataReconstruction", 0)]  # fmt: skip
    counts = [("LCG.CERN.cern", "JobType", "MCSimulation", 3120), ("LCG.RAL.uk", "JobType", "User", 430),
              ("LCG.GRIDKA.de", "OwnerGroup", "lhcb_user", 500),
              ("LCG.GRIDKA.de", "JobType", "DataReconstruction", 40)]  # fmt: skip
    delays = [("LCG.CNAF.it", "JobType", "User", 120, 45.0), ("LCG.PIC.es", "JobType", "MCSimulation", 60, 300.0)]
    return {
        "dirac_jobs": jobs,
        "dirac_group_shares": {
            k: [g[i] for g in GROUPS]
            for i, k in enumerate(("OwnerGroup", "VO", "JobShare", "JobSharing", "AllowBackgroundTQs"))
        },
        "dirac_site_mask": {"Site": list(SITES), "Status": [MASK.get(s, "Active") for s in SITES]},
        "dirac_ces": _ces(rng),
        "dirac_running_limits": {
            k: [r[i] for r in limits] for i, k in enumerate(("Site", "GridCE", "Attribute", "Value", "Limit"))
        },
        "dirac_running_counts": {
            k: [r[i] for r in counts] for i, k in enumerate(("Site", "Attribute", "Value", "Running"))
        },
        "dirac_matching_delays": {
            k: [r[i] for r in delays] for i, k in enumerate(("Site", "Attribute", "Value", "Delay", "SinceLastMatch"))
        },
    }
