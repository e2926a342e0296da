"""Is the queue working: pilots arriving (-nopilot), jobs starting (-inactive), transfers draining (-transferring)."""

from __future__ import annotations

import numpy as np

from brokerage.checks.context import QueueContext
from brokerage.framework import Derived, Filter, Reads, Verdict
from brokerage.model import views
from brokerage.model.explain import fmt, fmt_many
from brokerage.model.tables import DEFAULT_VO

ATLAS_VO = DEFAULT_VO  # these checks are the ATLAS brokers': they count VO atlas' jobs (shared by every task)


def f_nopilot(ctx: QueueContext) -> Verdict:
    """Skip queues without pilots for the last NO_PILOT_HOURS (3 h)."""
    hours = float(ctx.config["NO_PILOT_HOURS"])
    return Verdict(~views.without_pilots(ctx.qa, hours), "-nopilot", views.no_pilot_reasons(ctx.qa, hours))


NOPILOT = Filter(
    "pilot check",
    ("-nopilot",),
    "skip queues without pilots for the last NO_PILOT_HOURS",
    f_nopilot,
    reads=Reads(config=("NO_PILOT_HOURS",)),
)


def inactive_verdict(hours: np.ndarray, waiting: np.ndarray, limit: float, counted: str) -> Verdict:
    """-inactive (temporary) where no job started for more than LIMIT HOURS while WAITING (the COUNTED jobs) > 0.

    Usage: ``inactive_verdict(qa.laststart_hours, counts["activated"], 6.0, "activated")``
    """
    inactive = (hours > limit) & (waiting > 0)
    return Verdict(
        ~inactive,
        "-inactive",
        lambda idx: [
            f"inactive: no job started for {h} h > {fmt(limit)} h with {w} jobs {counted}"
            for h, w in zip(fmt_many(hours[idx], 2), fmt_many(waiting[idx]), strict=True)
        ],
        temporary=True,
    )


def f_inactive_queues(ctx: QueueContext) -> Verdict:
    """Queues where no job started for INACTIVE_HOURS although jobs were activated (every share counts)."""
    waiting = views.job_counts(ctx.cache, None, ATLAS_VO)["activated"]
    return inactive_verdict(ctx.qa.laststart_hours, waiting, float(ctx.config["INACTIVE_HOURS"]), "activated")


def f_transferring(ctx: QueueContext) -> Verdict:
    """Too many transferring jobs: skip if transferring > max(transferring_limit, 2 x running).

    The limit is the queue's (CRIC transferringlimit), so jobs of every share count, not only the task's.
    """
    lim = ctx.qa["transferringlimit"].astype(float, copy=False)
    lim = np.where(lim > 0, lim, float(ctx.config["DEFAULT_TRANSFERRING_LIMIT"]))
    every_share = views.job_counts(ctx.cache, None, ATLAS_VO)
    tr = every_share["transferring"]
    run = every_share["running"]
    cap = np.maximum(lim, 2.0 * run)
    return Verdict(
        tr <= cap,
        "-transferring",
        lambda idx: [
            f"too many transferring jobs {t} > max({m}, 2x{r})"
            for t, m, r in zip(fmt_many(tr[idx]), fmt_many(lim[idx]), fmt_many(run[idx]), strict=True)
        ],
        temporary=True,
    )


TRANSFERRING = Filter(
    "transferring check",
    ("-transferring",),
    "skip if transferring > max(transferring_limit, 2 x running); the limit is the site's or 2000",
    f_transferring,
    temporary=True,
    reads=Reads(config=("DEFAULT_TRANSFERRING_LIMIT",)),
)


INACTIVE_QUEUES = Derived("inactive queues", Reads(config=("INACTIVE_HOURS",)), f_inactive_queues)
"""The inactive-queue verdict, shared by every task it applies to."""
