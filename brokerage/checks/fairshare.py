"""Zero-share test of a queue's CRIC fairsharepolicy for a task (criteria -zeroshare)."""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from brokerage.checks.context import QueueContext
from brokerage.framework import Filter, Reads, Verdict
from brokerage.model import views
from brokerage.model.cache import GridCache

# processingType -> processing group, as PanDA groups them for fair share (evgen and simul share one group).
PROCESS_GROUPS: dict[str, str] = {
    "evgen": "evgensimul",
    "simul": "evgensimul",
    "reprocessing": "reprocessing",
    "prod_test": "test",
    "validation": "test",
    "ptest": "test",
    "rc_test": "test",
    "mcore": "mcore",
    "group": "group",
    "deriv": "deriv",
    "pile": "pile",
    "merge": "merge",
    "pmerge": "merge",
}


def process_group(processingtype: str) -> str:
    """Processing group of a processingType ('others' when not listed).

    Usage: ``process_group("simul") == "evgensimul"``
    """
    return PROCESS_GROUPS.get(processingtype or "", "others")


_PRIO_RE = re.compile(r"^priority(<=|>=|<|>|==|=)(-?\d+)$")


def _field_matches(field: str, group: str, gshare: str, priority: int) -> bool:
    if field.startswith("type="):
        return _re_match(field[5:], group)
    if field.startswith("group="):
        return _re_match(field[6:], group)
    if field.startswith("gshare="):
        return _re_match(field[7:], gshare)
    m = _PRIO_RE.match(field)
    if m:
        op, n = m.group(1), int(m.group(2))
        return {
            "<": priority < n,
            ">": priority > n,
            "<=": priority <= n,
            ">=": priority >= n,
            "==": priority == n,
            "=": priority == n,
        }[op]
    return False


def _re_match(pattern: str, value: str) -> bool:
    if pattern in ("any", "*"):
        return True
    try:
        return re.fullmatch(pattern.replace("*", ".*"), value) is not None
    except re.error:
        return pattern == value


@lru_cache(maxsize=4096)
def zero_share(policy: str, processingtype: str, gshare: str, priority: int) -> str | None:
    """Why POLICY gives the task a zero share, or None when it may run there.

    Sub-policies are comma separated, each ``field:field:...:share``. The first sub-policy whose fields
    all match decides (share 0 or 0% = zero share). When the policy shares out processing types and
    none matches the task, the task's type has no share (the seed: 'type=evgensimul:100%' lets only
    evgen or simul jobs in). The test group is never zero-shared.
    Usage: ``zero_share("type=evgensimul:100%", "reprocessing", "Reprocessing", 500)``
    """
    policy = (policy or "").strip()
    group = process_group(processingtype)
    if not policy or group == "test":
        return None
    shares_types = False
    for sub in policy.split(","):
        parts = [p.strip() for p in sub.strip().split(":") if p.strip()]
        if not parts:
            continue
        share, fields = parts[-1], parts[:-1]
        if any(f.startswith("type=") for f in fields) and share.rstrip("%") not in ("0", "0.0"):
            shares_types = True
        if all(_field_matches(f, group, gshare, priority) for f in fields):
            if share.rstrip("%") in ("0", "0.0"):
                return f"zero share for {sub.strip()} (processing group {group})"
            return None
    if shares_types:
        return f"processing group {group} has no share in fairsharepolicy {policy}"
    return None


URGENT = "urgent"  # seed 003: "processingType=urgent also ignores fairshare"


def _policy_index(cache: GridCache) -> tuple[list[str], np.ndarray]:
    """Distinct fairshare policies and each queue's index into them (few distinct policies, many queues)."""

    def build() -> tuple[list[str], np.ndarray]:
        uniq: dict[str, int] = {}
        inv = [uniq.setdefault(str(p or ""), len(uniq)) for p in views.queue_arrays(cache)["fairsharepolicy"]]
        return list(uniq), np.asarray(inv, dtype=np.int64)

    return cache.get("fairshare_index", build)


def f_zeroshare(ctx: QueueContext) -> Verdict | None:
    """Zero share in the queue's fairsharepolicy for the task's processing type (urgent tasks ignore fairshare)."""
    processingtype = str(ctx.task.get("processingtype") or "")
    if processingtype == URGENT:
        return None
    policies, inverse = _policy_index(ctx.cache)
    gshare = str(ctx.task.get("gshare") or "")
    verdicts = [zero_share(p, processingtype, gshare, ctx.priority) if p else None for p in policies]
    passed = np.array([r is None for r in verdicts], dtype=bool)[inverse]
    return Verdict(passed, "-zeroshare", lambda idx: [str(verdicts[k]) for k in inverse[idx].tolist()])


ZEROSHARE = Filter(
    "zero share check",
    ("-zeroshare",),
    "skip queues whose fairsharepolicy gives the task's processing group zero share; "
    "processingType=urgent ignores fairshare",
    f_zeroshare,
    reads=Reads(task=("processingtype", "gshare"), facts=("priority",)),
)
