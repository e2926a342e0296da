"""PanDA 1.0.4's versions of a few production checks, used when the rule profile switches them on.

Each function wraps a seed check and changes only what its switch names (``brokerage/model/profiles.py``), so the
seed checks stay as they are and the ``seed`` profile never reaches this code.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from brokerage.checks.software import ALL_QUEUE, RELEASES_ANY, RELEASES_AUTO, describe, software_index
from brokerage.framework import Filter, Verdict
from brokerage.model.architecture import parse_architecture
from brokerage.model.profiles import rule

JEDI_NO_AUTO = "without AUTO: only releases=['ANY'] queues pass and only for tasks without a CPU/GPU spec"
JEDI_NO_HW = "with AUTO: the task has a CPU spec (from its architecture) and the queue publishes no cpu architecture"


def _hw_spec(task: dict[str, Any]) -> bool:
    """JEDI's JediTaskSpec.get_host_cpu_spec / get_host_gpu_spec: any architecture with an arch part gives a CPU spec."""
    text = str(task.get("architecture") or "")
    if not text:
        return False
    arch = parse_architecture(text)
    return arch.gpu is not None or arch.cpu is not None


def software(base: Filter) -> Filter:
    """The release/cache check with JEDI's rules under the switches: no transHome, no check (``sw_check_needs_
    transhome``); explicit release lists fail and ANY fails tasks with a HW spec (``no_auto_queues``); a HW spec
    needs the queue's cpu architecture entry (``hw_spec_needs_cpu_entry``)."""

    def fn(ctx: Any) -> Verdict | None:
        cfg = ctx.config
        if rule(cfg, "sw_check_needs_transhome") and not ctx.task.get("transhome"):
            return None
        v = base.fn(ctx)
        if v is None:
            return v
        extra = np.ones(ctx.n, dtype=bool)
        why = np.full(ctx.n, "", dtype=object)
        hw = _hw_spec(ctx.task)
        releases = ctx.qa["releases"]
        if rule(cfg, "no_auto_queues"):
            for i, rel in enumerate(releases):
                rel = list(rel or [])
                if RELEASES_AUTO not in rel and not (rel == [RELEASES_ANY] and not hw):
                    extra[i], why[i] = False, JEDI_NO_AUTO
        if hw and rule(cfg, "hw_spec_needs_cpu_entry"):
            index = software_index(ctx.cache)
            for i, (name, rel) in enumerate(zip(ctx.qa.name, releases, strict=True)):
                row = index.get(name) if name != ALL_QUEUE else None
                if extra[i] and RELEASES_AUTO in list(rel or []) and row is not None and not describe(row).cpu:
                    extra[i], why[i] = False, JEDI_NO_HW
        if extra.all():
            return v
        passed = v.passed & extra
        base_reasons = v.reasons

        def reasons(idx: np.ndarray) -> list[str]:
            own = base_reasons if isinstance(base_reasons, str) else None
            first = [own] * len(idx) if own is not None else base_reasons(idx)
            return [w or f for w, f in zip(why[idx].tolist(), first, strict=True)]

        crit = v.criteria if isinstance(v.criteria, str) else np.where(extra, v.criteria, "-cache")
        return Verdict(passed, crit, reasons, v.temporary)

    return replace(base, fn=fn, reads=None)
