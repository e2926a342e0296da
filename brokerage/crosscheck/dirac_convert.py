"""A snapshot's DIRAC tables and pilots → the JSON document DIRAC's TaskQueueDB driver answers from.

Both sides read the same values: each group's JobShare after the ``DIRAC_JOB_SHARE`` overrides is written into the
group's Registry section (DIRAC's own default share is the same 1000), the CPU buckets become
``JobScheduling/taskQueueCPUTimeIntervals``, the running limits ``JobScheduling/RunningLimit``, the task queue size
cap (``max_jobs_in_tq``: 5000 under ``tq_split_as_dirac``) the one constant the driver replaces.
Usage: ``doc = grid_document(snap, config, pilots)``
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from brokerage.crosscheck.dirac_grids import ce_pilot
from brokerage.dirac.priorities import group_shares
from brokerage.dirac.taskqueues import MATCHED, MULTI_FIELDS, WAITING, max_jobs_in_tq
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot

# our pilot fields → the keys of the resource description a JobAgent sends to DIRAC's Matcher
PILOT_KEYS = {"Tags": "Tag", "RequiredTags": "RequiredTag"}


def _lists(value: Any) -> list[str]:
    if value is None or (isinstance(value, float) and value != value):
        return []
    return [str(v) for v in value]


def _number(x: float) -> int | float:
    """An integral share as an int: DIRAC reads JobShare with an int default, and int('2000.0') fails back to 1000."""
    return int(x) if float(x).is_integer() else float(x)


def groups(snap: GridSnapshot, config: Config) -> dict[str, dict[str, Any]]:
    """Every group of the shares table and of the jobs: VO, JobShare (overrides applied), JobSharing, background."""
    table = snap.tables["dirac_group_shares"]
    jobs = snap.tables["dirac_jobs"]
    names = sorted(set(table["OwnerGroup"].astype(str)) | set(jobs["OwnerGroup"].astype(str)))
    shares = group_shares(table, config, names)
    vo_of = dict(zip(jobs["OwnerGroup"].astype(str), jobs["VO"].astype(str), strict=True))
    vo_of.update(zip(table["OwnerGroup"].astype(str), table["VO"].astype(str), strict=True))
    return {
        g: {"VO": vo_of.get(g) or "unknown", "JobShare": _number(shares.share_of(g)),
            "JobSharing": shares.job_sharing.get(g, False), "AllowBackgroundTQs": shares.background.get(g, False)}
        for g in names
    }  # fmt: skip


def jobs(snap: GridSnapshot) -> list[dict[str, Any]]:
    """Waiting and Matched jobs in JobID order, each with its task queue definition (what JobState.insertIntoTQ
    reads from JobRequirements) and its Priority."""
    df = snap.tables["dirac_jobs"]
    df = df[df["Status"].isin((WAITING, MATCHED))].sort_values("JobID", kind="stable")
    out = []
    for row in df.to_dict("records"):
        definition: dict[str, Any] = {"Owner": str(row["Owner"]), "OwnerGroup": str(row["OwnerGroup"]),
                                      "CPUTime": int(row["CPUTime"])}  # fmt: skip
        for name in MULTI_FIELDS:
            definition[name] = _lists(row[name])
        out.append({"JobID": int(row["JobID"]), "Priority": int(row["Priority"]), "Status": str(row["Status"]),
                    "definition": definition})  # fmt: skip
    return out


def resource_description(pilot: dict[str, Any], vos: list[str], all_groups: list[str]) -> dict[str, Any]:
    """Our pilot as the resource description a JobAgent sends: Tags → Tag, RequiredTags → RequiredTag. A pilot
    without OwnerGroup is a generic pilot of the grid's VO (``VirtualOrganization``: DIRAC's Matcher then takes every
    group of that VO); with several VOs it lists every group instead (our pilot has no VO)."""
    out = {PILOT_KEYS.get(k, k): (list(v) if isinstance(v, list | tuple) else v) for k, v in pilot.items()}
    if "OwnerGroup" not in out:
        if len(vos) == 1:
            out["VirtualOrganization"] = vos[0]
        else:
            out["OwnerGroup"] = list(all_groups)
    return out


def ce_pilots(snap: GridSnapshot) -> list[dict[str, Any]]:
    """One pilot per dirac_ces row (what a pilot at that CE sends)."""
    return [ce_pilot(row) for row in snap.tables["dirac_ces"].to_dict("records")]


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()} for r in df.to_dict("records")]


def grid_document(snap: GridSnapshot, config: Config, pilots: list[dict[str, Any]]) -> dict[str, Any]:
    """One grid for the driver: groups, buckets, cap, limits, mask, jobs, and PILOTS as resource descriptions.

    Usage: ``grid_document(snap, panda_config(Config()), ce_pilots(snap))``
    """
    g = groups(snap, config)
    vos = sorted({v["VO"] for v in g.values()})
    mask_table = snap.tables["dirac_site_mask"]
    mask = None
    if config["DIRAC_CHECK_SITE_MASK"] and len(mask_table):
        mask = dict(zip(mask_table["Site"].astype(str), mask_table["Status"].astype(str), strict=True))
    limits = snap.tables["dirac_running_limits"].copy()
    limits["GridCE"] = limits["GridCE"].fillna("")
    return {
        "groups": g,
        "buckets": [int(b) for b in config["DIRAC_CPU_BUCKETS"]],
        "max_jobs_in_tq": max_jobs_in_tq(config),
        "check_job_limits": bool(config["DIRAC_CHECK_JOB_LIMITS"]),
        "running_limits": _records(limits),
        "running_counts": _records(snap.tables["dirac_running_counts"]),
        "mask": mask,
        "jobs": jobs(snap),
        "pilots": [resource_description(p, vos, sorted(g)) for p in pilots],
    }
