"""The software of the demo grid: the releases, caches and containers tasks use, and what each AUTO queue
publishes (cmtconfigs, containers, CVMFS, architectures, tags), AGLT2's verbatim, plus the ALL row that
maps container names to sources (``queue_software``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from brokerage.synth.queues import KINDS, Queues

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


def _copy_json(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _copy_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy_json(x) for x in v]
    return v


_PROFILES = [*_CMT_PROFILES, (ARM_EL9,)]
_COMPATIBLE = [[j for j, r in enumerate(RELEASES) if r[2] in prof] for prof in _PROFILES]
# per release: its tag, and its tag as explicit-container queues publish it (with a container)
_TEMPLATES = [
    (_tag(p, r, c), _tag(p, r, c, f"atlas/{p.lower()}:{r}" if p in ("Athena", "AnalysisBase") else ""))
    for p, r, c in RELEASES
]
_FIELDS = ("cmtconfigs", "containers", "cvmfs", "architectures", "tags")


def _picks(rng: np.random.Generator, q: Queues) -> tuple[np.ndarray, dict[str, list[Any]]]:
    """Which queues publish an AUTO JSON (a few AUTO queues miss it), and each queue's draws for its parts."""
    auto = np.array([r == ["AUTO"] for r in q.cols["releases"]], dtype=bool)
    auto &= (rng.random(q.n) >= 0.02) | (q.name == "AGLT2")
    picks = {
        "cmt": rng.choice(len(_CMT_PROFILES), size=q.n, p=[0.45, 0.25, 0.18, 0.12]).tolist(),
        "cont": np.searchsorted(_QUEUE_CONTAINERS_CUM, rng.random(q.n), side="right").tolist(),
        "cvmfs": np.searchsorted(_QUEUE_CVMFS_CUM, rng.random(q.n), side="right").tolist(),
        "arch": rng.integers(0, len(_CPU_ARCH), q.n).tolist(),
        "no_arch": (rng.random(q.n) < 0.1).tolist(),
        "gpu": rng.integers(0, len(_GPU_MODELS), q.n).tolist(),
        "tag_keep": (rng.random((q.n, len(RELEASES))) < 0.6).tolist(),
    }
    return np.flatnonzero(auto), picks


def _queue_row(kind: str, i: int, picks: dict[str, list[Any]]) -> dict[str, Any]:
    """The AUTO JSON of queue I of KIND from its draws: an HPC has no CVMFS, an ARM queue its own profile."""
    prof = len(_CMT_PROFILES) if kind == "ARM" else picks["cmt"][i]
    hpc = kind == "HPC"
    # no CVMFS on the HPC: only what the tags list
    containers = [] if hpc else list(_QUEUE_CONTAINERS[picks["cont"][i]])
    cvmfs = [] if hpc else list(_QUEUE_CVMFS[picks["cvmfs"][i]])
    explicit = int(picks["cont"][i] == 2 and not hpc)
    if kind == "ARM":
        arch = [_clone(_ARM_ARCH)]
    elif picks["no_arch"][i]:
        arch = []
    else:
        arch = [_clone(_CPU_ARCH[picks["arch"][i]])]
    if kind == "GPU":
        arch.append({"type": "gpu", "vendor": ["nvidia", "excl"], "model": [_GPU_MODELS[picks["gpu"][i]]]})
    keep = picks["tag_keep"][i]
    tags = [_clone(_TEMPLATES[j][explicit]) for j in _COMPATIBLE[prof] if keep[j] or hpc]
    return {
        "cmtconfigs": list(_PROFILES[prof]),
        "containers": containers,
        "cvmfs": cvmfs,
        "architectures": arch,
        "tags": tags,
    }


def _all_tags() -> list[dict[str, Any]]:
    """The ALL row's tags: every container name with its /cvmfs source."""
    return [
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


def software_rows(rng: np.random.Generator, q: Queues) -> dict[str, Any]:
    """The AUTO JSON of every releases=['AUTO'] queue (a few missing), AGLT2's verbatim, and the ALL dictionary."""
    idx, picks = _picks(rng, q)
    out: dict[str, list[Any]] = {k: [] for k in ("panda_queue", *_FIELDS)}
    names, kinds = q.name.tolist(), q.kind.tolist()
    for i in idx.tolist():
        if names[i] == "AGLT2":
            row = {k: _copy_json(v) for k, v in AGLT2_SOFTWARE.items()}
        else:
            row = _queue_row(KINDS[kinds[i]], i, picks)
        out["panda_queue"].append(names[i])
        for k in _FIELDS:
            out[k].append(row[k])
    out["panda_queue"].append("ALL")
    for k in ("cmtconfigs", "containers", "cvmfs", "architectures"):
        out[k].append([])
    out["tags"].append(_all_tags())
    return out
