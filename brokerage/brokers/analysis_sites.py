"""PanDA 1.0.4's analysis site lists, pre-assigned site and GPU queue checks (AtlasAnalJobBroker, switches
``anal_site_lists_as_jedi`` and ``anal_gpu_architecture_check``), used by ``brokers/analysis_panda.py``."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from brokerage.brokers.analysis_context import AnalContext, match_queues, split_list
from brokerage.checks.generic_rules import catchall_has
from brokerage.checks.software_description import software_index
from brokerage.checks.software_hardware import EXCLUSIVE
from brokerage.checks.software_match import RELEASES_AUTO
from brokerage.framework import Verdict
from brokerage.model import views
from brokerage.model.profiles import rule

SW_PLATFORM = re.compile(r"^([^@#&]*)")


def preassigned(ctx: AnalContext) -> np.ndarray | None:
    """The queues a task's site pre-assigns (JEDI's sitePreAssigned), None when it pre-assigns none: under
    ``anal_site_lists_as_jedi`` the queue of exactly that name (SiteMapper.checkSite), else any queue or ATLAS site
    matching it. Usage: ``mask = preassigned(ctx)``"""
    site = str(ctx.task.get("site") or "").strip()
    if not site:
        return None
    if rule(ctx.config, "anal_site_lists_as_jedi"):
        mask = np.asarray(ctx.qa.name == site, dtype=bool)
    else:
        mask = match_queues(ctx.cache, split_list(site))
    return mask if mask.any() else None


def _site_preassigned(ctx: AnalContext) -> bool:
    """A task whose site names a known queue (JEDI's sitePreAssigned)."""
    return preassigned(ctx) is not None


def _gpu_queue_ok(rel: Any, desc: Any) -> bool:
    """JsonSoftwareCheck with the platform only (no CPU/GPU spec, cmt_config_only): an AUTO queue with a software
    description and no 'excl' in any cpu or gpu attribute list passes; any other queue lands in no_auto_sites."""
    if list(rel if rel is not None else []) != [RELEASES_AUTO] or desc is None:
        return False
    entries = (*desc.cpu, *desc.gpu)
    return not any(EXCLUSIVE in values for entry in entries for values in entry.values())


def f_gpu_architecture(ctx: AnalContext) -> Verdict | None:
    """AtlasAnalJobBroker.py:846-873: a GPU queue (catchall 'gpu') needs the task's sw_platform and an AUTO software
    description without an exclusive ('excl') CPU or GPU attribute; the check passes no CPU/GPU spec, so a task's
    own '&nvidia' does not open an exclusive queue."""
    gpu = np.array([catchall_has(c, "gpu") for c in ctx.qa["catchall"]], dtype=bool)
    if not gpu.any():
        return None
    platform = SW_PLATFORM.match(str(ctx.task.get("architecture") or ""))[1]  # JediTaskSpec.get_sw_platform
    index = software_index(ctx.cache)
    ok = np.ones(ctx.n, dtype=bool)
    for i in np.flatnonzero(gpu):
        name = str(ctx.qa.name[i])
        ok[i] = bool(platform) and _gpu_queue_ok(ctx.qa["releases"][i], index.get(name))
    why = "architecture is required for GPU queues" if not platform else f"architecture={platform} is unavailable"
    return Verdict(ok, "-architecture", why)


def jedi_matched(cache: Any, patterns: list[str]) -> np.ndarray:
    """AtlasBrokerUtils.isMatched per queue: a pattern with '*' is a regular expression ('*' read as '.*') searched
    anywhere in the queue name; any other pattern must equal the name. ATLAS site names are not matched.

    Usage: ``jedi_matched(cache, ["ANALY_CERN*"])``
    """
    names = [str(n) for n in views.queue_arrays(cache).name]
    regexes = [re.compile(p.replace("*", ".*")) for p in patterns if "*" in p]
    exact = {p for p in patterns if p and "*" not in p}
    return np.array([n in exact or any(r.search(n) for r in regexes) for n in names], dtype=bool)


def _site_as_include_list(ctx: AnalContext) -> np.ndarray | None:
    """AtlasAnalJobBroker.py:119-135: a task site naming no queue replaces the include list by the queues reading an
    input endpoint of that name; none: no include list at all (includedSite is dropped too)."""
    qa = views.queue_arrays(ctx.cache)
    rq, re_ = views.input_relations(qa, "user")
    reading = np.zeros(ctx.n, dtype=bool)
    reading[rq[np.asarray(ctx.ep.name)[re_] == str(ctx.task.get("site")).strip()]] = True
    return reading if reading.any() else None


def f_include(ctx: AnalContext) -> Verdict | None:
    """AtlasAnalJobBroker.py:1400-1440: excludedSite (-excluded), includedSite (-notincluded), after the pilot check;
    under ``anal_site_lists_as_jedi`` a task site naming no queue replaces the include list (_site_as_include_list)."""
    exc, inc = split_list(ctx.task.get("excludedsite")), split_list(ctx.task.get("includedsite"))
    jedi = rule(ctx.config, "anal_site_lists_as_jedi")
    match = jedi_matched if jedi else match_queues
    included = match(ctx.cache, inc) if inc else None
    if jedi and str(ctx.task.get("site") or "").strip() and preassigned(ctx) is None:
        included = _site_as_include_list(ctx)
    if not exc and included is None:
        return None
    excluded = match(ctx.cache, exc) if exc else np.zeros(ctx.n, dtype=bool)
    included = np.ones(ctx.n, dtype=bool) if included is None else included
    codes = np.where(excluded, "-excluded", "-notincluded").astype(object)
    return Verdict(~excluded & included, codes, "excluded or not included")


def f_preassigned(ctx: AnalContext) -> Verdict | None:
    """AtlasAnalJobBroker.py:1460-1485: a pre-assigned task keeps only its site (-nonpreassigned)."""
    keep = preassigned(ctx)
    if keep is None:
        return None
    return Verdict(keep, "-nonpreassigned", "non pre-assigned site")
