"""IP connectivity: the queue's wnconnectivity must accept the task's ipConnectivity (-network)."""

from __future__ import annotations

from typing import Any

import numpy as np

from brokerage.checks.context import QueueContext
from brokerage.framework import Filter, Reads, Verdict

ACCEPTS = {"full": {"full", "http", "none"}, "http": {"http", "none"}, "none": {"none"}}


def split_connectivity(text: str) -> tuple[str, str]:
    """'network_connectivity#ip_stack' -> (network_connectivity, ip_stack).

    Usage: ``split_connectivity("full#IPv6") == ("full", "IPv6")``
    """
    conn, _, stack = (text or "").partition("#")
    return conn.strip(), stack.strip()


def _distinct(values: np.ndarray) -> tuple[list[Any], np.ndarray]:
    """Distinct values (first-seen order) and each row's index into them."""
    uniq: dict[Any, int] = {}
    inv = [uniq.setdefault(v, len(uniq)) for v in values.tolist()]
    return list(uniq), np.asarray(inv, dtype=np.intp)


def f_wnconnectivity(ctx: QueueContext) -> Verdict | None:
    """wnconnectivity of the queue must accept the task's ipConnectivity (network part and ip stack)."""
    want = ctx.task.get("ipconnectivity")
    if not want:
        return None
    t_conn, t_stack = split_connectivity(want)
    qconn = ctx.qa["wnconnectivity"]
    distinct, inverse = ctx.cache.get("wnconnectivity", lambda: _distinct(qconn))
    ok = np.array(
        [(not t_conn or t_conn in ACCEPTS.get(c or "full", set())) and (s == t_stack)
         for c, s in map(split_connectivity, distinct)],
        dtype=bool,
    )[inverse]  # fmt: skip
    return Verdict(
        ok, "-network", lambda idx: [f"wnconnectivity={c!r} cannot take {want!r}" for c in qconn[idx].tolist()]
    )


WNCONNECTIVITY = Filter(
    "IP connectivity check",
    ("-network",),
    "the queue's wnconnectivity (network#ip stack) must accept the task's ipConnectivity",
    f_wnconnectivity,
    reads=Reads(task=("ipconnectivity",)),
)
