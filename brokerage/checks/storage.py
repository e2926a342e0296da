"""Storage: free space at the output endpoint (-disk), endpoint blacklists (-*_blacklist), direct access (-remoteio)."""

from __future__ import annotations

import numpy as np

from brokerage.checks.context import QueueContext
from brokerage.checks.scratch import direct_access
from brokerage.framework import Filter, Reads, Verdict
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.explain import fmt, fmt_many

DOWN = ("OFF", "TEST")  # detailed endpoint statuses that count as blacklisted


ANALYSIS_SOURCES = views.ANALYSIS_SOURCES  # prodSourceLabels whose jobs use a queue's 'analysis' scope, if any


def output_endpoint(ctx: QueueContext) -> np.ndarray:
    """Per queue the task's output endpoint (-1: none): the 'analysis' scope's default write for analysis labels
    where the queue has one, else the 'default' scope's (PanDA's select_scope).

    Usage: ``output_endpoint(ctx)[ctx.qa.index["AGLT2"]]``
    """
    if ctx.task.get("prodsourcelabel") in ANALYSIS_SOURCES:
        return ctx.qa.out_endpoint_analysis
    return ctx.qa.out_endpoint


def _output_free(ctx: QueueContext) -> np.ndarray:
    out = output_endpoint(ctx)
    safe = np.maximum(out, 0)
    free = (ctx.ep["space_free"].astype(float, copy=False) + ctx.ep["space_expired"].astype(float, copy=False))[safe]
    return np.where(out >= 0, free, np.nan)


def f_storage(ctx: QueueContext) -> Verdict:
    """DISK size check: free space in the local storage has to be over STORAGE_MIN_FREE_SIZE (200 GB)."""
    free = _output_free(ctx)
    floor = float(ctx.config["STORAGE_MIN_FREE_SIZE"])
    out, ep_names = output_endpoint(ctx), ctx.ep.name
    return Verdict(
        free > floor,
        "-disk",
        lambda idx: [
            "no output storage endpoint" if o < 0 else f"disk shortage at {ep_names[o]}: {f} GB free <= {fmt(floor)} GB"
            for o, f in zip(out[idx].tolist(), fmt_many(free[idx]), strict=True)
        ],
    )


STORAGE = Filter(
    "storage space check",
    ("-disk",),
    "free space in the local storage (free + expired at the output endpoint) must be over STORAGE_MIN_FREE_SIZE",
    f_storage,
    reads=Reads(config=("STORAGE_MIN_FREE_SIZE",), task=("prodsourcelabel",)),
)


def _endpoint_ok(cache: GridCache, analysis: bool = False) -> dict[str, np.ndarray]:
    """Per queue: can its endpoints read/write over LAN/WAN (detailed status not OFF/TEST)? ANALYSIS: the endpoints of
    analysis jobs (a queue's 'analysis' scope where it has one, PanDA's select_scope). Built once per scope."""

    def build() -> dict[str, np.ndarray]:
        qa, ep = views.queue_arrays(cache), views.endpoint_arrays(cache)
        rel_queue, rel_endpoint = views.input_relations(qa, ANALYSIS_SOURCES[0] if analysis else None)

        def any_on(status: np.ndarray) -> np.ndarray:
            on = ~np.isin(status[rel_endpoint], DOWN)
            return np.bincount(rel_queue, weights=on.astype(float, copy=False), minlength=qa.n) > 0

        has_input = np.bincount(rel_queue, minlength=qa.n) > 0
        out = qa.out_endpoint_analysis if analysis else qa.out_endpoint
        safe = np.maximum(out, 0)
        return {
            "read_lan": any_on(ep["read_lan"]) | ~has_input,
            "write_lan": (out < 0) | ~np.isin(ep["write_lan"][safe], DOWN),
            "write_wan": any_on(ep["write_wan"]) | ~has_input,
            "read_wan": (out < 0) | ~np.isin(ep["read_wan"][safe], DOWN),
        }

    return cache.get(("endpoint_ok", analysis), build)


_BLACKLIST_TEXTS = {
    "-read_lan_blacklist": "input endpoints cannot read over LAN, read_lan is not ON",
    "-write_lan_blacklist": "output endpoints cannot write over LAN, write_lan is not ON",
    "-write_wan_blacklist": "input endpoints cannot receive files over WAN, write_wan is not ON",
    "-read_wan_blacklist": "output endpoints cannot send out files over WAN, read_wan is not ON",
}  # in the order the checks apply: a queue failing several gets the first one's code


def _blacklist_codes(cache: GridCache, analysis: bool = False) -> dict[bool, tuple[np.ndarray, np.ndarray]]:
    """(passed, code) per queue when every queue needs WAN transfers too (True) or none does (False); ANALYSIS: at
    the endpoints of analysis jobs."""

    def build() -> dict[bool, tuple[np.ndarray, np.ndarray]]:
        ok = _endpoint_ok(cache, analysis)
        out = {}
        for wan in (False, True):
            good = {
                "-read_lan_blacklist": ok["read_lan"],
                "-write_lan_blacklist": ok["write_lan"],
                "-write_wan_blacklist": ok["write_wan"] | (not wan),
                "-read_wan_blacklist": ok["read_wan"] | (not wan),
            }
            codes = np.full(len(ok["read_lan"]), "", dtype=object)
            for code in reversed(_BLACKLIST_TEXTS):  # reverse order so the first failing check wins
                codes = np.where(good[code], codes, code)
            out[wan] = (codes == "", codes)
        return out

    return cache.get(("blacklist_codes", analysis), build)


def f_blacklist(ctx: QueueContext) -> Verdict:
    """Skip queues whose storage endpoints are blacklisted (detailed status OFF or TEST) for the needed activity.

    LAN activities always count; WAN activities only at the queues in ``ctx.wan_needed`` (satellites of the
    task's nucleus; for analysis, queues without the whole input).
    """
    variants = _blacklist_codes(ctx.cache, ctx.task.get("prodsourcelabel") in ANALYSIS_SOURCES)
    if ctx.wan_needed is not None:
        (pass_wan, codes_wan), (pass_lan, codes_lan) = variants[True], variants[False]
        need = ctx.wan_needed
        passed, codes = np.where(need, pass_wan, pass_lan), np.where(need, codes_wan, codes_lan)
    else:
        passed, codes = variants[False]
    return Verdict(passed, codes, lambda idx: [_BLACKLIST_TEXTS[c] for c in codes[idx].tolist()])


BLACKLIST = Filter(
    "endpoint blacklist check",
    tuple(_BLACKLIST_TEXTS),
    "skip queues whose storage endpoints are blacklisted (OFF or TEST) for reading/writing over LAN, "
    "and over WAN where files must move",
    f_blacklist,
)


def f_remoteio(ctx: QueueContext) -> Verdict | None:
    """Skip queues without direct access when the task reads input only by direct access."""
    if ctx.task.get("allowinputlan") != "only":
        return None
    return Verdict(
        direct_access(ctx.cache), "-remoteio", "the task uses only direct access but the queue does not support it"
    )


REMOTEIO = Filter(
    "direct access check",
    ("-remoteio",),
    "tasks reading input only by direct access skip queues that do not support it",
    f_remoteio,
)
