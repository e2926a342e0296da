"""Analysis brokerage step 4: the original and the new basic weights (W_s x W_q) of the final candidates."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from brokerage.brokers.analysis_context import AnalContext
from brokerage.brokers.analysis_throttle import USER_ANALYSIS
from brokerage.checks.running import effective_running
from brokerage.framework import Reads, Step
from brokerage.model.gdpconfig import ConfigError

EXPRESS_ANALYSIS = "Express Analysis"  # seed: W_s table "For jobs in User Analysis and Express Analysis"
SITE_CLASS_SHARES = (USER_ANALYSIS, EXPRESS_ANALYSIS)
W_Q_FLOOR = 0.001  # seed (W_s): "some small positive numbers ... to avoid dead zero"; the same guard for W_q


STEPS: tuple[Step, ...] = (
    Step("basic", Reads(config=("ANAL_BASIC_WEIGHT",)), "weight"),
    Step("original", Reads(config=("BOOTSTRAP_NBATCHJOB_CAP",), facts=("counts",)), "weight"),
    Step("new", kind="weight"),
    Step("W_s", Reads(config=("SITE_CLASS_EPSILON_1", "SITE_CLASS_EPSILON_2")), "weight"),
    Step("W_q", Reads(facts=("stab",)), "weight"),
)
"""Step 4's weight factors, in the decision's order, and the gdpconfig keys each reads."""


@dataclass(frozen=True)
class AnalWeights:
    """Both basic weights and their terms, for the final candidates (arrays aligned with ``idx``)."""

    idx: np.ndarray
    nrunning: np.ndarray
    running_rule: np.ndarray
    original: np.ndarray
    w_s: np.ndarray
    w_q: np.ndarray
    w_q_rule: np.ndarray
    remaining: np.ndarray
    new: np.ndarray
    used: np.ndarray
    n_j: float


def site_class_weight(
    task_class: int | None, site_class: np.ndarray, n_j: float, eps1: float, eps2: float
) -> np.ndarray:
    """W_s of the seed's table: the task class's own site class gets N_j, the others epsilon_1 or epsilon_2.

    Unclassified tasks count as class A, unclassified sites as mid-sites.
    Usage: ``site_class_weight(-1, np.array([1.0, 0.0, -1.0]), 8, 0.05, 0.001)``
    """
    tc = 1 if task_class is None else int(task_class)
    # columns: hi-site, mid-site, lo-site
    if tc >= 1:
        row = (n_j, eps1, eps2)
    elif tc == 0:
        row = (eps2, n_j, eps1)
    else:
        row = (eps2, eps1, n_j)
    sc = np.where(np.isnan(site_class), 0.0, site_class)
    return np.where(sc >= 1, row[0], np.where(sc <= -1, row[2], row[1]))


def queue_length_weight(max_q_len: np.ndarray, nq_user: np.ndarray, n_j: float) -> tuple[np.ndarray, np.ndarray]:
    """W_q = (max_q_len − nQ_user − N_j/N_PQ) / (Σ (max_q_len − nQ_user) − N_j) over the candidate PQs.

    The user's room max_q_len − nQ_user is floored at 0; a non-positive numerator becomes W_Q_FLOOR; when the
    denominator is not positive the room shares rem/Σrem are used, and 1/N_PQ when no PQ has room.
    Usage: ``queue_length_weight(np.array([10.0, 30.0]), np.array([0.0, 10.0]), 4)``
    """
    n_pq = len(max_q_len)
    rem = np.maximum(max_q_len - nq_user, 0.0)
    total = float(rem.sum())
    den = total - n_j
    if n_pq == 0:
        return np.zeros(0), np.zeros(0, dtype=object)
    if den > 0:
        return np.maximum(rem - n_j / n_pq, W_Q_FLOOR) / den, np.full(n_pq, "seed", dtype=object)
    if total > 0:
        return np.maximum(rem, W_Q_FLOOR) / total, np.full(n_pq, "rem/sum(rem)", dtype=object)
    return np.full(n_pq, 1.0 / n_pq), np.full(n_pq, "1/N_PQ", dtype=object)


def weights(ctx: AnalContext, idx: np.ndarray) -> AnalWeights:
    """Original and new basic weights of the candidate queues IDX; ANAL_BASIC_WEIGHT picks the ranking one."""
    c, cfg, qa = ctx.counts, ctx.config, ctx.qa
    eps1, eps2 = float(cfg["SITE_CLASS_EPSILON_1"]), float(cfg["SITE_CLASS_EPSILON_2"])
    if not eps1 > eps2:
        raise ConfigError("SITE_CLASS_EPSILON_1", f"{eps1} must exceed SITE_CLASS_EPSILON_2={eps2} (seed: ε1 > ε2)")
    nrun, rule = effective_running(
        c["running"][idx],
        qa["nbatchjob"].astype(float)[idx],
        qa["numslots"].astype(float)[idx],
        c["starting"][idx],
        float(cfg["BOOTSTRAP_NBATCHJOB_CAP"]),
    )
    queued = c["activated"][idx] + c["assigned"][idx] + c["starting"][idx] + c["defined"][idx]
    original = (nrun + 1.0) / (queued + 1.0)
    n_j = float(ctx.task.get("chunk_njobs") or 0)
    if ctx.task.get("gshare") in SITE_CLASS_SHARES:
        w_s = site_class_weight(ctx.task.get("task_class"), qa["site_class"].astype(float)[idx], n_j, eps1, eps2)
    else:
        w_s = np.full(len(idx), n_j)
    w_q, w_q_rule = queue_length_weight(ctx.stab.max_q_len[idx], ctx.stab.nQ_user[idx], n_j)
    new = w_s * w_q
    used = new if cfg["ANAL_BASIC_WEIGHT"] == "new" else original
    remaining = np.maximum(ctx.stab.max_q_len[idx] - ctx.stab.nQ_user[idx], 0.0)
    return AnalWeights(idx, nrun, rule, original, w_s, w_q, w_q_rule, remaining, new, used, n_j)


def candidate_factors(ctx: AnalContext, w: AnalWeights, k: int) -> tuple[dict[str, float], dict[str, Any]]:
    """Weight factors and the numbers behind them for the K-th candidate."""
    i = int(w.idx[k])
    c = ctx.counts
    sc = ctx.qa["site_class"][i]
    factors = {
        "basic": float(w.used[k]),
        "original": float(w.original[k]),
        "new": float(w.new[k]),
        "W_s": float(w.w_s[k]),
        "W_q": float(w.w_q[k]),
    }
    details: dict[str, Any] = {
        "basic_weight": str(ctx.config["ANAL_BASIC_WEIGHT"]),
        "nRunning": float(w.nrunning[k]),
        "nRunning_rule": str(w.running_rule[k]),
        "nActivated": float(c["activated"][i]),
        "nAssigned": float(c["assigned"][i]),
        "nStarting": float(c["starting"][i]),
        "nDefined": float(c["defined"][i]),
        "site_class": None if pd.isna(sc) else int(sc),
        "N_j": w.n_j,
        "userQRem": float(w.remaining[k]),
        "W_q_rule": str(w.w_q_rule[k]),
        "nQ_user": float(ctx.stab.nQ_user[i]),
        "max_q_len": float(ctx.stab.max_q_len[i]),
    }
    return factors, details
