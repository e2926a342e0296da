"""Random small grids for the crosscheck: every field the brokers read is drawn, deterministically from a seed.

A grid has 4-7 ATLAS sites (nuclei and satellites, some bare nuclei), 2-4 queues per site (statuses, cores,
memory, walltime, scratch, unified queues, releases AUTO/ANY/lists, event service seeds, fair-share policies,
connectivity, diskIO, pilots, Harvester workers and numSlots), DATADISK and DATATAPE endpoints (space, activity
statuses), network rows (closeness incl. blocked links, queued files, throughput of 1 h/1 d/1 w, old rows), job
counts per share and resource type, software tags and CPU architectures, and 6-10 tasks (production with and
without a nucleus, analysis; priorities, scouts, merges, express, full-chain, t1Weight, IO intensity, input on disk,
tape and nowhere, secondary input datasets, jobs spanning whole files); site states (ACTIVE or not); some quiet
grids whose nuclei have room and no output queued (so they reach the data locality check, where tasks frozen over a
week meet JEDI's data check period); GPU analysis queues, analysis jobs not aligned with their files, unified queues
with little scratch per core, analysis site lists and pre-assigned sites. Usage: ``snap = random_grid(seed=7)``
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from brokerage.model.snapshot import GridSnapshot

TAKEN_AT = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
GSHARES = ("MC Simulation", "Data Derivations", "User Analysis")
RTYPES = ("SCORE", "MCORE", "SCORE_HIMEM", "MCORE_HIMEM")
STATUSES = ("online",) * 14 + ("offline", "brokeroff", "test", "standby")
RELEASE = ("Athena", "24.0.53")
CMTCONFIG = "x86_64-el9-gcc13-opt"
ALTERNATION = "(x86_64|aarch64)-el9-gcc13-opt"  # resolved with the queue's CPU architecture by JEDI
PROCESSING = ("simul", "evgen", "reprocessing", "deriv", "pile", "urgent")
JOB_STATES = ("running", "activated", "assigned", "starting", "defined", "transferring")
ACTIVITIES = ("read_lan", "write_lan", "read_wan", "write_wan")


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _ago(r: random.Random, hours: float) -> str:
    return _iso(TAKEN_AT - timedelta(seconds=r.uniform(0, hours * 3600)))


def _sites(r: random.Random, x: random.Random) -> list[dict[str, Any]]:
    n = r.randint(4, 7)
    out = []
    for i in range(n):
        role = "nucleus" if i < max(2, n // 2) else "satellite"
        bare = r.choice(("", "", "", "only", "allow")) if role == "nucleus" and i > 0 else ""
        state = x.choice(("ACTIVE",) * 9 + ("INACTIVE",))
        out.append({"site_name": f"SITE{i}", "role": role, "cloud": f"C{i % 3}", "bare_nucleus": bare, "state": state})
    return out


def _queue(r: random.Random, site: dict[str, Any], k: int) -> dict[str, Any]:
    unified = r.random() < 0.3
    analysis = not unified and r.random() < 0.25
    cores = 8 if unified else r.choice((1, 1, 8, 8, 16, 0))
    return {
        "panda_queue": f"{site['site_name']}_{'ANALY' if analysis else 'Q'}{k}", "atlas_site": site["site_name"],
        "cloud": site["cloud"], "type": "unified" if unified else ("analysis" if analysis else "production"),
        "status": r.choice(STATUSES), "corecount": cores, "corepower": r.choice((8.0, 10.0, 12.5)),
        "maxrss": r.choice((0, 4000, 32000, 64000, 64000, 128000)), "minrss": r.choice((0, 0, 0, 0, 0, 1000)),
        "maxtime": r.choice((0, 172800, 345600, 864000, 864000)), "mintime": r.choice((0, 0, 0, 0, 0, 3600)),
        "maxwdir": r.choice((0, 40000, 160000, 160000)), "direct_access_lan": r.random() < 0.5,
        "transferringlimit": r.choice((0, 0, 50)),
        "releases": r.choice((["AUTO"], ["AUTO"], ["AUTO"], ["ANY"], ["Athena-24.0.53"])),
        "jobseed": r.choice(("std",) * 8 + ("es", "eshigh", "all")),
        "capability": "ucore" if unified else ("mcore" if cores > 1 else "score"),
        "catchall": r.choice(("",) * 7 + ("use_only_local_data",)) if not unified else "",
        "fairsharepolicy": r.choice(("",) * 6 + ("type=simul:0%", "type=evgen:100%,type=any:0%", "priority>=900:0")),
        "wnconnectivity": r.choice(("full#IPv4",) * 5 + ("http#IPv4", "full#IPv6", "")),
        "maxdiskio": r.choice((0, 0, 0, 2000, 5000)), "diskio_avg": round(r.uniform(0, 6000), 1),
        "laststart": _ago(r, 4), "npilot": r.choice((0, 3, 30, 300, 300)),
        "lastpilot": r.choice((None, None, _ago(r, 1), _ago(r, 6))), "nbatchjob": r.choice((0, 0, 5, 50)),
        "numslots": r.choice((None, None, None, 0, 400)), "site_class": r.choice((None, -1, 0, 1)),
        "trr": round(r.uniform(0, 100), 1),
    }  # fmt: skip


def _endpoints(r: random.Random, site: dict[str, Any]) -> list[dict[str, Any]]:
    name = site["site_name"]
    total = r.choice((50_000.0, 300_000.0, 2_000_000.0))
    disk = {"ddm_endpoint_name": f"{name}_DATADISK", "site_name": name, "type": "DATADISK", "space_total": total,
            "space_free": round(total * r.choice((0.0005, 0.05, 0.3, 0.3)), 1), "space_expired": round(r.uniform(0, 0.05) * total, 1),
            **{a: r.choice(("ON",) * 19 + ("OFF", "TEST")) for a in ACTIVITIES}}  # fmt: skip
    tape = {"ddm_endpoint_name": f"{name}_DATATAPE", "site_name": name, "type": "DATATAPE", "is_tape": True,
            "space_total": 9e6, "space_free": 5e6, "space_expired": 0.0}  # fmt: skip
    return [disk, tape]


def _software(r: random.Random, queue: str) -> dict[str, Any]:
    tags = [{"cmtconfig": CMTCONFIG, "container_name": "", "project": RELEASE[0], "release": RELEASE[1], "sources": []}]
    return {
        "panda_queue": queue, "cmtconfigs": [CMTCONFIG], "containers": r.choice((["/cvmfs"], ["any"], [])),
        "cvmfs": r.choice((["atlas"], ["atlas", "nightlies"], [])),
        "architectures": r.choice(([{"type": "cpu", "arch": ["x86_64"], "vendor": ["any"], "instr": ["any"]}], [])),
        "tags": tags if r.random() < 0.6 else [],
    }  # fmt: skip


def _network(r: random.Random, sites: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for dst in (s["site_name"] for s in sites if s["role"] == "nucleus"):
        for src in (s["site_name"] for s in sites if s["site_name"] != dst):
            ts = _ago(r, 0.5) if r.random() < 0.9 else _ago(r, 3) if r.random() < 0.5 else _ago(r, 0.9)
            rows.append(
                {"src": src, "dst": dst, "key": "AGIS_closeness", "value": r.choice((0, 3, 7, 11, -1)), "ts": ts}
            )
            rows.append(
                {
                    "src": src,
                    "dst": dst,
                    "key": "Production Output_queued",
                    "value": r.choice((0, 40, 160, 2500)),
                    "ts": ts,
                }
            )
            for key in ("dashb_mbps_1w", "dashb_mbps_1d", "dashb_mbps_1h"):
                if r.random() < 0.6:
                    rows.append(
                        {
                            "src": src,
                            "dst": dst,
                            "key": key,
                            "value": r.choice((0.5, 15.0, 60.0, 150.0, 250.0)),
                            "ts": ts,
                        }
                    )
    return rows


def _task(r: random.Random, tid: int, nuclei: list[str]) -> dict[str, Any]:
    user = r.random() < 0.25
    nucleus = None if user or r.random() < 0.35 else r.choice(nuclei)
    prio = r.choice((100, 500, 800, 900, 1001, 2000))
    cores = r.choice((1, 8)) if user else r.choice((1, 8, 0))  # any-core analysis tasks crash PanDA 1.0.4
    return {
        "jeditaskid": tid, "taskname": f"mc23.{tid}.{'user' if user else 'prod'}", "status": "ready",
        "prodsourcelabel": "user" if user else "managed", "processingtype": "" if user else r.choice(PROCESSING),
        "gshare": "User Analysis" if user else r.choice(GSHARES[:2]), "resource_type": "MCORE" if cores != 1 else "SCORE",
        "currentpriority": prio, "taskpriority": prio, "username": f"user{tid % 3}", "corecount": cores,
        "ramcount": r.choice((1000, 2000, 4000)), "ramunit": r.choice(("MBPerCore", "MBPerCore", "MB")),
        "baseramcount": r.choice((0, 0, 500)), "cputime": r.choice((0.0, 30.0, 300.0)), "cputimeunit": "HS06sPerEvent",
        "cpuefficiency": 90, "outdiskcount": r.choice((0.0, 500.0)), "outdiskunit": "kBPerEvent",
        "workdiskcount": r.choice((0, 1000)), "iointensity": r.choice((None, 100.0, 600.0)),
        "diskio": r.choice((None, 1000.0, 8000.0)), "ipconnectivity": r.choice(("", "", "", "full#IPv4", "http#IPv6")),
        "allowinputlan": r.choice(("", "", "", "only")), "eventservice": r.random() < 0.05, "nucleus": nucleus,
        "architecture": r.choice(("", CMTCONFIG, CMTCONFIG)), "transhome": r.choice(("", "Athena-24.0.53", "Athena-24.0.53")),
        "fullchain": r.choice(("", "", "", "only", "require")), "t1weight": r.choice((None, None, -1, 2)),
        "is_scout": r.random() < 0.15, "is_merge": r.random() < 0.1, "chunk_nevents": r.choice((100, 1000)),
        "chunk_njobs": 5, "frozentime": _ago(r, 24 * 10), "inputprestaging": r.random() < 0.05,
    }  # fmt: skip


def _datasets(
    r: random.Random, task: dict[str, Any], endpoints: list[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    tid = task["jeditaskid"]
    nfiles = r.choice((0, 5, 20, 120))
    size_per_file = r.choice((0.5, 2.0))
    nev_per_file = 1000
    ds = [{"jeditaskid": tid, "datasetid": tid * 10, "datasetname": f"mc23.{tid}.simul.HITS.e1_s1" if nfiles else f"pseudo_dataset.{tid}",
           "is_master": True, "nfiles": nfiles, "size_gb": nfiles * size_per_file, "nevents": max(nfiles, 1) * nev_per_file}]  # fmt: skip
    task["chunk_input_mb"] = round(size_per_file * 1024 * task["chunk_nevents"] / nev_per_file, 3) if nfiles else 0.0
    reps = []
    for ep in r.sample(endpoints, k=min(len(endpoints), r.choice((0, 1, 2, 3)))) if nfiles else []:
        k = r.choice((nfiles, nfiles, nfiles, nfiles // 2, 1))
        reps.append(
            {
                "jeditaskid": tid,
                "datasetid": tid * 10,
                "ddm_endpoint_name": ep,
                "nfiles": k,
                "size_gb": k * size_per_file,
            }
        )
    return ds, reps


def _secondary(
    x: random.Random, ds: list[dict[str, Any]], reps: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Sometimes a secondary input dataset beside a real master: its own files, replicas where the master has one."""
    master = ds[0]
    if not master["nfiles"] or x.random() >= 0.2:
        return [], []
    nfiles = x.choice((3, 40))
    sec = dict(master, datasetid=master["datasetid"] + 1, datasetname=f"mc23.{master['jeditaskid']}.minbias.HITS.e1_s1",
               is_master=False, nfiles=nfiles, size_gb=nfiles * 1.0, nevents=nfiles * 1000)  # fmt: skip
    sreps = [dict(r, datasetid=sec["datasetid"], nfiles=k, size_gb=k * 1.0)
             for r in reps if (k := x.choice((nfiles, nfiles, nfiles // 2)))]  # fmt: skip
    return [sec], sreps


def _vary_architecture(x: random.Random, architecture: str) -> str:
    """Sometimes a base platform (a container is needed) or a regexp sw_platform with an architecture alternation."""
    if not architecture:
        return architecture
    return x.choice((architecture,) * 6 + (f"{CMTCONFIG}@el9", ALTERNATION))


def _vary_software(x: random.Random, row: dict[str, Any]) -> dict[str, Any]:
    """Sometimes a queue without the task's cmtconfig, or whose containers name a registry path (not 'any'/'/cvmfs')."""
    pick = x.random()
    if pick < 0.15:
        return dict(row, cmtconfigs=["x86_64-centos7-gcc11-opt"])
    if pick < 0.3:
        return dict(row, containers=["/cvmfs/unpacked.cern.ch/registry.hub.docker.com/atlas/athena"])
    return row


def _quiet(
    y: random.Random, rows: list[dict[str, Any]], endpoints: list[dict[str, Any]], nuclei: list[str]
) -> list[dict[str, Any]]:
    """Sometimes no output queued to any nucleus and room on every nucleus' DATADISK, so the task broker's nuclei
    reach its data locality check (the network rows returned; ENDPOINTS changed in place)."""
    if y.random() >= 0.3:
        return rows
    for e in endpoints:
        if e["site_name"] in nuclei and e["type"] == "DATADISK":
            e.update(space_total=2_000_000.0, space_free=600_000.0)
    return [dict(row, value=0) if row["key"] == "Production Output_queued" else row for row in rows]


def _gpu_queues(g: random.Random, queues: list[dict[str, Any]], software: list[dict[str, Any]]) -> None:
    """Sometimes an analysis queue is a GPU queue (catchall 'gpu'), its description with an open or exclusive GPU."""
    gpu = {q["panda_queue"] for q in queues if q["type"] == "analysis" and g.random() < 0.3}
    for q in queues:
        if q["panda_queue"] in gpu:
            q["catchall"] = ",".join(x for x in (q["catchall"], "gpu") if x)
    for row in software:
        entry = g.choice((None, {"type": "gpu", "vendor": ["nvidia"]}, {"type": "gpu", "vendor": ["nvidia", "excl"]}))
        if row["panda_queue"] in gpu and entry:
            row["architectures"] = [*row["architectures"], entry]


def _vary_jobs(g: random.Random, queues: list[dict[str, Any]], tasks: list[dict[str, Any]]) -> None:
    """Sometimes an analysis job of 300 or 2,500 events (not aligned with the files' 1,000 events), and a unified
    queue whose scratch per core (maxwdir 16,000 / 8 cores) is below one 2 GB file; analysis site lists and pre-assigned sites."""
    for t in tasks:
        if t["prodsourcelabel"] == "user" and g.random() < 0.3:
            events = g.choice((300, 2500))
            t["chunk_input_mb"] = round(t["chunk_input_mb"] * events / t["chunk_nevents"], 3)
            t["chunk_nevents"] = events
    for q in queues:
        if q["type"] == "unified" and g.random() < 0.3:
            q["maxwdir"] = 16000
    for t in tasks:  # site lists: an ATLAS site's name, a pattern found inside queue names, a prefix, a suffix
        if t["prodsourcelabel"] == "user" and g.random() < 0.3:
            t[g.choice(("includedsite", "excludedsite"))] = g.choice(("SITE0", "ANALY*", "SITE1*", "*_Q1"))
    brokered = [q["panda_queue"] for q in queues if q["type"] in ("analysis", "unified")]
    for t in tasks:  # a pre-assigned queue, or an ATLAS site's name (no queue of that name: JEDI ignores it)
        if t["prodsourcelabel"] == "user" and brokered and g.random() < 0.15:
            t["site"] = g.choice([*brokered, "SITE0"])


def random_grid(seed: int) -> GridSnapshot:
    """A small grid drawn from SEED (the same seed gives the same grid)."""
    r = random.Random(seed)
    x = random.Random(f"extra-{seed}")  # fields added later draw from their own stream: r's grids stay as they were
    y = random.Random(f"extra2-{seed}")  # ... and those added after them from a third: x's draws stay too
    sites = _sites(r, x)
    queues = [_queue(r, s, k) for s in sites for k in range(r.randint(2, 5))]
    for s in sites:  # a nucleus is known to PanDA through a production queue of its site
        if s["role"] == "nucleus" and not any(
            q["atlas_site"] == s["site_name"] and q["type"] != "analysis" for q in queues
        ):
            queues.append(dict(_queue(r, s, 9), type="production", panda_queue=f"{s['site_name']}_Q9"))
    endpoints = [e for s in sites for e in _endpoints(r, s)]
    relations = []
    for q in queues:
        site = q["atlas_site"]
        relations.append(
            {"panda_queue": q["panda_queue"], "ddm_endpoint_name": f"{site}_DATADISK", "default_write": True}
        )
        relations.append(
            {"panda_queue": q["panda_queue"], "ddm_endpoint_name": f"{site}_DATATAPE", "default_write": False}
        )
    counts = [
        {"panda_queue": q["panda_queue"], "gshare": g, "resource_type": rt, "jobstatus": st, "njobs": r.choice((0, 1, 5, 40, 300))}
        for q in queues for g in GSHARES for rt in r.sample(RTYPES, 2) for st in JOB_STATES if r.random() < 0.5
    ]  # fmt: skip
    nuclei = [s["site_name"] for s in sites if s["role"] == "nucleus"]
    tasks, datasets, replicas = [], [], []
    for i in range(r.randint(6, 10)):
        t = _task(r, 1000 * (seed % 100000) + i + 1, nuclei)
        ds, reps = _datasets(r, t, [e["ddm_endpoint_name"] for e in endpoints])
        t["architecture"] = _vary_architecture(x, t["architecture"])
        if x.random() < 0.08:  # exactly EXPRESS_PRIORITY: express for the seed, not for JEDI
            t["currentpriority"] = t["taskpriority"] = 1000
        sec, sreps = _secondary(x, ds, reps)
        t["taskbrokeronmaster"] = bool(sec) and x.random() < 0.5
        if t["chunk_input_mb"] and y.random() < 0.1:  # a job of 2.5 files: JEDI's sub-chunk takes 2 whole files
            t["chunk_input_mb"] = round(t["chunk_input_mb"] * 2500 / t["chunk_nevents"], 3)
            t["chunk_nevents"] = 2500
        ds, reps = ds + sec, reps + sreps
        tasks.append(t)
        datasets += ds
        replicas += reps
    network = _network(r, sites)  # r draws the network before the software, as it always did
    software = [_vary_software(x, _software(r, q["panda_queue"])) for q in queues if r.random() < 0.85]
    network = _quiet(y, network, endpoints, nuclei)
    g = random.Random(f"gpu-{seed}")  # a fourth stream: r's, x's and y's draws stay
    _gpu_queues(g, queues, software)
    _vary_jobs(g, queues, tasks)
    doc = {
        "taken_at": _iso(TAKEN_AT), "snapshot_id": f"random-{seed}", "sites": sites, "queues": queues,
        "ddm_endpoints": endpoints, "panda_ddm_relation": relations, "network": network,
        "job_counts": counts, "gshares": [{"gshare": g, "value": 1.0} for g in GSHARES],
        "queue_software": software,
        "tasks": tasks, "datasets": datasets, "dataset_replicas": replicas,
    }  # fmt: skip
    return GridSnapshot.from_dict(doc)
