"""The production job filters over queues in the seed's order: production brokerage's step 2 and the nucleus -job check."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from brokerage.checks import diskio, links, panda_activity, panda_io, panda_rules, placement
from brokerage.checks.connectivity import WNCONNECTIVITY
from brokerage.checks.context import ProdContext, queue_fields
from brokerage.checks.cores import CPUCORE, JOB_CORES
from brokerage.checks.eventservice import EVENTSERVICE
from brokerage.checks.fairshare import ZEROSHARE
from brokerage.checks.memory import MEMORY
from brokerage.checks.pilot import INACTIVE_QUEUES, NOPILOT, TRANSFERRING
from brokerage.checks.scratch import direct_access, scratch_verdict
from brokerage.checks.software import SOFTWARE
from brokerage.checks.status import status_verdict
from brokerage.checks.storage import BLACKLIST, REMOTEIO, STORAGE
from brokerage.checks.walltime import SCOUT_WALLTIME, WALLTIME
from brokerage.framework import Filter, Reads, Verdict
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.network import network_weights
from brokerage.model.profiles import rule


def master_only(task: dict[str, Any], config: Config) -> bool:
    """Whether the job broker looks at the primary input dataset only: taskBrokerOnMaster, which PanDA's job broker
    does not read (switch ``job_broker_all_datasets``: every input dataset counts).

    Usage: ``master_only(views.task_row(cache, 1), Config())``
    """
    return bool(task.get("taskbrokeronmaster")) and not rule(config, "job_broker_all_datasets")


def make_context(task: dict[str, Any], config: Config, cache: GridCache, hint_mode: bool = False) -> ProdContext:
    """Build the per-task arrays the production filters share (HINT_MODE: the task has no nucleus yet).

    Usage: ``ctx = make_context(views.task_row(cache, 1), Config(), cache)``
    """
    nucleus = None if hint_mode else (task.get("nucleus") or None)
    priority = int(task.get("currentpriority") or 0)
    floor = int(config["EXPRESS_PRIORITY"])  # JEDI's InputChunk.isExpress is strict (switch express_strict_priority)
    express = task.get("processingtype") == "urgent" or (
        priority > floor if rule(config, "express_strict_priority") else priority >= floor
    )
    at_nucleus = views.nucleus_queues(cache, nucleus)
    avail = views.available_at_queues(cache, int(task["jeditaskid"]), master_only(task, config))
    ctx = ProdContext(
        **queue_fields(cache, task, config, task.get("gshare"), avail),
        at_nucleus=at_nucleus,
        wan_needed=~at_nucleus if nucleus else None,  # only satellites move files over WAN
        priority=priority,
        scout=bool(task.get("is_scout")),
        merge=bool(task.get("is_merge")),
        any_core_needs_multi=priority >= int(config["HIGH_PRIO_MULTICORE"]) or bool(task.get("is_scout")),
        es_high=priority >= int(config["ES_HIGH_PRIORITY"]) or bool(task.get("is_scout")),
        nucleus=nucleus,
        # JEDI's hint mode scans the nuclei's queues: the task's own site does not make it pre-assigned there
        preassigned=bool(task.get("site")) and not (hint_mode and rule(config, "nucleus_as_jedi")),
        express=express,
        hint_mode=hint_mode,
    )
    ctx.job_cores = JOB_CORES(ctx)
    if nucleus:
        ctx.nw = network_weights(cache, ctx.qa["atlas_site"], nucleus, config, express=express)
    return ctx


def f_status(ctx: ProdContext) -> Verdict | None:
    """The queue status must be online unless the queues are pre-assigned."""
    return None if ctx.preassigned else status_verdict(ctx.qa, standby=rule(ctx.config, "standby_is_online"))


def f_inactive(ctx: ProdContext) -> Verdict | None:
    """For priority >= 800, scout, merge jobs: skip queues where no job started for 2 h although jobs were activated."""
    if not (placement.high_priority(ctx) or ctx.merge):
        return None
    return INACTIVE_QUEUES(ctx)


def expected_scratch_mb(ctx: ProdContext) -> np.ndarray:
    """inputDiskCount + max(0.5 GB, outDiskCount x nEvents or x inputDiskCount) + workDiskCount, in MB.

    Usage: ``expected_scratch_mb(ctx)[i]``
    """
    t = ctx.task
    input_mb = float(t.get("chunk_input_mb") or 0)
    out = float(t.get("outdiskcount") or 0)
    if str(t.get("outdiskunit") or "").endswith("PerEvent"):
        out_mb = out * float(t.get("chunk_nevents") or 0) / 1024.0  # kB per event
    else:
        out_mb = out * input_mb
    out_mb = max(float(ctx.config["MIN_OUTPUT_DISK_GB"]) * 1024.0, out_mb)
    return np.where(direct_access(ctx.cache), 0.0, input_mb) + out_mb + float(t.get("workdiskcount") or 0)


def f_scratch(ctx: ProdContext) -> Verdict:
    """maxwdir divided by the queue's coreCount must exceed the job's expected disk usage."""
    return scratch_verdict(ctx, expected_scratch_mb(ctx))


FILTERS: tuple[Filter, ...] = (
    Filter("status check", ("-status",), "the queue status must be online unless the queues are pre-assigned",
           f_status, reads=Reads(config=("RULES",), facts=("preassigned",))),
    links.LINK_BLOCKED,
    links.LINK_QUEUED,
    links.LINKS_FULL,
    placement.NUCLEUS_ONLY,
    Filter("inactive queue check", ("-inactive",),
           "for priority >= 800, scout or merge jobs, skip queues where no job started for INACTIVE_HOURS "
           "although jobs were activated", f_inactive, temporary=True,
           uses=INACTIVE_QUEUES.reads + placement.HIGH_PRIORITY + Reads(facts=("merge",))),
    ZEROSHARE,
    diskio.IO,
    replace(diskio.DISKIO, temporary=True),
    CPUCORE,
    SOFTWARE,
    MEMORY,
    REMOTEIO,
    Filter("scratch disk check", ("-disk",),
           "maxwdir divided by coreCount must exceed inputDiskCount + max(0.5 GB, outDiskCount x ...) + workDiskCount",
           f_scratch, uses=Reads(config=("MIN_OUTPUT_DISK_GB",))),
    replace(STORAGE, temporary=True),
    BLACKLIST,
    SCOUT_WALLTIME,
    WALLTIME,
    WNCONNECTIVITY,
    EVENTSERVICE,
    TRANSFERRING,
    placement.T1WEIGHT,
    placement.FULL_CHAIN,
    replace(NOPILOT, temporary=True),
    links.NETWORK_EXPRESS,
)  # fmt: skip
"""Step 2 of the seed, in order (the full-chain rules before the pilot check)."""
PANDA_VERSIONS = {
    SOFTWARE.name: panda_rules.software,
    ZEROSHARE.name: panda_rules.zeroshare,
    BLACKLIST.name: lambda f: panda_io.space_first(panda_io.blacklist(panda_io.blacklist_temporary(f))),
    REMOTEIO.name: panda_io.remoteio,
    links.LINK_BLOCKED.name: panda_rules.links,
    links.LINK_QUEUED.name: panda_rules.links_temporary,
    links.LINKS_FULL.name: panda_rules.dropped,
    MEMORY.name: panda_rules.memory,
    SCOUT_WALLTIME.name: panda_rules.dropped_by("walltime_as_jedi"),
    WALLTIME.name: panda_rules.walltime,
    NOPILOT.name: panda_rules.nopilot,
    "scratch disk check": panda_rules.scratch,
    WNCONNECTIVITY.name: panda_rules.connectivity,
    "inactive queue check": panda_activity.inactive,
    TRANSFERRING.name: panda_activity.transferring,
    diskio.DISKIO.name: panda_activity.diskio,
    EVENTSERVICE.name: panda_activity.eventservice,
}
_PANDA_ORDER = [f for f in FILTERS if f not in (diskio.IO, links.NETWORK_EXPRESS)]
_PANDA_ORDER.insert(_PANDA_ORDER.index(ZEROSHARE) + 1, panda_rules.JUMBO)
PANDA_IO = panda_io.io(diskio.IO)
PANDA_FILTERS: tuple[Filter, ...] = (
    *(PANDA_VERSIONS.get(f.name, lambda x: x)(f) for f in _PANDA_ORDER),
    PANDA_IO,
)
"""PanDA 1.0.4's order (switch ``io_check_late``): the IO check runs after the pilot check; the express network check
moves to the weight stage (``final_stage_as_jedi``); checks with PanDA's rules where switches say so
(``checks/panda_rules.py``)."""
PANDA_HINT_FILTERS: tuple[Filter, ...] = tuple(f for f in PANDA_FILTERS if f is not PANDA_IO)
"""What PanDA's job broker runs in hint mode for the task broker: everything up to the pilot check (no IO check)."""
