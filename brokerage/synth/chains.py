"""Where some of the demo grid's tasks are bound before brokerage: queues pre-assigned by the submitter, and
full-chain workflows (parents on bare nuclei, children following them or waiting for one)."""

from __future__ import annotations

import numpy as np

from brokerage.synth.queues import Queues
from brokerage.synth.sites import Sites


def preassigned_queues(rng: np.random.Generator, q: Queues, prod: np.ndarray, user: np.ndarray) -> np.ndarray:
    """The site column: one or two production queues for a few production tasks, an analysis queue for a few
    user tasks, None for the rest."""
    n = len(prod)
    preassigned = np.full(n, None, dtype=object)
    prod_q = np.flatnonzero(q.type != "analysis")
    anal_q = np.flatnonzero(q.type != "production")
    m = prod & (rng.random(n) < 0.015) & (len(prod_q) > 0)
    for i in np.flatnonzero(m).tolist():
        k = 1 if rng.random() < 0.7 else 2
        preassigned[i] = ",".join(q.name[rng.choice(prod_q, size=min(k, len(prod_q)), replace=False)].tolist())
    m = user & (rng.random(n) < 0.01) & (len(anal_q) > 0)
    preassigned[m] = q.name[rng.choice(anal_q, size=int(m.sum()))] if len(anal_q) else None
    return preassigned


def _chain_heads(
    rng: np.random.Generator,
    sites: Sites,
    tid: np.ndarray,
    prod_idx: np.ndarray,
    bare: np.ndarray,
    n_chain: int,
    status: np.ndarray,
    nucleus: np.ndarray,
    fullchain: np.ndarray,
    parent: np.ndarray,
) -> None:
    """Parents running on bare nuclei, each with one or two later children that follow it or wait (in place)."""
    heads = np.sort(rng.choice(prod_idx[: len(prod_idx) // 2], size=min(n_chain, len(prod_idx) // 2), replace=False))
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


def full_chains(
    rng: np.random.Generator,
    sites: Sites,
    tid: np.ndarray,
    prod: np.ndarray,
    status: np.ndarray,
    nucleus: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """fullChain and parent_tid of every task: parents on bare nuclei and their children, roots of new chains
    waiting for a (bare) nucleus, capable children of normal tasks. Moves STATUS and NUCLEUS to match (in place)."""
    n = len(tid)
    fullchain = np.full(n, "", dtype=object)
    parent = np.full(n, np.nan)
    bare = np.flatnonzero(sites.bare != "")
    prod_idx = np.flatnonzero(prod)
    if not (len(bare) and len(prod_idx) >= 10):
        return fullchain, parent
    n_chain = max(2, round(0.01 * len(prod_idx)))
    _chain_heads(rng, sites, tid, prod_idx, bare, n_chain, status, nucleus, fullchain, parent)
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
    return fullchain, parent
