"""The software filter: release, cache, nightly, CPU/GPU and fat-container matching of a task over the queues
(the rules in software_match, software_hardware and software_container; the grouping in software_plan)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from brokerage.checks.software_container import ALL_QUEUE, container_sources
from brokerage.checks.software_description import SoftwareIndex, software_index
from brokerage.checks.software_plan import (
    VERDICT_MEMO_CELLS,
    auto_by_class,
    auto_by_description,
    cached_plan,
    fixed_outcome,
)
from brokerage.checks.software_request import task_software
from brokerage.framework import Filter, Verdict


@dataclass
class SoftwareVerdict(Verdict):
    """A Verdict plus, per queue, the cmtconfig a regex sw_platform resolved to ('' when none)."""

    resolved: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=object))


def software_verdict(
    task: Mapping[str, Any],
    queue_names: np.ndarray,
    releases: Sequence[list[str]],
    software: Mapping[str, Mapping[str, Any]],
    jedi: bool | str = False,
) -> SoftwareVerdict:
    """Release/cache/architecture/container verdict of a task over queues (criteria -cache, -regexpcmtconfig);
    JEDI: PanDA 1.0.4's rules, checked description by description (True or JEDI_PRODUCTION: the production broker's,
    switch ``sw_check_as_jedi``; JEDI_ANALYSIS: the analysis broker's, switch ``anal_sw_check_as_jedi``).

    SOFTWARE maps panda_queue (and 'ALL') to its queue_software row. With a SoftwareIndex (see
    build_software_index) the grouping of QUEUE_NAMES / RELEASES is remembered (they are treated as
    immutable), descriptions the task cannot tell apart are checked once, and the outcome of a task
    request is reused by later tasks asking the same.
    Raises ArchitectureError when the task's architecture is malformed.
    Usage: ``v = software_verdict(task, qa.name, qa["releases"], software_index(cache))``
    """
    request = task_software(task, jedi)
    all_sources = container_sources(request, software.get(ALL_QUEUE))
    transhome = request.release.transhome if request.release else ""
    # a str key: its hash is cached, so memo lookups stay cheap
    memo_key = "\x1f".join(
        (request.architecture.text, transhome, request.container_name, str(request.only_tags_for_fc), request.jedi,
         *all_sources)
    )  # fmt: skip
    plan = cached_plan(queue_names, releases, software)
    indexed = isinstance(software, SoftwareIndex)
    hit = plan.verdicts.get(memo_key) if indexed else None
    if hit is None:
        outcomes = [fixed_outcome(*plan.groups[g], request) for g in plan.fixed]
        by = auto_by_class if indexed and not jedi else auto_by_description  # classes know the seed's reads only
        auto_outcomes, auto_index = by(plan, request, all_sources, memo_key)
        per_group = np.empty(len(plan.groups), dtype=np.intp)
        per_group[plan.fixed] = np.arange(len(outcomes), dtype=np.intp)
        per_group[plan.auto] = auto_index + len(outcomes)
        outcomes.extend(auto_outcomes)
        which = per_group[plan.group]
        passed = np.array([o.passed for o in outcomes], dtype=bool)[which]
        criteria = np.array([o.criteria for o in outcomes], dtype=object)[which]
        resolved = np.array([o.resolved for o in outcomes], dtype=object)[which]
        for a in (which, passed, criteria, resolved):
            a.flags.writeable = False  # shared by every task asking the same

        def reasons(idx: np.ndarray) -> list[str]:
            return [outcomes[k].reason for k in which[idx].tolist()]

        hit = (passed, criteria, reasons, resolved)
        if indexed:
            if len(plan.verdicts) * max(len(queue_names), 1) >= VERDICT_MEMO_CELLS:
                plan.verdicts.clear()
            plan.verdicts[memo_key] = hit
    passed, criteria, reasons, resolved = hit
    return SoftwareVerdict(passed, criteria, reasons, resolved=resolved)


def resolved_cmtconfig(
    task: Mapping[str, Any],
    queue_names: np.ndarray,
    releases: Sequence[list[str]],
    software: Mapping[str, Mapping[str, Any]],
) -> np.ndarray:
    """Per queue, the cmtconfig a regex sw_platform resolved to ('' when not a regex or the queue fails).

    Usage: ``resolved_cmtconfig(task, qa.name, qa["releases"], software_index(snap))[i]``
    """
    return software_verdict(task, queue_names, releases, software).resolved


def f_software(ctx: Any) -> Verdict:
    """Availability of ATLAS release/cache: ANY skips the check, AUTO uses the queue's published software.

    The same queue arrays are passed on every call so that the check's per-description memo is reused.
    """
    qa = ctx.qa
    return software_verdict(ctx.task, qa.name, qa["releases"], software_index(ctx.cache))


SOFTWARE = Filter(
    "release/cache check",
    ("-cache", "-regexpcmtconfig"),
    "the queue must offer the task's release/cache, architecture and container (releases ANY skips the check, "
    "AUTO reads the queue's published software)",
    f_software,
)
