"""Ours against DIRAC's TaskQueueDB: the task queues of a grid, and per pilot the task queues it can match.

Two comparisons, in the crosscheck's row shape (``compare.QueueRow``; names are ``TQ<id>``, DIRAC's side sits in
the ``jedi`` fields):

* ``dirac_tq``, one per grid: each task queue's verdict (``+use`` with jobs, ``empty``, ``absent``), its definition
  (Owner, OwnerGroup, CPUTime bucket, the sets of Sites, GridCEs, BannedSites, Platforms, JobTypes, Tags), its jobs,
  and its Priority as the weight (relative 1e-6: DIRAC stores Priority in a FLOAT column, single precision).
* ``dirac``, one per pilot: the request (refused or not), the resource DIRAC's Matcher built (Tag, RequiredTag,
  JobType), and per task queue whether the pilot can match it: ours ``+use`` when it passes every rule but
  ``Empty`` (DIRAC's matchAndGetTaskQueue returns empty task queues too; matchAndGetJob then finds no job in them),
  else ``-<first failing rule>``; DIRAC's ``+use`` when matchAndGetTaskQueue returns it, else ``-excluded`` (DIRAC
  does not say why). The weight of a ``+use`` row is the task queue's Priority (the draw's weight).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from brokerage.crosscheck.compare import ABSENT, USE, QueueRow, TaskComparison
from brokerage.crosscheck.verdicts import Verdicts
from brokerage.dirac.matcher import DiracMatch
from brokerage.dirac.rules import RULE_NAMES
from brokerage.dirac.taskqueues import MULTI_FIELDS, TaskQueues

PRIORITY_REL_TOL = 1e-6
EMPTY = "empty"
DIRAC_OUT = "-excluded"
BEFORE_EMPTY = np.array([r != "Empty" for r in RULE_NAMES])


def _close(a: float, b: float) -> bool:
    return a == b or math.isclose(a, b, rel_tol=PRIORITY_REL_TOL, abs_tol=0.0)


def our_queues(tqs: TaskQueues) -> dict[str, dict[str, Any]]:
    """Our task queues by name: definition, jobs, Priority (None when empty)."""
    out = {}
    for row in range(len(tqs)):
        d = tqs.definition(row)
        d["job_ids"] = sorted(int(j) for j in tqs.job_id[tqs.jobs_of(row)])
        out[f"TQ{d['id']}"] = d
    return out


def their_queues(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """DIRAC's task queues by name, with the ids of their jobs."""
    out = {}
    for tq_id, d in result["taskqueues"].items():
        out[f"TQ{tq_id}"] = {**d, "job_ids": []}
    for job, tq_id in sorted(result["jobs"].items(), key=lambda kv: int(kv[0])):
        out[f"TQ{tq_id}"]["job_ids"].append(int(job))
    return out


def _definition(d: dict[str, Any]) -> str:
    sets = ", ".join(f"{f}={sorted(d.get(f) or [])}" for f in MULTI_FIELDS if d.get(f))
    return f"{d['Owner']}@{d['OwnerGroup']} CPUTime={d['CPUTime']}" + (f" {sets}" if sets else "")


def _state(d: dict[str, Any] | None) -> str:
    if d is None:
        return ABSENT
    return USE if d["job_ids"] else EMPTY


def compare_queues(grid: int, tqs: TaskQueues, result: dict[str, Any], ms: tuple[float, float]) -> TaskComparison:
    """The task queues of one grid, name by name: state, definition, jobs, Priority.

    Usage: ``c = compare_queues(0, match.tqs, out["grids"][0], (3.0, 700.0)); c.identical``
    """
    ours, theirs = our_queues(tqs), their_queues(result)
    v_ours = Verdicts(
        ok=True, ms=ms[0], candidates={k: float(d["Priority"] or 0) for k, d in ours.items() if d["job_ids"]}
    )
    v_dirac = Verdicts(ok=True, ms=ms[1], candidates={k: d["Priority"] for k, d in theirs.items() if d["job_ids"]})
    out = TaskComparison(grid, "dirac_tq", v_ours, v_dirac)
    for name in sorted(set(ours) | set(theirs), key=lambda n: int(n[2:])):
        a, b = ours.get(name), theirs.get(name)
        row = QueueRow(name, _state(a), _state(b))
        row.ours_reason = _definition(a) if a else ""
        row.jedi_reason = _definition(b) if b else ""
        if row.ours != row.jedi:
            row.differs = "verdict"
        elif a is not None and b is not None:
            if row.ours_reason != row.jedi_reason:
                row.differs = "definition"
            elif a["job_ids"] != b["job_ids"]:
                row.differs = "jobs"
                row.ours_reason += f" jobs {a['job_ids']}"
                row.jedi_reason += f" jobs {b['job_ids']}"
            elif row.ours == USE:
                row.ours_weight, row.jedi_weight = float(a["Priority"]), float(b["Priority"])
                row.differs = "" if _close(row.ours_weight, row.jedi_weight) else "weight"
        out.rows.append(row)
    return out


def _tags(values: Any) -> list[str]:
    return sorted(values or [])


def _resource_rows(m: DiracMatch, theirs: dict[str, Any]) -> list[QueueRow]:
    """The normalised resource: tags offered, tags required, job type (Test at a masked site)."""
    res = theirs.get("resource", {})
    pairs = {
        "resource:Tag": (_tags(m.resource.tags), _tags(res.get("Tag"))),
        "resource:RequiredTag": (_tags(m.resource.required_tags), _tags(res.get("RequiredTag"))),
        "resource:JobType": (m.resource.job_type or "", res.get("JobType") or ""),
    }
    rows = []
    for name, (a, b) in pairs.items():
        row = QueueRow(name, str(a), str(b))
        if a != b:
            row.differs = "resource"
        rows.append(row)
    return rows


def compare_pilot(task: int, m: DiracMatch, theirs: dict[str, Any], ms: float, queues: dict[str, dict[str, Any]]) -> TaskComparison:  # fmt: skip
    """One pilot: the request's fate, the normalised resource, and per task queue in or out of the match (QUEUES:
    DIRAC's task queues by name, ``their_queues``; an empty task queue both sides match is ``+empty``, no weight).

    Usage: ``compare_pilot(1001, match(snap, pilot, cfg), out["grids"][0]["pilots"][1], 2.5, their_queues(grid))``
    """
    tqs = m.tqs
    dirac_in = {f"TQ{t}" for t in theirs.get("taskqueues", [])}
    ours_in = ~(m.fails[:, BEFORE_EMPTY].any(axis=1)) if m.status != "refused" else np.zeros(len(tqs), dtype=bool)
    out = TaskComparison(task, "dirac", Verdicts(ok=m.status != "refused", ms=ms),
                         Verdicts(ok=theirs["status"] != "refused", ms=float(theirs.get("ms", 0.0))))  # fmt: skip
    request = QueueRow("request", "refused" if m.status == "refused" else USE,
                       "refused" if theirs["status"] == "refused" else USE,
                       ours_reason=m.message if m.status == "refused" else "",
                       jedi_reason=theirs.get("message", ""))  # fmt: skip
    request.differs = "verdict" if request.ours != request.jedi else ""
    out.rows.append(request)
    if m.status == "refused" or theirs["status"] == "refused":
        return out
    out.rows += _resource_rows(m, theirs)
    reasons = m.reasons()
    names = [f"TQ{int(t)}" for t in tqs.tq_id]
    for i, name in enumerate(names):
        first = next((r["rule"] for r in reasons[i] if r["rule"] != "Empty"), "")
        row = QueueRow(name, _in(bool(ours_in[i]), bool(tqs.njobs[i]), f"-{first}"),
                       _in(name in dirac_in, bool(queues.get(name, {}).get("job_ids")), DIRAC_OUT),
                       ours_reason="; ".join(r["text"] for r in reasons[i]))  # fmt: skip
        if row.ours.startswith("+") != row.jedi.startswith("+"):
            row.differs = "verdict"
        elif row.ours == USE and row.jedi == USE:
            row.ours_weight, row.jedi_weight = float(tqs.priority[i]), float(queues[name]["Priority"])
            out.ours.candidates[name], out.jedi.candidates[name] = row.ours_weight, row.jedi_weight
            row.differs = "" if _close(row.ours_weight, row.jedi_weight) else "weight"
        out.rows.append(row)
    for name in sorted(dirac_in - set(names), key=lambda n: int(n[2:])):  # a task queue only DIRAC has
        out.rows.append(QueueRow(name, ABSENT, USE, differs="verdict"))
    return out


def _in(matched: bool, has_jobs: bool, out_code: str) -> str:
    if not matched:
        return out_code
    return USE if has_jobs else "+empty"
