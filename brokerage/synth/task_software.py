"""The software the demo grid's tasks ask for: release (transHome), cmtconfig and architecture (with CPU and
GPU specs), and container (by name, by /cvmfs path, or a user's own image)."""

from __future__ import annotations

from typing import Any

import numpy as np

from brokerage.synth.common import choice_by
from brokerage.synth.software import CONTAINERS, CVMFS_REGISTRY, EL9, RELEASES

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
_DOCKER_IMAGES = (
    "docker://gitlab-registry.cern.ch/atlas-physics/hdbs/analysis:v1.2",
    "docker://ghcr.io/atlas-user/fitter:3",
)


def _releases(
    rng: np.random.Generator, ptype: np.ndarray, user: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Release of every task by processing type (some user tasks none, a few a nightly): release index, transHome
    and cmtconfig."""
    n = len(ptype)
    rel_idx = np.full(n, -1, dtype=np.int64)
    for t, table in _TYPE_RELEASE.items():
        m = ptype == t
        rel_idx[m] = choice_by(rng, table, int(m.sum()))
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
    return rel_idx, transhome, sw


def _architecture(rng: np.random.Generator, user: np.ndarray, sw: np.ndarray) -> np.ndarray:
    """The architecture a task asks for: its cmtconfig, some @centos7, an alternative, a #CPU or &GPU spec."""
    n = len(sw)
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
    return arch


def _containers(
    rng: np.random.Generator, user: np.ndarray, sw: np.ndarray, rel_idx: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Container of every task (tasks with a cmtconfig but no release always have one), and onlyTagsForFC."""
    n = len(sw)
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
    return container, onlytags


def task_software(rng: np.random.Generator, ptype: np.ndarray, user: np.ndarray) -> tuple[dict[str, Any], np.ndarray]:
    """transHome, architecture, container and onlyTagsForFC of every task, and its cmtconfig (for its name)."""
    rel_idx, transhome, sw = _releases(rng, ptype, user)
    arch = _architecture(rng, user, sw)
    container, onlytags = _containers(rng, user, sw, rel_idx)
    return {
        "architecture": arch,
        "transhome": transhome,
        "container_name": container,
        "onlytagsforfc": onlytags,
    }, sw
