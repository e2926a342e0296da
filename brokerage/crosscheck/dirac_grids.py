"""Random small DIRAC grids for the crosscheck against DIRAC's own TaskQueueDB, drawn deterministically from a seed.

Every field the task queues and the matcher read is drawn: groups (VO, JobShare or none, JobSharing,
AllowBackgroundTQs), owners, jobs from a few requirement templates (so task queues hold several jobs; CPUTime on
and around the bucket edges; Sites, BannedSites, GridCEs, Platforms, JobTypes, Tags; Priority 0-10; Waiting or
Matched), the site mask (none, or Active/Degraded/Probing/Banned), running limits at site and CE level with their
running counts, the CEs, the CPU buckets (the seed's or DIRAC's) and the task queue size cap; and the pilots: one per
CE plus pilots that add OwnerGroup, Owner, JobType, 'any' values, WholeNode, or leave out Site or CPUTime.
Usage: ``snap, pilots, overrides = random_dirac_grid(seed=7)``
"""

from __future__ import annotations

import random
from typing import Any

from brokerage.model.snapshot import GridSnapshot

PLATFORMS = ("EL9-x86_64", "EL8-x86_64", "EL9-aarch64")
JOB_TYPES = ("User", "MCSimulation", "Merge", "DataReconstruction", "Test")
TAGS = ("GPU", "MultiProcessor", "4Processors", "8Processors", "2GB", "4GB", "16GB", "WholeNode", "Highmem")
OWNERS = ("alice", "bob", "carol", "dave", "erin", "frank")
SEED_BUCKETS = [500, 5000, 50000, 300000]
DIRAC_BUCKETS = [360, 1800, 3600, 21600, 43200, 86400, 172800, 259200, 345600, 518400, 691200, 864000, 1080000]
MASK_STATUSES = ("Active", "Active", "Active", "Degraded", "Probing", "Banned")
LIMITED = ("JobType", "OwnerGroup", "Owner", "Platform")
TAKEN_AT = "2026-11-20T12:00:00Z"


def _some(r: random.Random, pool: list[str] | tuple[str, ...], most: int, p_empty: float) -> list[str]:
    if r.random() < p_empty:
        return []
    return r.sample(list(pool), r.randint(1, min(most, len(pool))))


def _groups(r: random.Random) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    vos = ["vo0"] if r.random() < 0.8 else ["vo0", "vo1"]
    shares, owners = [], {}
    for i in range(r.randint(2, 4)):
        name = f"vo{i % len(vos)}_g{i}"
        owners[name] = r.sample(OWNERS, r.randint(1, 4))
        if r.random() < 0.85:  # a group without a row takes the default share
            shares.append({"OwnerGroup": name, "VO": vos[i % len(vos)], "JobShare": r.choice((500, 1000, 2000, 3000)),
                           "JobSharing": r.random() < 0.3, "AllowBackgroundTQs": r.random() < 0.3})  # fmt: skip
    return shares, owners


def _cpu(r: random.Random, buckets: list[int]) -> int:
    edge = r.choice(buckets)
    return max(1, r.choice((edge, edge + 1, edge - 1, r.randint(1, buckets[-1] + 1000), buckets[-1] * 2)))


def _jobs(r: random.Random, owners: dict[str, list[str]], sites: list[str], ces: list[str], buckets: list[int]) -> list[dict[str, Any]]:  # fmt: skip
    templates = []
    for _ in range(r.randint(4, 14)):
        group = r.choice(sorted(owners))
        templates.append({
            "Owner": r.choice(owners[group]), "OwnerGroup": group, "CPUTime": _cpu(r, buckets),
            "Sites": _some(r, sites, 2, 0.6), "BannedSites": _some(r, sites, 1, 0.8), "GridCEs": _some(r, ces, 1, 0.85),
            "Platforms": _some(r, PLATFORMS, 2, 0.6), "JobTypes": _some(r, JOB_TYPES, 1, 0.2),
            "Tags": _some(r, TAGS, 2, 0.6),
        })  # fmt: skip
    jobs = []
    for i in range(r.randint(10, 80)):
        t = dict(r.choice(templates))
        if r.random() < 0.15:  # same requirements, another CPUTime in the same or another bucket
            t["CPUTime"] = _cpu(r, buckets)
        vo = next((k.split("_")[0] for k in owners if k == t["OwnerGroup"]), "vo0")
        t.update({"JobID": 1000 + i, "VO": vo, "Priority": r.choice((0, 1, 1, 1, 2, 3, 5, 9, 10)),
                  "Status": "Matched" if r.random() < 0.08 else "Waiting"})  # fmt: skip
        jobs.append(t)
    return jobs


def _ces(r: random.Random, sites: list[str]) -> list[dict[str, Any]]:
    out = []
    for i, s in enumerate(sites):
        for j in range(r.randint(1, 3)):
            n = r.choice((1, 1, 4, 8))
            tags = _some(r, ("GPU", "Highmem", "WholeNode"), 1, 0.7)
            out.append({"Site": s, "GridCE": f"ce{j}.s{i}.org", "Queue": "q", "Platform": r.choice((*PLATFORMS, "")),
                        "CPUTime": r.choice((3600, 28800, 86400, 172800, 345600, 2000000)), "Tags": tags,
                        "RequiredTags": tags[:1] if tags and r.random() < 0.3 else [], "NumberOfProcessors": n,
                        "MaxRAM": r.choice((0, 2048, 4096, 16000))})  # fmt: skip
    return out


def _limits(r: random.Random, ces: list[dict[str, Any]], jobs: list[dict[str, Any]]) -> tuple[list[Any], list[Any]]:
    limits, counts = [], []
    for _ in range(r.randint(0, 4)):
        ce = r.choice(ces)
        att = r.choice(LIMITED)
        job = r.choice(jobs)
        value = {"JobType": (job["JobTypes"] or ["User"])[0], "OwnerGroup": job["OwnerGroup"], "Owner": job["Owner"],
                 "Platform": r.choice(PLATFORMS)}[att]  # fmt: skip
        limit = r.choice((0, 10, 100))
        limits.append({"Site": ce["Site"], "GridCE": ce["GridCE"] if r.random() < 0.3 else "", "Attribute": att,
                       "Value": value, "Limit": limit})  # fmt: skip
        counts.append(
            {"Site": ce["Site"], "Attribute": att, "Value": value, "Running": max(0, limit + r.choice((-1, 0, 5)))}
        )
    unique = {(c["Site"], c["Attribute"], c["Value"]): c for c in counts}
    rows = {(x["Site"], x["GridCE"], x["Attribute"], x["Value"]): x for x in reversed(limits)}  # one per CS option
    return list(reversed(rows.values())), list(unique.values())


def ce_pilot(ce: dict[str, Any]) -> dict[str, Any]:
    """What a pilot at this dirac_ces row sends: Site, GridCE, CPUTime, Platform, Tags, RequiredTags, size."""
    pilot: dict[str, Any] = {"Site": ce["Site"], "GridCE": ce["GridCE"], "CPUTime": int(ce["CPUTime"])}
    if ce.get("Platform"):
        pilot["Platform"] = ce["Platform"]
    if ce.get("Tags"):
        pilot["Tags"] = list(ce["Tags"])
    if ce.get("RequiredTags"):
        pilot["RequiredTags"] = list(ce["RequiredTags"])
    if int(ce.get("NumberOfProcessors") or 1) > 1:
        pilot["NumberOfProcessors"] = int(ce["NumberOfProcessors"])
    if int(ce.get("MaxRAM") or 0) > 0:
        pilot["MaxRAM"] = int(ce["MaxRAM"])
    return pilot


def _pilots(r: random.Random, ces: list[dict[str, Any]], owners: dict[str, list[str]]) -> list[dict[str, Any]]:
    out = [ce_pilot(c) for c in ces]
    for _ in range(r.randint(4, 10)):
        p = ce_pilot(r.choice(ces))
        kind = r.random()
        if kind < 0.3:
            p["OwnerGroup"] = r.sample(sorted(owners), r.randint(1, min(2, len(owners))))
            if r.random() < 0.5:
                p["Owner"] = r.choice(OWNERS)
        elif kind < 0.45:
            p["JobType"] = r.choice(JOB_TYPES)
        elif kind < 0.55:
            p[r.choice(("Platform", "GridCE"))] = "ANY"
        elif kind < 0.65:
            p["WholeNode"] = "yes"
        elif kind < 0.72:
            p["Tags"] = sorted(set(p.get("Tags", [])) | set(_some(r, TAGS, 3, 0.0)))
        elif kind < 0.76:
            del p["CPUTime"]
        elif kind < 0.80:
            p["RequiredTags"] = ["GPU"]
        out.append(p)
    return out


def random_dirac_grid(seed: int) -> tuple[GridSnapshot, list[dict[str, Any]], dict[str, Any]]:
    """A random DIRAC grid: the snapshot (dirac_ tables only), the pilots to match, and the gdpconfig overrides it
    draws (CPU buckets, the task queue size cap).

    Usage: ``snap, pilots, overrides = random_dirac_grid(3)``
    """
    r = random.Random(f"dirac-crosscheck-{seed}")
    buckets = SEED_BUCKETS if r.random() < 0.5 else DIRAC_BUCKETS
    overrides: dict[str, Any] = {"DIRAC_CPU_BUCKETS": buckets}
    if r.random() < 0.3:  # small caps make the 5000-job split visible on small grids
        overrides["DIRAC_MAX_JOBS_IN_TQ"] = r.choice((2, 3, 5))
    shares, owners = _groups(r)
    sites = [f"LCG.S{i}.xx" for i in range(r.randint(2, 5))]
    ces = _ces(r, sites)
    jobs = _jobs(r, owners, sites, [c["GridCE"] for c in ces], buckets)
    limits, counts = _limits(r, ces, jobs)
    mask = [] if r.random() < 0.4 else [{"Site": s, "Status": r.choice(MASK_STATUSES)} for s in sites]
    doc = {"taken_at": TAKEN_AT, "snapshot_id": f"dirac-random-{seed}", "dirac_jobs": jobs, "dirac_group_shares": shares,
           "dirac_site_mask": mask, "dirac_ces": ces, "dirac_running_limits": limits,
           "dirac_running_counts": counts}  # fmt: skip
    return GridSnapshot.from_dict(doc), _pilots(r, ces, owners), overrides
