"""Jobs tied to the nucleus: high priority and scouts (-nucleus_only), t1Weight=-1 (-t1weight), full chains."""

from __future__ import annotations

import numpy as np

from brokerage.checks.context import ProdContext
from brokerage.framework import Filter, Reads, Verdict
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.profiles import PROFILE_KEY, rule

HIGH_PRIORITY = Reads(config=("HIGH_PRIO_NUCLEUS_ONLY",), facts=("priority", "scout"))  # what high_priority reads


def high_priority(ctx: ProdContext) -> bool:
    """Priority >= HIGH_PRIO_NUCLEUS_ONLY or scout jobs (the jobs kept at the nucleus and off inactive queues).

    Usage: ``high_priority(ctx)``
    """
    return ctx.priority >= int(ctx.config["HIGH_PRIO_NUCLEUS_ONLY"]) or ctx.scout


def _nucleus_queues_only(ctx: ProdContext, code: str, why: str) -> Verdict:
    return Verdict(ctx.at_nucleus, code, f"{why}: only queues of nucleus={ctx.nucleus}")


def f_nucleus_only(ctx: ProdContext) -> Verdict | None:
    """If priority >= 800 or scout jobs, skip queues unless associated with the nucleus."""
    if ctx.nw is None or not high_priority(ctx) or rule(ctx.config, "no_nucleus_only"):
        return None
    why = "scout jobs" if ctx.scout else f"priority {ctx.priority} >= {ctx.config['HIGH_PRIO_NUCLEUS_ONLY']}"
    return _nucleus_queues_only(ctx, "-nucleus_only", why)


NUCLEUS_ONLY = Filter(
    "high priority nucleus check",
    ("-nucleus_only",),
    "if priority >= 800 or scout jobs, skip queues unless associated with the nucleus",
    f_nucleus_only,
    uses=HIGH_PRIORITY + Reads(config=(PROFILE_KEY,), facts=("nucleus", "at_nucleus")),
)


def f_t1weight(ctx: ProdContext) -> Verdict | None:
    """Use only the queues associated with the nucleus if the task sets t1Weight=-1 and normal jobs are generated."""
    t1 = ctx.task.get("t1weight")
    if ctx.nucleus is None or t1 is None or int(t1) >= 0 or ctx.merge:
        return None
    return _nucleus_queues_only(ctx, "-t1weight", "negative t1Weight")


T1WEIGHT = Filter(
    "T1 weight check",
    ("-t1weight",),
    "use only the queues associated with the nucleus if the task sets t1Weight=-1 and normal jobs are generated",
    f_t1weight,
)


def bare_modes(cache: GridCache) -> tuple[np.ndarray, dict[str, str]]:
    """bareNucleus mode of every queue's site, and of every site ('' for none); built once per snapshot.

    Usage: ``per_queue, per_site = bare_modes(cache)``
    """

    def build() -> tuple[np.ndarray, dict[str, str]]:
        s = cache.snap.sites
        modes = {str(n): str(b or "") for n, b in zip(s["site_name"], s["bare_nucleus"], strict=True)}
        per_queue = np.array([modes.get(x, "") for x in views.queue_arrays(cache)["atlas_site"]], dtype=object)
        return per_queue, modes

    return cache.get("bare_modes", build)


def f_full_chain(ctx: ProdContext) -> Verdict | None:
    """Full-chain: a fullChain task on a bare nucleus uses only its queues; others avoid bareNucleus=only sites."""
    if ctx.nucleus is None:
        return None
    _, modes = bare_modes(ctx.cache)
    nucleus_mode = modes.get(ctx.nucleus or "", "")
    if ctx.task.get("fullchain") and nucleus_mode in ("only", "allow"):
        return Verdict(
            ctx.at_nucleus,
            "-full_chain",
            f"full-chain task on bare nucleus={ctx.nucleus} (bareNucleus={nucleus_mode}): only the nucleus' queues",
        )
    return bare_only_verdict(ctx.cache)


def bare_only_verdict(cache: GridCache) -> Verdict | None:
    """-not_full_chain for every task that is not a full-chain task on a bare nucleus; one per snapshot.

    Usage: ``bare_only_verdict(cache)`` is None when no site is bareNucleus=only
    """

    def build() -> Verdict | None:
        site_mode, _ = bare_modes(cache)
        only = site_mode == "only"
        if not only.any():
            return None
        sites = views.queue_arrays(cache)["atlas_site"]
        return Verdict(
            ~only,
            "-not_full_chain",
            lambda idx: [
                f"site={s} is a bareNucleus=only nucleus reserved for full-chain tasks" for s in sites[idx].tolist()
            ],
        )

    return cache.get("bare_only_verdict", build)


FULL_CHAIN = Filter(
    "full-chain check",
    ("-full_chain", "-not_full_chain"),
    "a fullChain task on a bare nucleus uses only the nucleus' queues; other tasks avoid bareNucleus=only sites",
    f_full_chain,
    reads=Reads(task=("fullchain",), facts=("nucleus", "at_nucleus")),
)
