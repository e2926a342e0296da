"""Property tests: the vectorised DIRAC task queues and matcher agree with the scalar reference on random grids."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brokerage.dirac.matcher import match
from brokerage.dirac.pilot import parse_pilot
from brokerage.model.gdpconfig import Config
from tests.core.dirac.helpers import snapshot
from tests.reference import dirac_reference as ref

SITES = ("LCG.CERN.cern", "LCG.CNAF.it", "LCG.RAL.uk", "DIRAC.Yandex.ru")
CES = ("ce1.cern.ch", "ce2.cern.ch", "ce.cnaf.it")
PLATFORMS = ("x86_64-el9", "x86_64-el8", "aarch64-el9")
JOB_TYPES = ("User", "MCSimulation", "Test")
TAGS = ("MultiProcessor", "8Processors", "4GB", "GPU", "WholeNode")
GROUPS = ("lhcb_user", "lhcb_mc", "lhcb_data")
OWNERS = ("alice", "bob", "carol")


def _some(rng: random.Random, values: tuple[str, ...], p: float = 0.35) -> list[str]:
    if rng.random() > p:
        return []
    return rng.sample(values, rng.randint(1, 2)) + ([values[0]] if rng.random() < 0.1 else [])  # duplicates too


def _world(seed: int) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]], str, Config]:
    rng = random.Random(seed)
    jobs = []
    for i in range(rng.randint(1, 40)):
        jobs.append({
            "JobID": rng.randint(1, 10**6) * 100 + i,
            "Owner": rng.choice(OWNERS), "OwnerGroup": rng.choice(GROUPS),
            "CPUTime": rng.choice((0, 10, 500, 501, 4000, 5000, 5001, 60000, 300000, 400000)),
            "Sites": _some(rng, SITES), "BannedSites": _some(rng, SITES, 0.2), "GridCEs": _some(rng, CES, 0.15),
            "Platforms": _some(rng, PLATFORMS), "JobTypes": _some(rng, JOB_TYPES, 0.5), "Tags": _some(rng, TAGS, 0.3),
            "Priority": rng.choice((0, 1, 1, 3, 5, 10)), "Status": rng.choice(("Waiting",) * 6 + ("Matched",)),
        })  # fmt: skip
    tables: dict[str, list[dict[str, Any]]] = {
        "dirac_group_shares": [
            {"OwnerGroup": g, "JobShare": float(rng.choice((0, 100, 300, 1000))), "JobSharing": rng.random() < 0.4,
             "AllowBackgroundTQs": rng.random() < 0.4}
            for g in GROUPS if rng.random() < 0.7
        ],
        "dirac_site_mask": [{"Site": s, "Status": rng.choice(("Active", "Degraded", "Banned"))}
                            for s in SITES if rng.random() < 0.6],
        "dirac_running_limits": [],
        "dirac_running_counts": [],
        "dirac_matching_delays": [],
    }  # fmt: skip
    attrs = (("JobType", JOB_TYPES), ("OwnerGroup", GROUPS), ("Owner", OWNERS), ("Platform", PLATFORMS),
             ("Site", SITES), ("CPUTime", ("500", "5000")), ("JobGroup", ("g1",)))  # fmt: skip
    seen: set[tuple[str, str, str]] = set()
    for _ in range(rng.randint(0, 4)):
        attr, values = rng.choice(attrs)
        site, value = rng.choice(SITES[:2]), rng.choice(values)
        if (site, attr, value) in seen:
            continue
        seen.add((site, attr, value))
        ce = rng.choice(("", "", CES[0]))
        tables["dirac_running_limits"].append(
            {"Site": site, "GridCE": ce, "Attribute": attr, "Value": value, "Limit": rng.randint(0, 3)}
        )
        tables["dirac_running_counts"].append({"Site": site, "Attribute": attr, "Value": value,
                                               "Running": rng.randint(0, 3)})  # fmt: skip
    for _ in range(rng.randint(0, 2)):
        attr, values = rng.choice(attrs[:5])
        tables["dirac_matching_delays"].append({
            "Site": rng.choice(SITES[:2]), "Attribute": attr, "Value": rng.choice(values), "Delay": 60,
            "SinceLastMatch": rng.choice((None, 10.0, 100.0)),
        })  # fmt: skip
    parts = [f"Site={rng.choice((*SITES[:2], 'ANY'))}", f"CPUTime={rng.choice((400, 500, 4500, 5000, 60000, 300000))}"]
    if rng.random() < 0.4:
        parts.append(f"OwnerGroup={';'.join(rng.sample(GROUPS, rng.randint(1, 2)))}")
    if rng.random() < 0.3:
        parts.append(f"Owner={rng.choice(OWNERS)}")
    if rng.random() < 0.4:
        parts.append(f"GridCE={rng.choice(CES)}")
    if rng.random() < 0.5:
        parts.append(f"Platform={rng.choice((*PLATFORMS, 'any'))}")
    if rng.random() < 0.4:
        parts.append(f"JobType={rng.choice(JOB_TYPES)}")
    if rng.random() < 0.5:
        tags = rng.sample(TAGS, rng.randint(0, 3))
        parts.append(f"Tags={';'.join(tags)}")
        if tags and rng.random() < 0.4:
            parts.append(f"RequiredTags={tags[0]}")
    if rng.random() < 0.3:
        parts.append(f"NumberOfProcessors={rng.choice((1, 4, 8, 2000))}")
    if rng.random() < 0.2:
        parts.append(f"MaxRAM={rng.choice((2000, 4096, 2_000_000))}")
    if rng.random() < 0.1:
        parts.append(f"WholeNode={rng.choice(('true', 'false'))}")
    if rng.random() < 0.05 and not any(p.startswith("Tags=") for p in parts):
        parts.append("Tags=,RequiredTags=GPU")
    overrides: dict[str, Any] = {}
    if rng.random() < 0.3:
        overrides["DIRAC_MAX_JOBS_IN_TQ"] = rng.choice((1, 2, 3))
    if rng.random() < 0.3:
        overrides["DIRAC_CPU_BUCKETS"] = [360, 1800, 3600, 21600, 43200, 86400]
    if rng.random() < 0.3:
        overrides["DIRAC_CPU_ORDER"] = False
    if rng.random() < 0.3:
        overrides["DIRAC_JOB_WEIGHT"] = "RealPriority"
    if rng.random() < 0.3:
        overrides["DIRAC_JOBS_PER_TRY"] = rng.choice((1, 2))
    if rng.random() < 0.2:
        overrides[f"DIRAC_JOB_SHARE_{rng.choice(GROUPS)}"] = 50
    for key in ("DIRAC_CHECK_JOB_LIMITS", "DIRAC_CHECK_MATCHING_DELAY", "DIRAC_CHECK_SITE_MASK"):
        if rng.random() < 0.15:
            overrides[key] = False
    return jobs, tables, ",".join(parts), Config().with_overrides(overrides)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=10**9))
def test_vectorised_matcher_agrees_with_the_scalar_reference(seed: int) -> None:
    """Same task queues, priorities, failing rules per queue and selection probabilities as the reference."""
    jobs, tables, pilot, config = _world(seed)
    snap = snapshot(jobs, **tables)
    got = match(snap, pilot, config)
    tqs = ref.build(jobs, tables["dirac_group_shares"], config)
    assert len(got.tqs) == len(tqs)
    for i, t in enumerate(tqs):
        d = got.tqs.definition(i)
        assert (d["id"], d["Owner"], d["OwnerGroup"], d["CPUTime"], d["Jobs"]) == (
            t["id"], t["Owner"], t["OwnerGroup"], t["CPUTime"], len(t["jobs"]),
        )  # fmt: skip
        for f in ref.MULTI:
            assert set(d[f]) == set(t[f]), f
        if math.isnan(t["Priority"]):
            assert d["Priority"] is None
        else:
            assert d["Priority"] == pytest.approx(t["Priority"], rel=1e-9, abs=1e-9)
        assert got.tqs.job_id[got.tqs.jobs_of(i)].tolist() == sorted(j for j, _ in t["jobs"])
    if got.status == "refused":
        return
    out = got.to_dict()
    expected = ref.match(tqs, parse_pilot(pilot), tables, config)
    for row in out["taskqueues"]:
        assert [r["rule"] for r in row["reasons"]] == expected["reasons"][row["id"]], (pilot, row)
        assert row["probability"] == pytest.approx(expected["probability"][row["id"]], abs=1e-9)
    matched = out["matched"]
    if matched is not None:
        jobs = tqs[matched["taskqueue"] - 1]["jobs"]
        prios = [q for _, q in jobs]
        weights = [ref.real_priority(q) if config["DIRAC_JOB_WEIGHT"] == "RealPriority" else float(q) for q in prios]
        chances = ref.job_priority_chances(prios, weights)
        got = {p["priority"]: p["probability"] for p in matched["priorities"]}
        assert got == pytest.approx(chances, abs=1e-9)
        first = sorted(j for j, q in jobs if q == matched["job_priority"])[: config["DIRAC_JOBS_PER_TRY"]]
        assert matched["job"] in first
