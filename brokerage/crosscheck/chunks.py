"""A task as JEDI holds it: JediTaskSpec fields, a split rule, an input chunk of files, and rucio's replicas.

The snapshot describes a task's input in aggregate (``datasets``: files, GB, events; ``dataset_replicas``: files
and GB per endpoint) and one job by ``chunk_nevents`` / ``chunk_input_mb``. JEDI needs a file list: each dataset
becomes ``nfiles`` equal files (size and events split evenly), the first ``nfiles`` of them present at each
replica's endpoint; the job size is the split rule ``NE=chunk_nevents`` over those files (``NF=1`` without events),
so JEDI's largest sub-chunk is ``chunk_nevents`` events and their share of the bytes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from brokerage.checks.software_request import jedi_transhome
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config

MAX_RECORDS = 50000  # file records (event ranges) per dataset
# an analysis task's master files are cut up to this many records: every demo analysis task's jobs (at most 347,100
# ranges on the seed-2 demo) are then ranges of chunk_nevents, so JEDI's getMaxAtomSize (walltime, scratch) sees the
# snapshot's job; whole files there gave JEDI a job of a whole file's events
ANALYSIS_MAX_RECORDS = 400000
MAX_FILES = 20000  # a larger dataset is described by this many files (same bytes, events, fractions per endpoint)
OUTPUT_TOKENS = (("output", "ATLASDATADISK"), ("log", "ATLASDATADISK"))
FULLCHAIN_CODES = {"only": "1", "require": "2", "capable": "3"}
INPUT_LAN_CODES = {"use": "1", "only": "2"}
IP_CODES = {"full": "1", "http": "2"}
IPSTACK_CODES = {"IPv4": "4", "IPv6": "6"}
LIMITED_SITES = {(True, False): "1", (False, True): "2", (True, True): "3"}  # enum_limitedSites
BYTES_PER_GB = 1024**3
PSEUDO = "pseudo_dataset"  # JediDatasetSpec.isPseudo() knows it by this name
# JediDatasetSpec.getRatioToMaster: secondary files per master file in a job; the snapshot's job input
# (chunk_input_mb) holds the master's files only, so a sub-chunk takes none of a secondary dataset's
SECONDARY_ATTRIBUTES = "ratio=0"


def _v(x: Any) -> Any:
    if x is None:
        return None
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and math.isnan(x):
        return None
    return x


def split_rule(task: dict[str, Any]) -> str:
    """JEDI's splitRule for the task's fields (two-letter tokens of task_split_rules)."""
    rules = []
    nev = int(_v(task.get("chunk_nevents")) or 0)
    rules.append(f"NE={nev}" if nev > 0 else "NF=1")
    t1 = _v(task.get("t1weight"))
    if t1 is not None:
        rules.append(f"TW={int(t1)}")
    if task.get("fullchain") in FULLCHAIN_CODES:
        rules.append(f"FU={FULLCHAIN_CODES[task['fullchain']]}")
    if task.get("allowinputlan") in INPUT_LAN_CODES:
        rules.append(f"IL={INPUT_LAN_CODES[task['allowinputlan']]}")
    if task.get("inputprestaging"):
        rules.append("IS=1")
    if _v(task.get("maxcorecount")) is not None:
        rules.append(f"CC={int(task['maxcorecount'])}")
    if task.get("onlytagsforfc"):
        rules.append("OT=1")
    if task.get("avoidvp"):
        rules.append("AV=1")
    if task.get("prodsourcelabel") == "user":  # AtlasAnalTaskRefiner sets limitedSites for the site lists
        limited = (bool(str(task.get("includedsite") or "").strip()), bool(str(task.get("excludedsite") or "").strip()))
        if any(limited):
            rules.append(f"LS={LIMITED_SITES[limited]}")
    conn, _, stack = str(task.get("ipconnectivity") or "").partition("#")
    if conn in IP_CODES:
        rules.append(f"IP={IP_CODES[conn]}")
    if stack in IPSTACK_CODES:
        rules.append(f"IK={IPSTACK_CODES[stack]}")
    return ",".join(rules)


def analysis_transhome(transhome: str | None) -> str | None:
    """An analysis task's release as JEDI stores it: ``AnalysisTransforms-<project>_<version>`` (the analysis broker
    strips the first ``word-`` and reads ``_`` as ``-``); ``Project-1.2.3`` becomes ``AnalysisTransforms-Project_1.2.3``."""
    return jedi_transhome(transhome or "") or None


def task_spec(task: dict[str, Any]) -> dict[str, Any]:
    """JediTaskSpec attributes of the task row."""
    user = task.get("prodsourcelabel") == "user"
    return {
        "jediTaskID": int(task["jeditaskid"]), "taskName": task.get("taskname") or f"task.{task['jeditaskid']}",
        "status": "ready", "vo": "atlas", "prodSourceLabel": task.get("prodsourcelabel") or "managed",
        "processingType": task.get("processingtype") or None, "taskType": "anal" if user else "prod",
        "workingGroup": task.get("workinggroup") or None, "gshare": task.get("gshare"), "workQueue_ID": None,
        "resource_type": task.get("resource_type"), "currentPriority": int(_v(task.get("currentpriority")) or 0),
        "taskPriority": int(_v(task.get("taskpriority")) or 0), "userName": task.get("username") or "user",
        "coreCount": _v(task.get("corecount")), "ramCount": _v(task.get("ramcount")), "ramUnit": task.get("ramunit"),
        "baseRamCount": _v(task.get("baseramcount")), "cpuTime": _v(task.get("cputime")) or None,
        "cpuTimeUnit": task.get("cputimeunit") or None, "cpuEfficiency": _v(task.get("cpuefficiency")),
        "baseWalltime": _v(task.get("basewalltime")), "outDiskCount": _v(task.get("outdiskcount")),
        "outDiskUnit": task.get("outdiskunit"), "workDiskCount": _v(task.get("workdiskcount")), "workDiskUnit": "MB",
        "ioIntensity": _v(task.get("iointensity")), "ioIntensityUnit": "kBPerS", "diskIO": _v(task.get("diskio")),
        "diskIOUnit": "kBPerS", "nucleus": task.get("nucleus") or None, "cloud": None if user else "WORLD",
        "site": task.get("site") or None, "architecture": task.get("architecture") or None,
        "transHome": analysis_transhome(task.get("transhome")) if user else (task.get("transhome") or None), "container_name": task.get("container_name") or None,
        "parent_tid": _v(task.get("parent_tid")) or int(task["jeditaskid"]), "eventService": 1 if task.get("eventservice") else 0,
        "splitRule": split_rule(task), "walltime": None, "walltimeUnit": None,
    }  # fmt: skip


def _files(
    name: str, nfiles: int, size_gb: float, nevents: int, per_job: int = 0, max_records: int = MAX_RECORDS
) -> list[dict[str, Any]]:
    """The dataset's files; with PER_JOB events per job each file is cut into event ranges of that size, as JEDI's
    contents feeder records them (one record per range, same LFN), unless that makes over MAX_RECORDS records."""
    n = max(1, min(int(nfiles), MAX_FILES))
    fsize = int(size_gb * BYTES_PER_GB / n)
    nev = int(nevents // n) if nevents else 0
    pieces = -(-nev // per_job) if nev and 0 < per_job < nev else 1
    if n * pieces > max_records:
        pieces = 1
    out = []
    for i in range(n):
        for k in range(pieces):
            f: dict[str, Any] = {"lfn": f"{name}._{i:06d}.root", "fsize": fsize}
            if nev:
                first = k * per_job if pieces > 1 else 0
                last = min(nev, first + per_job) - 1 if pieces > 1 else nev - 1
                f.update(nEvents=nev, startEvent=first, endEvent=last)
            out.append(f)
    return out


def datasets_and_replicas(cache: GridCache, task: dict[str, Any], rucio: dict[str, Any]) -> list[dict[str, Any]]:
    """The task's input datasets as file lists (master first), registering their replicas in RUCIO."""
    snap = cache.snap
    tid = int(task["jeditaskid"])
    ds = snap.datasets[snap.datasets["jeditaskid"] == tid].sort_values("is_master", ascending=False, kind="stable")
    reps = snap.dataset_replicas[snap.dataset_replicas["jeditaskid"] == tid]
    out = []
    for d in ds.to_dict("records"):
        base = str(d["datasetname"] or f"data.{d['datasetid']}")
        if int(d["nfiles"]) == 0:  # no real input (evgen): JEDI's pseudo dataset, one job's events, no bytes
            nev = int(_v(task.get("chunk_nevents")) or 0)
            files = [
                {
                    "lfn": f"pseudo.{tid}",
                    "fsize": 0,
                    **({"nEvents": nev, "startEvent": 0, "endEvent": nev - 1} if nev else {}),
                }
            ]
            out.append({"datasetID": int(d["datasetid"]), "datasetName": PSEUDO, "scope": "pseudo", "files": files})
            continue
        name = f"{base}_t{tid}_d{int(d['datasetid'])}"
        per_job = int(_v(task.get("chunk_nevents")) or 0) if d["is_master"] else 0
        cap = ANALYSIS_MAX_RECORDS if task.get("prodsourcelabel") == "user" else MAX_RECORDS
        files = _files(name, int(d["nfiles"]), float(d["size_gb"]), int(d["nevents"]), per_job, cap)
        n = len({f["lfn"] for f in files})
        scale = n / max(int(d["nfiles"]), 1)
        total_bytes = sum({f["lfn"]: f["fsize"] for f in files}.values())
        rucio["dids"][name] = {"length": n, "bytes": total_bytes}
        rucio["rules"][name] = [{"grouping": "DATASET"}]
        rows = []
        for r in reps[reps["datasetid"] == d["datasetid"]].to_dict("records"):
            k = min(n, round(int(r["nfiles"]) * scale))
            rows.append({"rse": r["ddm_endpoint_name"], "length": n, "available_length": k, "bytes": total_bytes,
                         "available_bytes": int(float(r["size_gb"]) * BYTES_PER_GB)})  # fmt: skip
            for lfn in list(dict.fromkeys(f["lfn"] for f in files))[:k]:
                rucio["file_replicas"].setdefault(lfn, []).append(r["ddm_endpoint_name"])
        rucio["dataset_replicas"][name] = rows
        scope = base.split(".")[0] if "." in base else "data"
        doc = {"datasetID": int(d["datasetid"]), "datasetName": name, "scope": scope, "files": files}
        if not d["is_master"]:  # the job's input is chunk_input_mb (master files): no secondary files per job
            doc["attributes"] = SECONDARY_ATTRIBUTES
        out.append(doc)
    return out


def _age(cache: GridCache, value: Any) -> float | None:
    if value is None or pd.isna(value):
        return None
    return max((pd.Timestamp(cache.snap.taken_at) - pd.Timestamp(value)).total_seconds(), 0.0)


def task_params(task: dict[str, Any]) -> dict[str, Any]:
    """The task parameters JEDI reads besides the spec (analysis site lists, locality on the master only)."""
    out: dict[str, Any] = {}
    if task.get("taskbrokeronmaster"):
        out["taskBrokerOnMaster"] = True
    for key, field in (("includedSite", "includedsite"), ("excludedSite", "excludedsite")):
        sites = [s.strip() for s in str(task.get(field) or "").split(",") if s.strip()]
        if sites:
            out[key] = sites
    return out


def task_document(
    cache: GridCache, task: dict[str, Any], config: Config, rucio: dict[str, Any], seed: int
) -> dict[str, Any]:
    """One task of the driver's input: spec, chunk (datasets, scout/merge flags), outputs and the brokers to run."""
    return {
        "jediTaskID": int(task["jeditaskid"]),
        "brokers": list(task.get("brokers") or ["prod"]),
        "spec": task_spec(task),
        "frozen_age": _age(cache, task.get("frozentime")),
        "datasets": datasets_and_replicas(cache, task, rucio),
        "scout": bool(task.get("is_scout")),
        "merge": bool(task.get("is_merge")),
        "outputs": [list(o) for o in OUTPUT_TOKENS],
        "task_params": task_params(task),
        "seed": seed,
    }
