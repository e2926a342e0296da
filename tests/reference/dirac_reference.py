"""Scalar reference of DIRAC task-queue matching (seed 004), written to read like the seed, one queue at a time.

It never calls the vectorised code in ``brokerage.dirac``; it only reads the same gdpconfig ``Config``. Details the
seed leaves open (shares, tags, job types, Limiter) follow ``shared/reference/dirac-matching.md`` §4-§6.

Usage: ``tqs = build(jobs, shares, Config()); result = match(tqs, pilot, tables, Config())``
"""

from __future__ import annotations

import math
import string
from typing import Any

import numpy as np

from brokerage.model.gdpconfig import Config

MULTI = ("Sites", "GridCEs", "BannedSites", "Platforms", "JobTypes", "Tags")


def bucket(cpu_time: float, buckets: list[int]) -> int:
    """ "The Job CPU time is moved to the next value ... If the job CPU time exceeds [the last] ... at maximum"."""
    for b in buckets:
        if cpu_time <= b:
            return b
    return buckets[-1]


def real_priority(p: int) -> float:
    """__hackJobPriority: 0 -> 1e-5, 10 -> 1e6, else the user priority."""
    p = min(max(int(p), 0.001), 10)
    if p == 0.001:
        return 1e-5
    if p == 10:
        return 1e6
    return float(p)


def _key(job: dict[str, Any], buckets: list[int]) -> tuple[Any, ...]:
    """The task-queue requirements of JOB: owner, group, CPU bucket and the set of each multi-valued field."""
    sets = [frozenset(v for v in job.get(f, []) if v) for f in MULTI]
    return (job["Owner"], job["OwnerGroup"], bucket(job["CPUTime"], buckets), *sets)


def build(jobs: list[dict[str, Any]], shares: list[dict[str, Any]], config: Config) -> list[dict[str, Any]]:
    """ "All jobs with identical requirements are grouped in one TaskQueue", inserting jobs one by one in JobID order."""
    buckets = list(config["DIRAC_CPU_BUCKETS"])
    cap = config["DIRAC_MAX_JOBS_IN_TQ"]
    tqs: list[dict[str, Any]] = []
    for job in sorted(jobs, key=lambda j: j["JobID"]):
        key = _key(job, buckets)
        if job.get("Status", "Waiting") != "Waiting":
            continue
        same = [t for t in tqs if t["key"] == key and t["jobs"]]
        smallest = min(same, key=lambda t: len(t["jobs"])) if same else None
        if smallest is None or len(smallest["jobs"]) >= cap:
            smallest = {"id": len(tqs) + 1, "key": key, "jobs": [], "VO": job.get("VO", "")}
            tqs.append(smallest)
        smallest["jobs"].append((job["JobID"], job.get("Priority", 1)))
    for job in sorted(jobs, key=lambda j: j["JobID"]):  # definitions of just-matched jobs only: empty queues
        key = _key(job, buckets)
        if job.get("Status") == "Matched" and all(t["key"] != key for t in tqs):
            tqs.append({"id": len(tqs) + 1, "key": key, "jobs": [], "VO": job.get("VO", "")})
    for t in tqs:
        t["Owner"], t["OwnerGroup"], t["CPUTime"] = t["key"][:3]
        for f, v in zip(MULTI, t["key"][3:], strict=True):
            t[f] = v
    _priorities(tqs, shares, config)
    return tqs


def _priorities(tqs: list[dict[str, Any]], shares: list[dict[str, Any]], config: Config) -> None:
    """Reference §4.2, per group and per entity, with plain loops."""
    row = {s["OwnerGroup"]: s for s in shares}
    for group in {t["OwnerGroup"] for t in tqs}:
        key = f"DIRAC_JOB_SHARE_{group}"
        share = float(row[group]["JobShare"]) if group in row else float(config["DIRAC_JOB_SHARE"])
        if key in config.overrides or key in config.stored:
            share = float(config[key])
        sharing = bool(row.get(group, {}).get("JobSharing", False))
        allow_bg = bool(row.get(group, {}).get("AllowBackgroundTQs", False))
        mine = [t for t in tqs if t["OwnerGroup"] == group]
        owners = {t["Owner"] for t in mine}
        entities = [mine] if sharing else [[t for t in mine if t["Owner"] == o] for o in owners]
        s = share if sharing else share / len(owners)
        for ent in entities:
            p: dict[int, float] = {}
            a = {t["id"]: sum(real_priority(q) for _, q in t["jobs"]) / len(t["jobs"]) for t in ent if t["jobs"]}
            bg = {i: allow_bg and v <= config["DIRAC_BACKGROUND_PRIORITY"] for i, v in a.items()}
            total = sum(v for i, v in a.items() if not bg[i])
            for i, v in a.items():
                p[i] = config["DIRAC_TQ_MIN_SHARE"] if bg[i] else max(s * v / total, config["DIRAC_TQ_MIN_SHARE"])
            for t in ent:
                if not t["jobs"]:
                    t["Priority"] = math.nan
                    continue
                same = [u for u in ent if u["jobs"] and _variant(u) == _variant(t)]
                t["Priority"] = round(sum(p[u["id"]] for u in same), 4)
                if config["DIRAC_TQ_PRIORITY"] == "stuck":
                    t["Priority"] = 1.0


def _variant(t: dict[str, Any]) -> tuple[Any, ...]:
    return (t["Owner"], t["OwnerGroup"], t["CPUTime"], t["GridCEs"], t["Platforms"], t["JobTypes"], t["Tags"])


def is_any(v: str | None) -> bool:
    """A value reading "any" without punctuation."""
    return v is not None and v.translate(str.maketrans("", "", string.punctuation)).lower() == "any"


def resource_tags(pilot: dict[str, Any]) -> list[str] | None:
    """The pilot's tags plus the ones the Matcher derives from MaxRAM, NumberOfProcessors and WholeNode."""
    tags = list(pilot["Tags"]) if pilot.get("Tags") else None
    extra = []
    if pilot.get("MaxRAM") and int(pilot["MaxRAM"] / 1000) <= 1024:
        extra += [f"{g}GB" for g in range(2, int(pilot["MaxRAM"] / 1000) + 1)]
    n = pilot.get("NumberOfProcessors") or 0
    if n and n <= 1024:
        extra += [f"{i}Processors" for i in range(2, n + 1)]
    if n > 1:
        extra.append("MultiProcessor")
    if "WholeNode" in pilot:
        extra.append("WholeNode")
    if extra:
        tags = (tags or []) + [e for e in extra if e not in (tags or [])]
    return tags


def limited(tables: dict[str, list[dict[str, Any]]], site: str, ce: str | None, config: Config) -> dict[str, list]:
    """The Limiter's negative dict at SITE: attribute -> [(value, source)]."""
    neg: dict[str, list] = {}
    if config["DIRAC_CHECK_JOB_LIMITS"]:
        chosen: dict[tuple[str, str], dict[str, Any]] = {}
        for r in tables.get("dirac_running_limits", []):
            here = r["Site"] == site and r.get("GridCE", "") in ("", ce or "")
            if here and ((r["Attribute"], r["Value"]) not in chosen or r.get("GridCE", "")):
                chosen[(r["Attribute"], r["Value"])] = r
        for (attr, value), r in chosen.items():
            running = sum(
                c["Running"] for c in tables.get("dirac_running_counts", [])
                if c["Site"] == site and c["Attribute"] == attr and c["Value"] == value
            )  # fmt: skip
            if running >= r["Limit"]:
                neg.setdefault(attr, []).append((value, "RunningLimit"))
    if config["DIRAC_CHECK_MATCHING_DELAY"]:
        for r in tables.get("dirac_matching_delays", []):
            since = r.get("SinceLastMatch")
            new = all(v != r["Value"] for v, _ in neg.get(r["Attribute"], []))
            if r["Site"] == site and since is not None and since < r["Delay"] and new:
                neg.setdefault(r["Attribute"], []).append((r["Value"], "MatchingDelay"))
    return neg


def failing_rules(t: dict[str, Any], pilot: dict[str, Any], tables: dict[str, Any], config: Config) -> list[str]:
    """Every rule task queue T fails for PILOT, checked one after the other as the seed lists them."""
    out = []
    site = pilot.get("Site")
    groups = pilot.get("OwnerGroup", [])
    sharing = {s["OwnerGroup"]: s.get("JobSharing", False) for s in tables.get("dirac_group_shares", [])}
    mask = tables.get("dirac_site_mask", [])
    masked = bool(config["DIRAC_CHECK_SITE_MASK"] and mask and not is_any(site)) and site not in {
        m["Site"] for m in mask if m.get("Status", "Active") in ("Active", "Degraded")
    }
    job_type = "Test" if masked else pilot.get("JobType")
    # "Owner Group must match"
    if groups and t["OwnerGroup"] not in groups:
        out.append("OwnerGroup")
    # "Owner DN must match if the Owner Group does not have JOB_SHARING property"
    if pilot.get("Owner") and t["Owner"] != pilot["Owner"] and (not groups or not sharing.get(t["OwnerGroup"])):
        out.append("Owner")
    # "CPU time must be lower or equal than the one presented by the resource"
    if t["CPUTime"] > pilot["CPUTime"]:
        out.append("CPUTime")
    # "If Job requires a Grid CE, it must match"
    ce = pilot.get("GridCE")
    if ce and not is_any(ce) and t["GridCEs"] and ce not in t["GridCEs"]:
        out.append("GridCE")
    # "Site must be accepted by the job" / "Site cannot be in the Banned sites list of the job"
    if site and not is_any(site):
        if t["Sites"] and site not in t["Sites"]:
            out.append("Site")
        if site in t["BannedSites"]:
            out.append("BannedSite")
    # "LHCbPlatform must match if required by the job"
    plat = pilot.get("Platform")
    if plat and not is_any(plat) and t["Platforms"] and plat not in t["Platforms"]:
        out.append("Platform")
    if job_type and not is_any(job_type) and t["JobTypes"] and job_type not in t["JobTypes"]:
        out.append("JobType")
    tags = resource_tags(pilot) or []
    if not any(is_any(x) for x in tags):
        for tag in t["Tags"]:
            if tag not in tags:
                out.append("Tag")
                break
    required = pilot.get("RequiredTags", []) if pilot.get("Tags") else []
    if required and not any(is_any(x) for x in required):
        for tag in required:
            if tag not in t["Tags"]:
                out.append("RequiredTag")
                break
    neg = limited(tables, site, ce, config)
    pieces = []
    for attr, values in neg.items():
        multi = {"GridCE": "GridCEs", "Site": "Sites", "Platform": "Platforms", "JobType": "JobTypes", "Tag": "Tags"}
        if attr in multi:
            pieces.append([(v, src) for v, src in values if v in t[multi[attr]]])
        elif attr in ("Owner", "OwnerGroup", "CPUTime"):
            same = len({v for v, _ in values}) == 1 and str(t[attr]) == values[0][0]
            pieces.append(values[:1] if same else [])
    if pieces and all(pieces):
        sources = {src for piece in pieces for _, src in piece}
        out += [s for s in ("RunningLimit", "MatchingDelay") if s in sources]
    if not t["jobs"]:
        out.append("Empty")
    return out


def first_probability(weights: list[float]) -> list[float]:
    """P(i has the smallest RAND()/w_i) = ∫_0^{1/w_i} w_i Π_{j≠i} max(0, 1 − w_j t) dt, by exact polynomial integration."""
    top = max(weights)
    out = []
    for i, wi in enumerate(weights):
        poly = np.polynomial.Polynomial([1.0])
        for j, wj in enumerate(weights):
            if j != i:
                poly = poly * np.polynomial.Polynomial([1.0, -wj])
        integral = poly.integ()
        out.append(wi * (integral(1 / top) - integral(0)))
    return out


def match(tqs: list[dict[str, Any]], pilot: dict[str, Any], tables: dict[str, Any], config: Config) -> dict[str, Any]:
    """Seed: "Selects all the possible TaskQueues that match the resource attributes; orders them by CPU time in
    descending order and selects the highest CPU time; of the remaining sorts them by RAND() divided by TaskQueue
    priority". Returns the failing rules and the probability of every task queue."""
    result: dict[str, Any] = {"reasons": {}, "probability": {}}
    eligible = []
    for t in tqs:
        rules = failing_rules(t, pilot, tables, config)
        result["reasons"][t["id"]] = rules
        if not rules:
            eligible.append(t)
    if eligible and config["DIRAC_CPU_ORDER"]:
        top = max(t["CPUTime"] for t in eligible)
        eligible = [t for t in eligible if t["CPUTime"] == top]
    probs = first_probability([t["Priority"] for t in eligible]) if eligible else []
    for t in tqs:
        result["probability"][t["id"]] = 0.0
    for t, p in zip(eligible, probs, strict=True):
        result["probability"][t["id"]] = p
    return result


def job_priority_chances(priorities: list[int], weights: list[float]) -> dict[int, float]:
    """Seed: "Orders the jobs in the TaskQueue by RAND() divided by UserPriority ... gets the UserPriority of the
    first job": the chance of each priority value, summing the chance of every job row holding it."""
    positive = [w for w in weights if w > 0]
    if not positive:
        chances = [1 / len(weights)] * len(weights)
    else:
        rows = first_probability(positive)
        it = iter(rows)
        chances = [next(it) if w > 0 else 0.0 for w in weights]
    out: dict[int, float] = {}
    for p, c in zip(priorities, chances, strict=True):
        out[p] = out.get(p, 0.0) + c
    return out
