"""Small DIRAC snapshots for the dirac tests: jobs and the other dirac_ tables from row dicts."""

from __future__ import annotations

from typing import Any

from brokerage.model.snapshot import GridSnapshot, empty_snapshot, frame
from brokerage.model.validation import validate

CERN = "LCG.CERN.cern"
CNAF = "LCG.CNAF.it"
RAL = "LCG.RAL.uk"


def job(job_id: int, owner: str = "alice", group: str = "lhcb_user", cpu: int = 100, **kw: Any) -> dict[str, Any]:
    """One dirac_jobs row (Priority 1, Waiting unless told)."""
    return {"JobID": job_id, "Owner": owner, "OwnerGroup": group, "CPUTime": cpu, **kw}


def snapshot(jobs: list[dict[str, Any]], **tables: list[dict[str, Any]]) -> GridSnapshot:
    """A validated snapshot holding JOBS as dirac_jobs and the other dirac_ TABLES given."""
    doc = {"taken_at": "2026-11-20T12:00:00Z", "dirac_jobs": jobs, **tables}
    problems = validate(doc)
    assert not problems, problems
    snap = empty_snapshot()
    return snap.replace(dirac_jobs=frame("dirac_jobs", jobs), **{k: frame(k, v) for k, v in tables.items()})
