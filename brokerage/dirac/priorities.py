"""Job RealPriority and task-queue Priority from group shares, as TaskQueueDB computes them (reference §4)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from brokerage.framework import Reads, Step
from brokerage.model.gdpconfig import Config

STEPS: tuple[Step, ...] = (
    Step("priority", Reads(config=("DIRAC_JOB_SHARE", "DIRAC_TQ_MIN_SHARE", "DIRAC_BACKGROUND_PRIORITY",
                                   "DIRAC_TQ_PRIORITY"))),
)  # fmt: skip
"""The gdpconfig keys the task queue priorities read (DIRAC_JOB_SHARE_<group> members included)."""

MIN_USER_PRIORITY = 0.001  # __hackJobPriority clamps the user priority to [0.001, 10] ...
MAX_USER_PRIORITY = 10
ZERO_PRIORITY_REAL = 1e-5  # ... then Priority <= 0 becomes 1e-5 ...
TOP_PRIORITY_REAL = 1e6  # ... and Priority 10 becomes 1e6 ("always started before lower priority jobs")
PRIORITY_DECIMALS = 4  # UPDATE tq_TaskQueues SET Priority=%.4f


def real_priority(priority: np.ndarray) -> np.ndarray:
    """RealPriority of user priorities: 0 (or less) -> 1e-5, 1..9 as is, 10 (or more) -> 1e6.

    Usage: ``real_priority(np.array([0, 3, 10])).tolist() == [1e-5, 3.0, 1e6]``
    """
    p = np.minimum(np.maximum(np.floor(np.asarray(priority, dtype=np.float64)), MIN_USER_PRIORITY), MAX_USER_PRIORITY)
    return np.where(p == MIN_USER_PRIORITY, ZERO_PRIORITY_REAL, np.where(p == MAX_USER_PRIORITY, TOP_PRIORITY_REAL, p))


@dataclass(frozen=True)
class GroupShares:
    """Per group: JobShare (after DIRAC_JOB_SHARE_<group> overrides), JobSharing and AllowBackgroundTQs."""

    share: dict[str, float]
    job_sharing: dict[str, bool]
    background: dict[str, bool]
    default_share: float

    def share_of(self, group: str) -> float:
        """The effective JobShare of GROUP."""
        return self.share.get(group, self.default_share)


def group_shares(table: pd.DataFrame, config: Config, groups: list[str] | None = None) -> GroupShares:
    """Shares of the groups in TABLE (dirac_group_shares) and GROUPS, with the gdpconfig overrides applied.

    A group without a row gets DIRAC_JOB_SHARE; ``DIRAC_JOB_SHARE_<group>`` set in the config replaces a row's share.
    Usage: ``group_shares(snap.tables["dirac_group_shares"], Config()).share_of("lhcb_user")``
    """
    default = float(config["DIRAC_JOB_SHARE"])
    share = {str(g): float(s) for g, s in zip(table["OwnerGroup"], table["JobShare"], strict=True)}
    sharing = {str(g): bool(s) for g, s in zip(table["OwnerGroup"], table["JobSharing"], strict=True)}
    background = {str(g): bool(s) for g, s in zip(table["OwnerGroup"], table["AllowBackgroundTQs"], strict=True)}
    names = (
        set(share)
        | set(groups or ())
        | {
            k[len("DIRAC_JOB_SHARE_") :]
            for k in (*config.stored, *config.overrides)
            if k.startswith("DIRAC_JOB_SHARE_")
        }
    )
    for g in names:
        key = f"DIRAC_JOB_SHARE_{g}"
        if key in config.overrides or key in config.stored:
            share[g] = float(config[key])
    return GroupShares(share, sharing, background, default)


@dataclass(frozen=True)
class PriorityInputs:
    """What made each task queue's Priority: its entity's share s, owners U, mean RealPriority a, background flag,
    the sum T over the entity and the site-variant group whose p's were summed."""

    share: np.ndarray
    owners: np.ndarray
    mean_real: np.ndarray
    background: np.ndarray
    entity_total: np.ndarray
    variant: np.ndarray
    job_sharing: np.ndarray


def tq_priorities(
    owner: np.ndarray,
    group: np.ndarray,
    variant_key: np.ndarray,
    njobs: np.ndarray,
    real_sum: np.ndarray,
    shares: GroupShares,
    config: Config,
) -> tuple[np.ndarray, PriorityInputs]:
    """Priority of every task queue from its group's share (reference §4.2), and the inputs that made it.

    VARIANT_KEY is equal for task queues whose definitions differ only in Sites/BannedSites (same owner and group);
    REAL_SUM is the sum of RealPriority of each queue's jobs. Empty queues get NaN (DIRAC leaves them unchanged).
    Usage: ``prio, why = tq_priorities(owner, group, variant, njobs, real_sum, shares, Config())``
    """
    n = len(owner)
    groups = np.asarray(group, dtype=object)
    frame = pd.DataFrame({"owner": owner, "group": groups, "variant": variant_key, "njobs": njobs})
    users = frame.groupby("group", sort=False)["owner"].nunique()  # empty task queues count too
    u = users.reindex(groups).to_numpy(dtype=np.float64)
    sharing = np.array([shares.job_sharing.get(g, False) for g in groups.tolist()], dtype=bool)
    allow_bg = np.array([shares.background.get(g, False) for g in groups.tolist()], dtype=bool)
    group_share = np.array([shares.share_of(g) for g in groups.tolist()], dtype=np.float64)
    s = np.where(sharing, group_share, group_share / np.maximum(u, 1))
    has_jobs = njobs > 0
    a = np.divide(real_sum, njobs, out=np.full(n, np.nan), where=has_jobs)
    min_share = float(config["DIRAC_TQ_MIN_SHARE"])
    bg = has_jobs & allow_bg & (a <= float(config["DIRAC_BACKGROUND_PRIORITY"]))
    entity = np.where(sharing, groups, groups + "\x1f" + np.asarray(owner, dtype=object))
    counted = np.where(has_jobs & ~bg, a, 0.0)
    total = pd.Series(counted).groupby(entity).transform("sum").to_numpy()
    p = np.where(bg, min_share, np.maximum(s * np.divide(a, total, out=np.zeros(n), where=total > 0), min_share))
    p = np.where(has_jobs, p, 0.0)
    summed = pd.Series(p).groupby(variant_key).transform("sum").to_numpy()
    prio = np.where(has_jobs, np.round(summed, PRIORITY_DECIMALS), np.nan)
    if config["DIRAC_TQ_PRIORITY"] == "stuck":
        prio = np.where(has_jobs, 1.0, np.nan)
    why = PriorityInputs(s, u, a, bg, total, np.asarray(variant_key), sharing)
    return prio, why
