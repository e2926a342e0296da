"""MySQL's ``ORDER BY RAND() / w ASC`` take-first: its exact probabilities and a seeded draw."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GL_NODES = 64  # Gauss-Legendre nodes of the probability integral (error below 1e-12 on every case tested)
TAIL = 40.0  # the integrand is below exp(-40) beyond s = TAIL / (S - 1): that tail is dropped
SERIES_MAX = 0.25  # r·s at most this: series of SERIES_TERMS terms, error below 0.25**29
SERIES_TERMS = 28
_X, _W = np.polynomial.legendre.leggauss(GL_NODES)


def first_probabilities(weights: np.ndarray, counts: np.ndarray | None = None) -> np.ndarray:
    """P(row i has the smallest U_i / w_i), U_i ~ U(0, 1) independent: ``∫ w_i Π_{j≠i} max(0, 1 − w_j t) dt``.

    With COUNTS, entry i stands for COUNTS[i] rows of weight WEIGHTS[i] and the probability returned is that of ONE
    of them. Rows of weight 0 never come first unless every weight is 0 (then all rows are equally likely).
    Usage: ``first_probabilities(np.array([2.0, 1.0])).tolist() == [0.75, 0.25]``
    """
    w = np.asarray(weights, dtype=np.float64)
    c = np.ones(len(w)) if counts is None else np.asarray(counts, dtype=np.float64)
    out = np.zeros(len(w))
    pos = (w > 0) & (c > 0)
    if not pos.any():
        total = c.sum()
        return np.where(c > 0, 1.0 / total, 0.0) if total > 0 else out
    uniq, inv = np.unique(w[pos], return_inverse=True)
    mult = np.bincount(inv, weights=c[pos])
    r = uniq / uniq[-1]  # ratios to the largest weight, substituting s = w_max t in [0, 1]
    s_total = float(mult @ r)
    s_max = 1.0 if s_total - 1.0 <= TAIL else TAIL / (s_total - 1.0)
    x = (_X + 1.0) * 0.5 * s_max
    qw = _W * 0.5 * s_max
    # rows with r·s small enter through power series (log(1 − y) and 1/(1 − y)), the few others directly
    small = r * s_max <= SERIES_MAX
    rb, mb, rs, ms = r[~small], mult[~small], r[small], mult[small]
    logs_big = np.log1p(-np.outer(x, rb))
    total_log = logs_big @ mb
    xp = np.ones_like(x)
    rp = np.ones_like(rs)
    moments = np.empty(SERIES_TERMS + 1)
    powers = np.empty((SERIES_TERMS + 1, len(rs)))
    for p in range(SERIES_TERMS + 1):
        powers[p] = rp
        if p:
            total_log -= xp * (float(ms @ rp) / p)
        xp = xp * x if p else x.copy()
        rp = rp * rs
    e = qw * np.exp(total_log)
    xp = np.ones_like(x)
    for p in range(SERIES_TERMS + 1):
        moments[p] = float(e @ xp)
        xp = xp * x
    integral = np.empty(len(r))
    integral[small] = moments @ powers
    integral[~small] = e @ (1.0 / (1.0 - np.outer(x, rb)))
    out[pos] = (r * integral)[inv]
    return out


def draw_first(weights: np.ndarray, rng: np.random.Generator) -> int:
    """The row whose RAND() / weight is smallest (one draw of U(0, 1) per row, in row order).

    Usage: ``draw_first(np.array([2.0, 1.0]), np.random.default_rng(0))``
    """
    w = np.asarray(weights, dtype=np.float64)
    u = rng.random(len(w))
    if not (w > 0).any():
        return int(np.argmin(u))
    with np.errstate(divide="ignore"):
        keys = np.where(w > 0, u / np.where(w > 0, w, 1.0), np.inf)
    return int(np.argmin(keys))


@dataclass(frozen=True)
class JobChoice:
    """How a job is taken from one task queue: the chance of each user priority and of each candidate job."""

    priorities: list[dict[str, float]]  # {"priority", "jobs", "probability"} per user priority present
    candidates: dict[int, list[int]]  # user priority -> the JobIDs the job is drawn from (lowest first)
    job: int
    job_priority: int

    def job_probability(self, job_id: int) -> float:
        """Probability that JOB_ID is the job taken (given this task queue)."""
        for p in self.priorities:
            cands = self.candidates[int(p["priority"])]
            if job_id in cands:
                return p["probability"] / len(cands)
        return 0.0


def choose_job(
    job_ids: np.ndarray, user_priority: np.ndarray, weight: np.ndarray, per_try: int, rng: np.random.Generator
) -> JobChoice:
    """Seed: RAND()/weight over the job rows picks a user priority; of the jobs with it, the PER_TRY lowest JobIDs
    are shuffled and the first is taken. JOB_IDS must be sorted ascending.

    Usage: ``choose_job(ids, prio, prio.astype(float), 10, np.random.default_rng(0)).job``
    """
    values, inv, counts = np.unique(user_priority, return_inverse=True, return_counts=True)
    per_value_w = np.zeros(len(values))
    per_value_w[inv] = weight
    p_row = first_probabilities(per_value_w, counts)
    winner_row = draw_first(weight, rng)
    won = int(user_priority[winner_row])
    candidates = {int(v): job_ids[user_priority == v][:per_try].tolist() for v in values.tolist()}
    pick = int(rng.integers(len(candidates[won])))
    prios = [
        {"priority": int(v), "jobs": int(n), "probability": float(p * n)}
        for v, n, p in zip(values.tolist(), counts.tolist(), p_row.tolist(), strict=True)
    ]
    return JobChoice(prios, candidates, int(candidates[won][pick]), won)
