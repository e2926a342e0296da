"""Simulation page: headline comparison, per-share and per-queue series, and timeout events, from a run's result."""

from __future__ import annotations

import re
from typing import Any

from app.viewmodels.common import PALETTE
from brokerage.sim.events import RULES
from brokerage.sim.output import NO_NUCLEUS

HEADLINE = (
    ("jobs_finished", "jobs finished"),
    ("jobs_failed", "jobs failed"),
    ("jobs_closed_reassigned", "jobs closed (reassigned)"),
    ("mean_queued_minutes", "mean time queued, min"),
    ("jobs_generated", "jobs generated"),
    ("tasks_completed", "tasks completed"),
    ("tasks_pending", "tasks pending at the end"),
    ("tasks_throttled", "tasks throttled at the end"),
    ("memory_increases", "inputs given more memory on retry"),
)
# rules that close or fail jobs (the operator's "what timed out and why"), in copyArchive's order
TIMEOUT_RULES = ("H1", "H8", "H6", "K1", "K2", "F", "R5", "R6", "R7", "R8", "R9", "K3", "A", "K9", "K10")
DASH = ("solid", "dot")
TOP_QUEUES = 10


def _fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:,.1f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def headline_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per headline figure, a column per run, and the change when two runs are compared.

    Usage: ``headline_rows(result)[0]["figure"] == "jobs finished"``
    """
    labels, runs = result["labels"], result["runs"]
    rows = []
    for key, name in HEADLINE:
        row: dict[str, Any] = {"figure": name}
        values = [r["headline"].get(key) for r in runs]
        for label, v in zip(labels, values, strict=True):
            row[label] = _fmt(v)
        if len(values) == 2 and all(isinstance(v, int | float) for v in values):
            row["change"] = (
                f"{values[1] - values[0]:+,.1f}" if isinstance(values[0], float) else f"{values[1] - values[0]:+,}"
            )
        rows.append(row)
    throttled = [set(r["headline"]["throttled_work_queues"]) for r in runs]
    row = {"figure": "work queues throttled at some point"}
    for label, t in zip(labels, throttled, strict=True):
        row[label] = str(len(t))
    if len(throttled) == 2:
        only = sorted(throttled[1] - throttled[0])
        gone = sorted(throttled[0] - throttled[1])
        row["change"] = (
            "; ".join(
                x for x in (("+ " + ", ".join(only)) if only else "", ("− " + ", ".join(gone)) if gone else "") if x
            )
            or "same"
        )
    rows.append(row)
    return rows


def _layout(title: str, height: int = 320, **extra: Any) -> dict[str, Any]:
    return {
        "height": height, "margin": {"l": 50, "r": 10, "t": 40, "b": 45}, "title": {"text": title, "x": 0, "font": {"size": 13}},
        "template": {"layout": {"paper_bgcolor": "white", "plot_bgcolor": "white", "font": {"color": "#2a3f5f"}}},
        "xaxis": {"title": {"text": "simulated hours"}, "gridcolor": "#eef0f3"}, "yaxis": {"gridcolor": "#eef0f3", "rangemode": "tozero"},
        "legend": {"orientation": "v", "x": 1.02, "y": 1, "font": {"size": 11}}, "font": {"size": 12}, **extra,
    }  # fmt: skip


GROUPS = {"shares": "global share", "work_queues": "work queue", "nuclei": "nucleus"}
TOP_SERIES = 10  # lines per chart: the groups with the most jobs


def share_figure(result: dict[str, Any], metric: str = "running", group: str = "shares") -> dict[str, Any]:
    """METRIC per global share (or per work queue, per nucleus: GROUP) over time, the TOP_SERIES largest; a what-if
    run is dotted beside the stored one in the same colour.

    Usage: ``share_figure(result, "activated")``
    """
    data = []
    runs, labels = result["runs"], result["labels"]
    series = {k: v for k, v in runs[0].get(group, {}).items() if k != NO_NUCLEUS}  # no_nucleus_figure draws it
    names = sorted(series, key=lambda s: -max(series[s][metric] or [0]))[:TOP_SERIES]
    for i, name in enumerate(names):
        for label, run, dash in zip(labels, runs, DASH, strict=False):
            values = run.get(group, {}).get(name)
            if values is None:
                continue
            data.append({
                "type": "scatter", "mode": "lines", "x": run["times_h"], "y": values[metric],
                "name": name, "legendgroup": name, "showlegend": label == labels[0],
                "line": {"color": PALETTE[i % len(PALETTE)], "dash": dash, "width": 2},
                "hovertemplate": f"{name} {label}: %{{y:,}} {metric} at %{{x:.1f}} h<extra></extra>",
            })  # fmt: skip
    what = {"running": "Running jobs", "activated": "Queued (activated) jobs"}[metric]
    suffix = " (solid: stored, dotted: what-if)" if len(runs) > 1 else ""
    more = f", the {TOP_SERIES} largest" if len(series) > TOP_SERIES else ""
    return {"data": data, "layout": _layout(f"{what} per {GROUPS[group]}{more}{suffix}", 400)}


def no_nucleus_figure(result: dict[str, Any], metric: str = "running") -> dict[str, Any]:
    """METRIC of the jobs with no nucleus (analysis jobs, and jobs the snapshot held) over time, apart from the
    per-nucleus chart, whose lines it would flatten; a what-if run dotted.

    Usage: ``no_nucleus_figure(result)["data"][0]["y"]``
    """
    data = []
    for label, run, dash in zip(result["labels"], result["runs"], DASH, strict=False):
        values = run.get("nuclei", {}).get(NO_NUCLEUS)
        if values is None:
            continue
        data.append({"type": "scatter", "mode": "lines", "x": run["times_h"], "y": values[metric], "name": label,
                     "line": {"color": "#6b7280", "dash": dash, "width": 2},
                     "hovertemplate": f"{label}: %{{y:,}} {metric} at %{{x:.1f}} h<extra></extra>"})  # fmt: skip
    what = {"running": "Running jobs", "activated": "Queued (activated) jobs"}[metric]
    title = f"{what} with no nucleus (analysis jobs, and jobs from the snapshot), apart from the nuclei"
    if not data:
        title = "Every job of the run had a nucleus"
    return {"data": data, "layout": _layout(title, 240)}


QUEUE_COLUMNS = [{"field": "queue", "minWidth": 200, "pinned": "left"}] + [
    {"field": f} for f in ("queued start", "queued end", "running start", "running end", "finished", "failed", "closed",
                           "load change")
]  # fmt: skip


def event_columns(labels: list[str]) -> list[dict[str, Any]]:
    """Columns of the rule table: the rule, its agent, the move, what it checks (wide), a count per run."""
    return [{"field": "rule", "maxWidth": 90}, {"field": "agent", "minWidth": 170}, {"field": "move", "minWidth": 170},
            {"field": "what", "minWidth": 420, "tooltipField": "what"}] + [{"field": x, "maxWidth": 120} for x in labels]  # fmt: skip


def queue_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The queues whose load (activated + running) changed most over the last run: start, end, and what ended there.

    Usage: ``queue_rows(result)[0]["queue"]``
    """
    run = result["runs"][-1]
    rows = []
    for name, m in run["queues"].items():
        act, runn = m["activated"], m["running"]
        rows.append({
            "queue": name, "queued start": act[0], "queued end": act[-1], "running start": runn[0],
            "running end": runn[-1], "finished": m["finished"][-1], "failed": m["failed"][-1],
            "closed": m["closed"][-1], "load change": (act[-1] + runn[-1]) - (act[0] + runn[0]),
        })  # fmt: skip
    rows.sort(key=lambda r: -abs(r["load change"]))
    return rows


def events_figure(result: dict[str, Any], index: int = -1) -> dict[str, Any]:
    """Jobs closed or failed per simulated hour by the timeout and reassignment rule that did it (run INDEX).

    Usage: ``events_figure(result)["data"][0]["name"]``
    """
    run = result["runs"][index]
    hours = max(1, int(-(-run["headline"]["hours"] // 1)))
    counts: dict[str, list[int]] = {}
    for e in run["events"]:
        if e["rule"] in TIMEOUT_RULES:
            counts.setdefault(e["rule"], [0] * hours)[min(int(e["bucket"]), hours - 1)] += int(e["count"])
    data = [
        {"type": "bar", "x": [h + 0.5 for h in range(hours)], "y": counts[r], "name": f"{r}: {RULES[r][0]}",
         "marker": {"color": PALETTE[i % len(PALETTE)]},
         "hovertemplate": f"{r} ({RULES[r][0]}): %{{y:,}} jobs in hour %{{x:.0f}}<extra></extra>"}
        for i, r in enumerate(x for x in TIMEOUT_RULES if x in counts)
    ]  # fmt: skip
    label = result["labels"][index]
    title = f"Jobs closed or failed by timeout and reassignment rules, per hour ({label})"
    if not data:
        title = f"No job timed out or was reassigned ({label})"
    return {"data": data, "layout": _layout(title, 300, barmode="stack")}


def event_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Every rule that moved jobs or tasks, with its counts per run and what the rule is.

    Usage: ``event_rows(result)[0]["rule"]``
    """
    totals: dict[tuple[str, str, str], list[int]] = {}
    n = len(result["runs"])
    for i, run in enumerate(result["runs"]):
        for e in run["events"]:
            key = (e["rule"], e["from"], e["to"])
            totals.setdefault(key, [0] * n)[i] += int(e["count"])
    rows = []
    for (rule, old, new), values in totals.items():
        who, text = RULES.get(rule, (rule, ""))
        row: dict[str, Any] = {"rule": rule, "agent": who, "move": f"{old} → {new}",
                               "what": re.sub(r"\{[^}]*\}", "…", text)}  # fmt: skip
        for label, v in zip(result["labels"], values, strict=True):
            row[label] = v
        rows.append(row)
    rows.sort(key=lambda r: -max(r[label] for label in result["labels"]))
    return rows


def task_change_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Every task status change of the last run with its cause, newest first (filter by task to read one history).

    Usage: ``task_change_rows(result)[0]["cause"]``
    """
    run = result["runs"][-1]
    return sorted(run.get("task_changes", []), key=lambda r: (-r["time_h"], r["task"]))


TASK_COLUMNS = [{"field": "time_h", "headerName": "hour", "maxWidth": 100}, {"field": "task", "maxWidth": 130},
                {"field": "from", "maxWidth": 130}, {"field": "to", "maxWidth": 130},
                {"field": "cause", "minWidth": 480, "tooltipField": "cause"}]  # fmt: skip


COMMAND_COLUMNS = [{"field": "time_h", "headerName": "hour", "maxWidth": 100}, {"field": "task", "maxWidth": 130},
                   {"field": "command", "maxWidth": 130}, {"field": "outcome", "maxWidth": 120},
                   {"field": "why", "headerName": "what it did, or the rule that refused it", "flex": 1, "minWidth": 360}]  # fmt: skip


def command_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The task commands of the last run, applied or refused, with what each did or the rule that refused it.

    Usage: ``command_rows(result)[0]["outcome"] in ("applied", "refused")``
    """
    return list(result["runs"][-1].get("commands", []))


def _top(counts: dict[str, int], n: int = 4) -> str:
    top = sorted(counts.items(), key=lambda kv: -kv[1])[:n]
    more = f" and {len(counts) - n} more" if len(counts) > n else ""
    return ", ".join(f"{k} {v:,}" for k, v in top) + more


def retry_summary(result: dict[str, Any]) -> str:
    """What the retry module card holds, in one sentence (drawn before the table is).

    Usage: ``retry_summary(result)  # '3 failed jobs went through the retry module: increase_max_failure 2, ...'``
    """
    rows = retry_rows(result)
    if not rows:
        return "No failed job had an error the retry rules or error classes act on."
    acts: dict[str, int] = {}
    for r in rows:
        acts[r["action"]] = acts.get(r["action"], 0) + int(r["jobs"])
    return (f"{sum(acts.values()):,} failed jobs with {len(rows)} error codes went through the retry module: "
            f"{_top(acts)} (per error source and code below).")  # fmt: skip


def task_change_summary(result: dict[str, Any]) -> str:
    """What the task status card holds: how many changes on how many tasks, and the statuses they went to.

    Usage: ``task_change_summary(result)``
    """
    rows = result["runs"][-1].get("task_changes", [])
    if not rows:
        return "No task changed status in this run."
    to: dict[str, int] = {}
    for r in rows:
        to[r["to"]] = to.get(r["to"], 0) + 1
    tasks = len({r["task"] for r in rows})
    return f"{len(rows):,} status changes on {tasks:,} tasks; to {_top(to, 6)} (each with its cause below)."


def event_summary(result: dict[str, Any]) -> str:
    """What the rules card holds: how many rules moved jobs or tasks, the busiest first.

    Usage: ``event_summary(result)``
    """
    rows = event_rows(result)
    if not rows:
        return "No rule moved a job or a task in this run."
    last = result["labels"][-1]
    return (f"{len(rows)} rules moved jobs or tasks ({last}): "
            f"{_top({r['rule'] + ' ' + r['move']: int(r[last]) for r in rows}, 4)}.")  # fmt: skip


RETRY_COLUMNS = [{"field": "source", "maxWidth": 140}, {"field": "code", "maxWidth": 100},
                 {"field": "action", "headerName": "what the retry module did", "flex": 1, "minWidth": 300},
                 {"field": "jobs", "maxWidth": 120}]  # fmt: skip


def retry_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Failed jobs of the last run by error (source, code) and what the retry module did with their inputs.

    Usage: ``retry_rows(result)[0]["action"]``
    """
    return list(result["runs"][-1].get("retries", []))


DATASET_GROUPS = (
    ("input files", "in", ("nFiles", "ready", "running", "finished", "failed")),
    ("output files", "out", ("nFiles", "defined", "running", "prepared", "finished", "failed")),
    ("events (event service)", "ev", ("nEvents", "ready", "running", "finished", "done", "fatal")),
)


def dataset_columns() -> list[dict[str, Any]]:
    """Task, then one column group per dataset: its status and its files (events) per status."""
    cols: list[dict[str, Any]] = [{"field": "task", "pinned": "left", "maxWidth": 110},
                                  {"field": "status", "headerName": "task status", "maxWidth": 130}]  # fmt: skip
    for title, prefix, names in DATASET_GROUPS:
        children = [{"field": f"{prefix}_status", "headerName": "dataset", "maxWidth": 110}] if prefix != "ev" else []
        children += [{"field": f"{prefix}_{n}", "headerName": n, "maxWidth": 100, "type": "numericColumn"}
                     for n in names]  # fmt: skip
        cols.append({"headerName": title, "children": children})
    return cols


def dataset_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Per task the last run touched: its input and output datasets' statuses and files per status, events per
    status for event service tasks (each group adds up to its nFiles or nEvents).

    Usage: ``dataset_rows(result)[0]["in_finished"]``
    """
    run = result["runs"][-1]
    status = {int(k): v["status"] for k, v in run.get("tasks", {}).items()}
    return [{"task": int(k), "status": status.get(int(k), ""), **v} for k, v in run.get("datasets", {}).items()]


HISTORY_COLUMNS = [{"field": "time_h", "headerName": "hour", "maxWidth": 100}, {"field": "from", "maxWidth": 120},
                   {"field": "to", "maxWidth": 120}, {"field": "cause", "flex": 1, "minWidth": 420,
                                                      "tooltipField": "cause"}]  # fmt: skip
