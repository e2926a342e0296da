"""Links to the nucleus: blocked or congested links (-link_unusable, -links_full) and express network weight."""

from __future__ import annotations

import numpy as np

from brokerage.checks.context import ProdContext
from brokerage.framework import Filter, Reads, Verdict
from brokerage.model.explain import fmt, fmt_many
from brokerage.model.network import link_table, over_sat_cap


def f_link_blocked(ctx: ProdContext) -> Verdict | None:
    """Skip queues if their links to the nucleus are blocked."""
    if ctx.nw is None:
        return None
    nucleus, sites = ctx.nucleus, ctx.qa["atlas_site"]
    return Verdict(
        ~ctx.nw.blocked,
        "-link_unusable",
        lambda idx: [f"link from satellite={s} to nucleus={nucleus} is blocked" for s in sites[idx].tolist()],
    )


LINK_BLOCKED = Filter(
    "link check",
    ("-link_unusable",),
    "skip queues if their links to the nucleus are blocked",
    f_link_blocked,
    reads=Reads(facts=("nw", "nucleus")),
)


def f_link_queued(ctx: ProdContext) -> Verdict | None:
    """Skip queues if over NQUEUED_SAT_CAP files are queued on their links to the nucleus."""
    if ctx.nw is None:
        return None
    nucleus, q, sites = ctx.nucleus, ctx.nw.nqueued, ctx.qa["atlas_site"]
    cap = ctx.config["NQUEUED_SAT_CAP"]
    return Verdict(
        ~over_sat_cap(q, cap, ctx.at_nucleus),
        "-link_unusable",
        lambda idx: [
            f"{n} files queued from satellite={s} to nucleus={nucleus} > NQUEUED_SAT_CAP={cap}"
            for n, s in zip(fmt_many(q[idx]), sites[idx].tolist(), strict=True)
        ],
        temporary=True,
    )


LINK_QUEUED = Filter(
    "satellite link queue check",
    ("-link_unusable",),
    "skip queues if over NQUEUED_SAT_CAP files are queued on their links to the nucleus",
    f_link_queued,
    temporary=True,
    reads=Reads(config=("NQUEUED_SAT_CAP",), facts=("nw", "nucleus", "at_nucleus")),
)


def f_links_full(ctx: ProdContext) -> Verdict | None:
    """Skip all queues if more than NQUEUED_NUC_CAP_FOR_JOBS files are being aggregated to the nucleus."""
    if ctx.nw is None:
        return None
    links = link_table(ctx.cache, ctx.nucleus or "")
    total = links.total_queued_express if ctx.express else links.total_queued
    cap = ctx.config["NQUEUED_NUC_CAP_FOR_JOBS"]
    return Verdict(
        np.full(ctx.n, total <= cap),
        "-links_full",
        f"{fmt(total)} files queued to nucleus={ctx.nucleus} > NQUEUED_NUC_CAP_FOR_JOBS={cap}",
        temporary=True,
    )


LINKS_FULL = Filter(
    "nucleus transfer queue check",
    ("-links_full",),
    "skip all queues if more than NQUEUED_NUC_CAP_FOR_JOBS files are being aggregated to the nucleus",
    f_links_full,
    temporary=True,
    reads=Reads(config=("NQUEUED_NUC_CAP_FOR_JOBS",), facts=("nw", "nucleus", "express")),
)


def f_network_express(ctx: ProdContext) -> Verdict | None:
    """processingType=urgent or priority >= 1000: network weight must be >= NW_THRESHOLD x NW_WEIGHT_MULTIPLIER."""
    if ctx.nw is None or not ctx.express:
        return None
    thr = float(ctx.config["NW_THRESHOLD"]) * float(ctx.config["NW_WEIGHT_MULTIPLIER"])
    w = ctx.nw.weight
    return Verdict(
        w >= thr,
        "-lowNetworkWeight",
        lambda idx: [
            f"network weight {x:.3f} < NW_THRESHOLD x NW_WEIGHT_MULTIPLIER = {thr:.3f}" for x in w[idx].tolist()
        ],
    )


NETWORK_EXPRESS = Filter(
    "express network check",
    ("-lowNetworkWeight",),
    "processingType=urgent or priority >= 1000: the network weight must be >= NW_THRESHOLD x NW_WEIGHT_MULTIPLIER",
    f_network_express,
    reads=Reads(config=("NW_THRESHOLD", "NW_WEIGHT_MULTIPLIER"), facts=("nw", "express")),
)
