"""The tasks of the demo grid (``tasks``) and, through the modules they call, their input data and recent job
outcomes: kind and status, nucleus, priority, owner and analysis options, names, times, and the brokerage
flags that make each rule fire somewhere."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from brokerage.synth.chains import full_chains, preassigned_queues
from brokerage.synth.common import TASK_ID_BASE, times
from brokerage.synth.datasets import PHYSICS, make_datasets
from brokerage.synth.jobs import Jobs
from brokerage.synth.queues import Queues
from brokerage.synth.recent_jobs import task_job_counts
from brokerage.synth.shares import ANAL_P, ANAL_SHARES, SHARES
from brokerage.synth.sites import Sites
from brokerage.synth.task_needs import split_rules, task_chunks, task_cores, task_io, task_memory, task_work
from brokerage.synth.task_software import task_software
from brokerage.synth.users import quota_users
from brokerage.synth.work import job_hours, work_scale

PROD_TYPES = ("evgen", "simul", "pile", "reprocessing", "deriv", "merge", "urgent")
_PROD_TYPE_P = (0.14, 0.32, 0.14, 0.05, 0.2, 0.12, 0.03)
_TYPE_SHARE = {
    "evgen": "MC Event Generation",
    "simul": "MC Simulation",
    "pile": "MC Reconstruction",
    "reprocessing": "Reprocessing",
    "deriv": "Data Derivations",
    "merge": "MC Merging",
    "urgent": "Express",
}
_INCLUDE_PATTERNS = ("ANALY_CERN*", "ANALY_BNL*,ANALY_MWT2*", "*_GPU", "ANALY_*_VP", "UKI-*")
_EXCLUDE_PATTERNS = ("ANALY_*_VP", "ANALY_*_TEST", "UKI-SCOTGRID-*", "ANALY_TOKYO*", "RO-*")
_STEP = {
    "evgen": "evgen",
    "simul": "simul",
    "pile": "recon",
    "reprocessing": "recon",
    "deriv": "deriv",
    "merge": "merge",
    "urgent": "simul",
}


@dataclass
class _Kinds:
    """Identity of every task: id, production or user, processing type, share and status."""

    tid: np.ndarray
    user: np.ndarray
    prod: np.ndarray
    ptype: np.ndarray
    anal_share: np.ndarray
    gshare: np.ndarray
    status: np.ndarray


def _kinds(rng: np.random.Generator, n: int) -> _Kinds:
    """30% user tasks; production types and shares; statuses (production tasks also assigning or defined)."""
    tid = TASK_ID_BASE + np.cumsum(rng.integers(1, 30, n))
    user = rng.random(n) < 0.3
    prod = ~user
    ptype = np.where(prod, rng.choice(np.array(PROD_TYPES, dtype=object), size=n, p=_PROD_TYPE_P), "user").astype(
        object
    )
    anal_share = rng.choice(np.array(ANAL_SHARES, dtype=object), size=n, p=ANAL_P)
    gshare = np.array([_TYPE_SHARE.get(t, "") for t in ptype.tolist()], dtype=object)
    gshare[user] = anal_share[user]
    # validation samples: about one simulation task in six runs in the Validation share (its jobs need tasks)
    gshare[(ptype == "simul") & (tid % 6 == 0)] = "Validation"
    status = np.where(
        prod,
        rng.choice(
            np.array(["assigning", "ready", "running", "scouting", "pending", "defined"], dtype=object),
            size=n,
            p=[0.28, 0.2, 0.3, 0.1, 0.08, 0.04],
        ),
        rng.choice(
            np.array(["ready", "running", "scouting", "pending"], dtype=object), size=n, p=[0.3, 0.5, 0.12, 0.08]
        ),
    ).astype(object)
    return _Kinds(tid, user, prod, ptype, anal_share, gshare, status)


def _nuclei(rng: np.random.Generator, sites: Sites, k: _Kinds) -> np.ndarray:
    """Nuclei of production tasks past task brokerage (not the inactive one; bare 'only' ones take only full
    chains), tier 0/1 three times as likely."""
    n = len(k.tid)
    nuc = np.flatnonzero(sites.nucleus)
    usable = nuc[(sites.state[nuc] == "ACTIVE") & (sites.bare[nuc] != "only")]
    if not len(usable):
        usable = nuc
    nw = np.where(sites.tier[usable] <= 1, 3.0, 1.0)
    has_nucleus = k.prod & (
        np.isin(k.status, ("ready", "running", "scouting")) | ((k.status == "pending") & (rng.random(n) < 0.5))
    )
    nucleus = np.full(n, None, dtype=object)
    nucleus[has_nucleus] = sites.name[rng.choice(usable, size=int(has_nucleus.sum()), p=nw / nw.sum())]
    return nucleus


def _priorities(rng: np.random.Generator, k: _Kinds) -> dict[str, np.ndarray]:
    """Current and task priority: production mostly 300-850, a few very high; urgent tasks express; user tasks
    just under 1000 unless boosted to 2000."""
    n, user, ptype = len(k.tid), k.user, k.ptype
    prio = rng.choice(
        [300, 400, 450, 500, 550, 600, 700, 800, 850], size=n, p=[0.05, 0.1, 0.1, 0.25, 0.15, 0.15, 0.1, 0.05, 0.05]
    )
    r = rng.random(n)
    prio = np.where(
        r < 0.06, rng.choice([900, 950], size=n), np.where(r < 0.08, rng.choice([1000, 1100], size=n), prio)
    )
    # urgent tasks are express whatever their priority; below 800 they are not held to their nucleus
    urgent_prio = rng.choice([600, 700, 950, 1000, 1050], size=n, p=[0.35, 0.25, 0.15, 0.15, 0.1])
    prio = np.where(ptype == "urgent", urgent_prio, prio)
    taskprio = prio.copy()
    uprio = np.where(rng.random(n) < 0.04, 2000, 1000)
    uprio = np.where((k.anal_share == "Express Analysis") & (rng.random(n) < 0.3), 2000, uprio)
    taskprio = np.where(user, uprio, taskprio)
    prio = np.where(user, np.where(uprio >= 2000, uprio, 1000 - rng.integers(0, 100, n)), prio)
    return {"currentpriority": prio, "taskpriority": taskprio}


def _brokerage_flags(rng: np.random.Generator, k: _Kinds) -> dict[str, np.ndarray]:
    """t1Weight (some negative), taskBrokerOnMaster, input pre-staging (most reprocessing), scouts and merges."""
    n, prod, ptype = len(k.tid), k.prod, k.ptype
    return {
        "t1weight": np.where(prod, rng.choice([np.nan, 0.0, 2.0, -1.0], size=n, p=[0.93, 0.03, 0.02, 0.02]), np.nan),
        "taskbrokeronmaster": prod & (rng.random(n) < 0.04),
        "inputprestaging": prod & (((ptype == "reprocessing") & (rng.random(n) < 0.8)) | (rng.random(n) < 0.01)),
        "is_scout": k.status == "scouting",
        "is_merge": ptype == "merge",
    }


def _owners(rng: np.random.Generator, k: _Kinds, jobs: Jobs) -> dict[str, np.ndarray]:
    """Owner (a user by popularity, a few over quota; production accounts), working group, included and
    excluded sites, avoidVP and the analysis task class."""
    n, user, prod = len(k.tid), k.user, k.prod
    wg = np.full(n, "", dtype=object)
    owner = rng.choice(len(jobs.users), size=n, p=jobs.user_pop)
    owner[user & (rng.random(n) < 0.01)] = rng.choice(quota_users(len(jobs.users)))
    owner = np.minimum(owner, len(jobs.users) - 1)
    username = np.where(user, jobs.users[owner], "").astype(object)
    prod_owner = np.array(["atlas-prod", "atlas-dpd-production", "atlas-mc-production"], dtype=object)
    username[prod] = rng.choice(prod_owner, size=int(prod.sum()))
    group_task = user & (k.anal_share == "Group Analysis")
    wg[group_task] = jobs.user_group[owner[group_task]]
    included = np.where(
        user & (rng.random(n) < 0.04), rng.choice(np.array(_INCLUDE_PATTERNS, dtype=object), size=n), ""
    )
    excluded = np.where(
        user & (rng.random(n) < 0.06), rng.choice(np.array(_EXCLUDE_PATTERNS, dtype=object), size=n), ""
    )
    avoidvp = user & (rng.random(n) < 0.06)
    tclass = np.where(
        user & (k.anal_share == "User Analysis"),
        rng.choice([1.0, 0.0, -1.0, 2.0], size=n, p=[0.55, 0.25, 0.12, 0.08]),
        np.nan,
    )
    tclass = np.where(user & (k.anal_share == "Express Analysis"), 2.0, tclass)
    return {
        "username": username,
        "workinggroup": wg,
        "includedsite": included,
        "excludedsite": excluded,
        "avoidvp": avoidvp,
        "task_class": tclass,
    }


def _task_names(
    rng: np.random.Generator, ptype: np.ndarray, tid: np.ndarray, username: np.ndarray, sw: np.ndarray
) -> np.ndarray:
    """Task names in ATLAS nomenclature (mc23_13p6TeV.<dsid>.<physics>.<step>..., user.<nick>...)."""
    n = len(ptype)
    dsid = rng.integers(500000, 999999, n)
    phys = rng.integers(0, len(PHYSICS), n)
    run = rng.integers(470000, 490000, n)
    out = []
    for t, d, p, rn, u, i in zip(
        ptype.tolist(), dsid.tolist(), phys.tolist(), run.tolist(), username.tolist(), tid.tolist(), strict=True
    ):
        if t == "user":
            nick = (
                "".join(part[0] for part in u.split()[:-1]).lower() + u.split()[-1].lower() if " " in u else u.lower()
            )
            out.append(f"user.{nick}.{PHYSICS[p].split('_')[0]}.ana.{i}")
        elif t == "reprocessing":
            out.append(f"data24_13p6TeV.{rn:08d}.physics_Main.{_STEP[t]}.f1500_m2248")
        else:
            out.append(f"mc23_13p6TeV.{d}.{PHYSICS[p]}.{_STEP[t]}.e8514_s4162_tid{i}")
    return np.array(out, dtype=object)


def _times(rng: np.random.Generator, k: _Kinds, taken: pd.Timestamp) -> dict[str, Any]:
    """Frozen time (a few tasks weeks old; none while defined) and last modification time."""
    n, status = len(k.tid), k.status
    age_h = np.where(rng.random(n) < 0.12, rng.uniform(7 * 24, 30 * 24, n), rng.uniform(0.5, 6 * 24, n))
    frozen = np.where(status == "defined", np.nan, age_h * 3600.0)
    mod = np.where(status == "assigning", rng.uniform(0, 2 * 3600, n), rng.uniform(0, 6 * 3600, n))
    return {"frozentime": times(taken, frozen), "modificationtime": times(taken, mod)}


def _inv_corepower(q: Queues, jobs: Jobs, gshare: np.ndarray) -> np.ndarray:
    """Per task: the mean 1 / corepower over the queues its share's running jobs sit at (the grid's mean where the
    share runs none): a job's walltime goes with it."""
    inv = 1.0 / np.maximum(np.asarray(q.cols["corepower"], dtype=float), 1e-3)
    running = jobs.jc[:, :, 0].astype(float)  # (queue, share)
    per_share = (inv @ running) / np.maximum(running.sum(axis=0), 1e-12)
    per_share = np.where(running.sum(axis=0) > 0, per_share, inv.mean() if len(inv) else 0.1)
    at = {name: float(v) for name, v in zip(SHARES, per_share, strict=True)}
    return np.array([at.get(str(g), float(inv.mean()) if len(inv) else 0.1) for g in gshare.tolist()])


def make_tasks(
    rng: np.random.Generator,
    n: int,
    sites: Sites,
    q: Queues,
    ep: dict[str, Any],
    jobs: Jobs,
    taken: pd.Timestamp,
    running: Mapping[str, float] | None = None,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Tasks, their input datasets and replicas, and the recent job history of analysis tasks; RUNNING (jobs per
    share), when given, grows each share's input to WORK_HOURS of its running jobs (``work_scale``).

    One random stream, drawn step by step in this order: reordering the steps changes the grid.
    """
    k = _kinds(rng, n)
    nucleus = _nuclei(rng, sites, k)
    priorities = _priorities(rng, k)
    cc, maxcc = task_cores(rng, k.ptype, k.user, k.prod)
    memory = task_memory(rng, k.prod, k.user, cc)
    work = task_work(rng, k.ptype, k.user)
    io = task_io(rng, k.ptype, k.user, k.prod)
    software, cmtconfig = task_software(rng, k.ptype, k.user)
    flags = _brokerage_flags(rng, k)  # scouts as drawn, before full chains move some statuses
    chunk_ev, njobs = task_chunks(rng, k.ptype, k.user, cc, work["cpuefficiency"], work["cputime"])
    site = preassigned_queues(rng, q, k.prod, k.user)
    fullchain, parent = full_chains(rng, sites, k.tid, k.prod, k.status, nucleus)
    nucleus[k.status == "assigning"] = None
    owners = _owners(rng, k, jobs)
    scale = None
    if running is not None:
        hours = job_hours(work["cputime"], cc, work["cpuefficiency"], work["basewalltime"], chunk_ev,
                          _inv_corepower(q, jobs, k.gshare))  # fmt: skip
        scale = work_scale(k.gshare, hours, chunk_ev, running)
    ds, reps = make_datasets(rng, k.tid, k.ptype, k.status, nucleus, io["iointensity"], sites, ep, scale)
    per_event_mb = ds.pop("_master_mb_per_event")
    when = _times(rng, k, taken)
    names = _task_names(rng, k.ptype, k.tid, owners["username"], cmtconfig)
    clients = np.array(["panda-client-1.5.80-jedi-run", "panda-client-1.5.80-jedi-athena"], dtype=object)
    tasks = {
        "jeditaskid": k.tid,
        "taskname": names,
        "status": k.status,
        "prodsourcelabel": np.where(k.user, "user", "managed").astype(object),
        "processingtype": np.where(k.user, rng.choice(clients, size=n), k.ptype).astype(object),
        "gshare": k.gshare,
        **priorities,
        **owners,
        "corecount": cc,
        "maxcorecount": maxcc,
        **memory,
        **work,
        **io,
        "nucleus": nucleus,
        "site": site,
        **software,
        "parent_tid": parent,
        "fullchain": fullchain,
        **flags,
        "chunk_nevents": chunk_ev,
        "chunk_input_mb": np.round(per_event_mb * chunk_ev, 1),
        "chunk_njobs": njobs.astype(np.int64),
        **split_rules(k.user, chunk_ev, np.round(per_event_mb * chunk_ev, 1), work),
        **when,
    }
    history = task_job_counts(rng, k.tid, k.user & np.isin(k.status, ("running", "pending")), q, taken)
    return tasks, ds, reps, history
