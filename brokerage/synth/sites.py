"""The ATLAS sites of the demo grid: real nuclei and satellites first, then generated tier-2/3 sites; which
nucleus plays which story (backlogged, nearly full, bare, inactive, ...); the ``sites`` table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from brokerage.synth.common import NUCLEUS_FRACTION

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
class Sites:
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


def _generated(rng: np.random.Generator, n_gen: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Clouds, tiers and names (CLOUD-T<tier>-<number>) of N_GEN generated sites."""
    gen_cloud = rng.choice(len(_CLOUDS), size=n_gen, p=_CLOUD_P)
    gen_tier = np.where(rng.random(n_gen) < 0.7, 2, 3)
    counters: dict[tuple[int, int], int] = {}
    gen_names = []
    for c, t in zip(gen_cloud.tolist(), gen_tier.tolist(), strict=True):
        k = counters.get((c, t), 0) + 1
        counters[(c, t)] = k
        gen_names.append(f"{_CLOUDS[c]}-T{t}-{k:03d}")
    return gen_cloud, gen_tier, gen_names


def _stories(
    rng: np.random.Generator, n_nuc: int, n_sites: int
) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Which sites play which story, and the bareNucleus and state columns those stories set."""
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
    return story, bare, state


def site_catalog(rng: np.random.Generator, n_sites: int) -> Sites:
    """Real ATLAS nuclei and satellites first, then generated tier-2/3 names; stories by nucleus position."""
    n_nuc = 1 if n_sites < 3 else min(len(_NUCLEI), max(2, round(n_sites * NUCLEUS_FRACTION)))
    n_sat = n_sites - n_nuc
    nuclei = _NUCLEI[:n_nuc]
    real = _SATELLITES[: min(n_sat, len(_SATELLITES))]
    n_gen = n_sat - len(real)
    gen_cloud, gen_tier, gen_names = _generated(rng, n_gen)
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
    story, bare, state = _stories(rng, n_nuc, n_sites)
    return Sites(
        name=np.array(name, dtype=object),
        prefix=np.array(prefix, dtype=object),
        rse=np.array(rse, dtype=object),
        tier=np.array(tier, dtype=np.int64),
        cloud=np.array(cloud, dtype=object),
        nucleus=np.arange(n_sites) < n_nuc,
        bare=bare,
        state=state,
        weight=weight,
        story=story,
    )


def site_columns(sites: Sites) -> dict[str, Any]:
    """The ``sites`` table: name, nucleus or satellite, tier, cloud, state and bareNucleus."""
    return {
        "site_name": sites.name,
        "role": np.where(sites.nucleus, "nucleus", "satellite").astype(object),
        "tier_level": sites.tier,
        "cloud": sites.cloud,
        "state": sites.state,
        "bare_nucleus": sites.bare,
    }
