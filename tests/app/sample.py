"""A small deterministic grid for dashboard tests: 4 sites (2 nuclei), 12 queues, 8 tasks, links and history."""

from __future__ import annotations

from typing import Any

from brokerage.model.snapshot import GridSnapshot
from tests.builders import counts, dataset, grid, queue, sim_tables, task

SITES = ["CERN-PROD", "BNL-ATLAS", "AGLT2", "MWT2"]
NUCLEI = ["CERN-PROD", "BNL-ATLAS"]


def sample_grid() -> GridSnapshot:
    """Twelve queues over four sites with job counts, users, network links and task status history."""
    queues: list[dict[str, Any]] = []
    job_counts: list[dict[str, Any]] = []
    for i in range(12):
        site = SITES[i % 4]
        name = f"{site}_Q{i}"
        kw: dict[str, Any] = {"cloud": "CERN" if i % 2 == 0 else "US", "trr": float(5 + i)}
        if i == 3:
            kw["status"] = "offline"
        if i == 5:
            kw["corecount"] = 8
        if i == 7:
            kw["maxrss"] = 1000
        if i in (9, 10):
            kw["type"] = "analysis"
        queues.append(queue(name, site, **kw))
        job_counts += counts(name, running=20 + 3 * i, activated=5 + i, defined=2, assigned=i % 3)
        job_counts += counts(name, gshare="User Analysis", running=10 + i, activated=30 + 4 * i)
    sites = [{"site_name": s, "role": "nucleus" if s in NUCLEI else "satellite", "cloud": "CERN"} for s in SITES]
    sites[1]["bare_nucleus"] = "allow"
    tasks = [
        task(1, taskname="mc23.simul.first", nucleus="CERN-PROD"),
        task(2, taskname="mc23.evgen.second", nucleus="BNL-ATLAS", corecount=8, processingtype="evgen"),
        task(3, taskname="data23.reco.third", status="pending", ramcount=6000, ramunit="MB"),
        task(4, taskname="mc23.simul.fourth", status="assigning"),
        task(
            5,
            taskname="mc23.merge.fifth",
            status="running",
            nucleus="CERN-PROD",
            chunk_nevents=200,
            chunk_njobs=20,
            cputime=30.0,
        ),
        task(6, taskname="mc23.simul.sixth", status="done"),
        task(
            7,
            taskname="user.alice.ana",
            prodsourcelabel="user",
            status="ready",
            gshare="User Analysis",
            username="alice",
        ),
        task(8, taskname="mc23.simul.eighth", status="ready", nucleus="BNL-ATLAS"),
    ]
    network: list[dict[str, Any]] = []
    for src in SITES:
        for j, dst in enumerate(NUCLEI):
            if src == dst:
                continue
            blocked = src == "AGLT2" and dst == "BNL-ATLAS"
            network.append(
                {"src": src, "dst": dst, "key": "AGIS_closeness", "value": -1.0 if blocked else float(1 + j)}
            )
            if src != "MWT2":
                network.append({"src": src, "dst": dst, "key": "dashb_mbps_1h", "value": 40.0 + 30 * j})
            network.append({"src": src, "dst": dst, "key": "Production Output_queued", "value": 20.0 * (j + 1)})
    users = [
        {
            "panda_queue": f"{SITES[i % 4]}_Q{i}",
            "gshare": "User Analysis",
            "produsername": u,
            "jobstatus": st,
            "njobs": n,
        }
        for i in (9, 10)
        for u, (st, n) in (("alice", ("activated", 400)), ("alice", ("running", 5)), ("bob", ("activated", 3)))
    ]
    log = []
    for tid, path in {
        1: ["registered", "defined", "ready"],
        2: ["registered", "defined", "ready"],
        3: ["registered", "defined", "pending"],
        4: ["registered", "defined", "assigning"],
        5: ["registered", "defined", "ready", "running"],
        6: ["registered", "defined", "ready", "running", "prepared", "done"],
        7: ["registered", "defined", "ready"],
        8: ["registered", "defined", "ready"],
    }.items():
        for k, st in enumerate(path):
            log.append({"jeditaskid": tid, "status": st, "modificationtime": f"2026-11-20T0{k + 1}:{tid:02d}:00Z"})
    return grid(
        queues,
        tasks,
        sites,
        job_counts=job_counts,
        network=network,
        user_job_counts=users,
        task_status_log=log,
        # task 5 has work left for the simulator: 400 of its 1,000 events, 40 jobs of 10
        datasets=[
            dataset(
                5,
                51,
                datasetname="mc23:mc23.merge.fifth.input",
                nfiles=100,
                size_gb=50.0,
                nevents=1000,
                neventsused=600,
            )
        ],
        **sim_tables(queues, job_counts),
    )
