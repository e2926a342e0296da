"""What the demo grid's tasks need from a queue: cores, memory, CPU time and walltime, output and work disk,
IO intensity, connectivity, direct access, event service, and how big their jobs are."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from brokerage.sim.split import SEED_DISK, out_mb_per_event

_CPUTIME = {
    "evgen": 30.0,
    "simul": 600.0,
    "pile": 300.0,
    "reprocessing": 150.0,
    "deriv": 3.0,
    "merge": 0.5,
    "urgent": 600.0,
}
# events per job: (smallest, largest); inside that range the job is sized to run ~JOB_HOURS
_JOB_EVENTS = {
    "evgen": (200, 10000),
    "simul": (50, 1000),
    "pile": (200, 2000),
    "reprocessing": (200, 2000),
    "deriv": (2000, 20000),
    "merge": (1000, 5000),
    "urgent": (50, 500),
    "user": (1000, 50000),
}
JOB_HOURS = {"managed": 8.0, "user": 3.0}  # median target walltime of a job
REFERENCE_CORE_POWER = 10.0  # HS06 per core used to size jobs
_OUT_KB_PER_EVENT = {
    "evgen": 100.0,
    "simul": 1000.0,
    "pile": 500.0,
    "reprocessing": 600.0,
    "deriv": 20.0,
    "urgent": 1000.0,
}


def task_cores(
    rng: np.random.Generator, ptype: np.ndarray, user: np.ndarray, prod: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Core count by processing type (0 = any), and a max core count for a few of the any-core tasks."""
    n = len(ptype)
    cc = np.ones(n, dtype=np.int64)
    mc = np.isin(ptype, ("simul", "pile", "reprocessing", "urgent"))
    cc[mc] = np.where(rng.random(int(mc.sum())) < 0.88, 8, 1)
    m = ptype == "evgen"
    cc[m] = np.where(rng.random(int(m.sum())) < 0.4, 8, 1)
    m = ptype == "deriv"
    cc[m] = np.where(rng.random(int(m.sum())) < 0.7, 8, 1)
    # an analysis task always names its cores: JEDI's analysis broker divides by them (InputChunk.getSubChunk), so a
    # task of any cores (0) would fail every brokerage there
    cc[user] = rng.choice([1, 8], size=int(user.sum()), p=[0.95, 0.05])
    cc[prod & (rng.random(n) < 0.05)] = 0
    maxcc = np.where((cc == 0) & (rng.random(n) < 0.4), 8.0, np.nan)
    return cc, maxcc


def task_memory(rng: np.random.Generator, prod: np.ndarray, user: np.ndarray, cc: np.ndarray) -> dict[str, Any]:
    """RAM count and unit, base RAM, and the resource type they make (SCORE/MCORE, _HIMEM above 2 GB a core)."""
    n = len(prod)
    ramunit = np.where(
        prod,
        rng.choice(np.array(["MBPerCore", "MB", "MBPerCoreFixed"], dtype=object), size=n, p=[0.85, 0.12, 0.03]),
        rng.choice(np.array(["MB", "MBPerCore"], dtype=object), size=n, p=[0.7, 0.3]),
    ).astype(object)
    per_core = rng.choice([1500, 2000, 2500, 3000], size=n, p=[0.15, 0.5, 0.2, 0.15])
    per_core = np.where(rng.random(n) < 0.02, rng.choice([8000, 12000, 16000], size=n), per_core)
    ram = np.where(ramunit == "MB", per_core * np.where(cc > 1, 2, 1), per_core)
    uram = rng.choice([2000, 4000, 8000, 16000], size=n, p=[0.6, 0.25, 0.1, 0.05])
    ram = np.where(user, np.where(ramunit == "MB", uram, uram // 2), ram)
    baseram = np.where((cc > 1) & (rng.random(n) < 0.3), rng.choice([500, 1000, 1500], size=n), 0)
    rtype = np.where(cc == 1, "SCORE", "MCORE").astype(object)
    himem = np.where(ramunit == "MB", ram / np.maximum(cc, 1), ram) > 2000
    rtype = np.where(himem, rtype + "_HIMEM", rtype).astype(object)
    return {"resource_type": rtype, "ramcount": ram, "ramunit": ramunit, "baseramcount": baseram}


def task_work(rng: np.random.Generator, ptype: np.ndarray, user: np.ndarray) -> dict[str, Any]:
    """CPU time per event, base walltime, CPU efficiency, output disk per event (or per job) and work disk."""
    n = len(ptype)
    cputime = np.array([_CPUTIME.get(t, 0.0) for t in ptype.tolist()]) * rng.lognormal(0.0, 0.5, n)
    cputime = np.where(ptype == "evgen", np.exp(rng.uniform(np.log(0.5), np.log(3000.0), n)), cputime)
    cputime = np.where(user, np.where(rng.random(n) < 0.3, 0.0, rng.uniform(0.5, 50.0, n)), cputime)
    cputime = np.round(cputime, 2)
    basewall = np.where(rng.random(n) < 0.3, 0, rng.integers(180, 1800, n))
    cpueff = np.where(user, rng.integers(50, 91, n), np.where(rng.random(n) < 0.8, 90, rng.integers(70, 101, n)))
    outkb = np.array([_OUT_KB_PER_EVENT.get(t, 0.0) for t in ptype.tolist()]) * rng.uniform(0.7, 1.3, n)
    outunit = np.where(np.isin(ptype, ("merge", "user")), "kB", "kBPerEvent").astype(object)
    outdisk = np.round(np.where(ptype == "merge", 1.0, np.where(user, rng.uniform(0.05, 0.5, n), outkb)), 3)
    workdisk = np.where(rng.random(n) < 0.02, rng.integers(40000, 80000, n), rng.integers(200, 2000, n))
    workdisk = np.where(user, rng.integers(0, 2000, n), workdisk)
    return {
        "cputime": cputime,
        "basewalltime": basewall,
        "cpuefficiency": cpueff,
        "outdiskcount": outdisk,
        "outdiskunit": outunit,
        "workdiskcount": workdisk,
    }


def task_io(rng: np.random.Generator, ptype: np.ndarray, user: np.ndarray, prod: np.ndarray) -> dict[str, Any]:
    """IO intensity (a few IO-heavy), disk IO, IP connectivity, direct access only, event service."""
    n = len(ptype)
    io_draw = rng.random(n)
    io = np.where(
        io_draw < 0.07,
        rng.uniform(200.0, 500.0, n),
        np.where(io_draw < 0.1, rng.uniform(500.0, 2000.0, n), rng.lognormal(np.log(40.0), 0.8, n)),
    )
    io = np.where(np.isin(ptype, ("reprocessing", "pile")) & (rng.random(n) < 0.3), rng.uniform(200.0, 900.0, n), io)
    io = np.round(np.where((rng.random(n) < 0.1) | (user & (rng.random(n) < 0.7)), np.nan, io), 1)
    diskio = np.where(rng.random(n) < 0.03, rng.uniform(4000.0, 9000.0, n), rng.lognormal(np.log(600.0), 0.6, n))
    diskio = np.round(np.where(rng.random(n) < 0.25, np.nan, diskio), 1)
    ipconn = rng.choice(
        np.array(["", "http#IPv4", "full#IPv6", "full#IPv4", "none"], dtype=object),
        size=n,
        p=[0.88, 0.03, 0.03, 0.04, 0.02],
    )
    allowlan = np.where(prod & np.isin(ptype, ("deriv", "reprocessing")) & (rng.random(n) < 0.08), "only", "").astype(
        object
    )
    es = prod & np.isin(ptype, ("simul", "evgen")) & (rng.random(n) < 0.08)
    return {
        "iointensity": io,
        "diskio": diskio,
        "ipconnectivity": ipconn,
        "allowinputlan": allowlan,
        "eventservice": es,
    }


def task_chunks(
    rng: np.random.Generator,
    ptype: np.ndarray,
    user: np.ndarray,
    cc: np.ndarray,
    cpueff: np.ndarray,
    cputime: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Events per job, sized to run about JOB_HOURS on a reference core (a few too long), and jobs per chunk."""
    n = len(ptype)
    ev_lo = np.array([_JOB_EVENTS[t][0] for t in ptype.tolist()])
    ev_hi = np.array([_JOB_EVENTS[t][1] for t in ptype.tolist()])
    hours = rng.lognormal(np.log(np.where(user, JOB_HOURS["user"], JOB_HOURS["managed"])), 0.5)
    job_cores = np.where(cc == 0, 8, cc)
    fit = hours * 3600.0 * job_cores * REFERENCE_CORE_POWER * cpueff / 100.0 / np.maximum(cputime, 1e-3)
    chunk_ev = np.round(np.clip(fit, ev_lo, ev_hi)).astype(np.int64)
    chunk_ev = np.where(rng.random(n) < 0.04, chunk_ev * 10, chunk_ev)  # jobs too long for most queues
    njobs = np.where(user, np.ceil(rng.lognormal(np.log(50.0), 1.2, n)), np.ceil(rng.lognormal(np.log(20.0), 1.0, n)))
    return chunk_ev, njobs


def split_rules(
    user: np.ndarray, chunk_ev: np.ndarray, chunk_mb: np.ndarray, work: dict[str, Any] | None = None
) -> dict[str, np.ndarray]:  # fmt: skip
    """The split rule that makes jobs of CHUNK_EV events: production tasks nEventsPerJob; user tasks nGBPerJob when
    their input has a size: the chunk's disk estimate as seed 003 writes it (input + max(output, 2.5 GB) + workdir,
    from WORK's outdiskcount, outdiskunit and workdiskcount; none: no output or workdir), in GB rounded up to the MB;
    else nEventsPerJob. No random draw.

    Usage: ``split_rules(np.array([False]), np.array([500]), np.array([1024.0]))["neventsperjob"]``  -> ``[500]``
    """
    by_gb = user & (chunk_mb > 0)
    n = len(user)
    work = work or {"outdiskcount": np.zeros(n), "outdiskunit": np.full(n, "kB", object), "workdiskcount": np.zeros(n)}
    in_mb = pd.Series(chunk_mb / np.maximum(chunk_ev, 1))
    out = out_mb_per_event(pd.Series(work["outdiskcount"]), pd.Series(work["outdiskunit"]), in_mb).to_numpy() * chunk_ev
    disk = chunk_mb + np.maximum(out, SEED_DISK.out_floor_mb) + np.asarray(work["workdiskcount"], float)
    return {
        "neventsperjob": np.where(by_gb, 0, chunk_ev).astype(np.int64),
        "nfilesperjob": np.zeros(n, dtype=np.int64),
        "ngbperjob": np.where(by_gb, np.ceil(disk / 1024.0 * 1000.0) / 1000.0, 0.0),
    }
