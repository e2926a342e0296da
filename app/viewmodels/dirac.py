"""DIRAC page: pilot strings from CEs, what-if edits and permalinks, task-queue rows and figures from a match."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

import pandas as pd
import plotly.graph_objects as go

from app.viewmodels.common import PALETTE, empty_figure, style
from brokerage.dirac.buckets import DIRAC_BUCKETS, SEED_BUCKETS
from brokerage.dirac.pilot import format_pilot
from brokerage.model.gdpconfig import Config, ConfigError, Edits, lookup_param, parse_edits

PATH = "/dirac"
DEFAULT_PILOT = "Site=LCG.CERN.cern,CPUTime=86400,Platform=x86_64-el9"
RESERVED = ("pilot", "seed")  # query parameters that are not gdpconfig keys
SHARE_PREFIX = "DIRAC_JOB_SHARE_"
VERDICT_COLOURS = {"matched": "#16a34a", "eligible": PALETTE[0], "outranked": "#a16207", "excluded": "#6b7280"}
SETS = ("Sites", "BannedSites", "GridCEs", "Platforms", "JobTypes", "Tags")


def pilot_of_ce(row: Mapping[str, Any]) -> str:
    """The pilot string a pilot at this dirac_ces row sends (its Site, GridCE, Platform, CPUTime, tags, size)."""
    pilot: dict[str, Any] = {"Site": row["Site"], "GridCE": row["GridCE"], "CPUTime": int(row["CPUTime"])}
    if row.get("Platform"):
        pilot["Platform"] = row["Platform"]
    if row.get("Tags"):
        pilot["Tags"] = list(row["Tags"])
    if row.get("RequiredTags"):
        pilot["RequiredTags"] = list(row["RequiredTags"])
    if int(row.get("NumberOfProcessors") or 1) > 1:
        pilot["NumberOfProcessors"] = int(row["NumberOfProcessors"])
    if int(row.get("MaxRAM") or 0) > 0:
        pilot["MaxRAM"] = int(row["MaxRAM"])
    return format_pilot(pilot)


def ce_options(ces: pd.DataFrame) -> list[dict[str, str]]:
    """Dropdown options "Site · CE (queue)" whose values are the pilot strings of the CEs."""
    out = []
    for row in ces.to_dict("records"):
        queue = f" ({row['Queue']})" if row.get("Queue") else ""
        out.append({"label": f"{row['Site']} · {row['GridCE']}{queue}", "value": pilot_of_ce(row)})
    return out


def query_edits(query: Mapping[str, str]) -> Edits:
    """The DIRAC_ gdpconfig edits of a page URL or API query, parsed and checked (every other parameter ignored)."""
    return parse_edits({k: v for k, v in query.items() if k not in RESERVED and k.startswith("DIRAC_")})


def overrides_from_query(query: Mapping[str, str]) -> tuple[dict[str, Any], list[str]]:
    """The DIRAC_ gdpconfig overrides of a page URL, and a sentence per refused one."""
    parsed = query_edits(query)
    return parsed.overrides, list(parsed.errors.values())


def edits(
    buckets: str | None,
    cpu_order: bool | None,
    per_try: Any,
    job_weight: str | None,
    shares: Mapping[str, Any],
    base: Config,
) -> tuple[dict[str, Any], list[str]]:
    """Overrides from the page's editors (only values that differ from BASE), and a sentence per refused one."""
    wanted: dict[str, Any] = {
        "DIRAC_CPU_BUCKETS": (buckets or "").strip() or None,
        "DIRAC_CPU_ORDER": cpu_order,
        "DIRAC_JOBS_PER_TRY": per_try,
        "DIRAC_JOB_WEIGHT": job_weight,
        **{SHARE_PREFIX + g: v for g, v in shares.items()},
    }
    parsed = parse_edits({k: v for k, v in wanted.items() if v is not None and not (isinstance(v, str) and v == "")})
    out = {k: v for k, v in parsed.overrides.items() if k.startswith(SHARE_PREFIX) or v != base.get(k)}
    return out, list(parsed.errors.values())


def group_share_rows(shares: pd.DataFrame, config: Config) -> list[dict[str, Any]]:
    """Per group: its JobShare in the snapshot and the effective one under CONFIG."""
    rows = []
    for r in shares.to_dict("records"):
        key = SHARE_PREFIX + r["OwnerGroup"]
        set_here = key in config.overrides or key in config.stored
        rows.append({"group": r["OwnerGroup"], "share": float(config[key]) if set_here else float(r["JobShare"]),
                     "stored": float(r["JobShare"]), "JobSharing": bool(r["JobSharing"])})  # fmt: skip
    return rows


def permalink(pilot: str | None, seed: int | None, overrides: Mapping[str, Any]) -> str:
    """The page URL of a pilot, a seed and DIRAC_ overrides."""
    query: dict[str, Any] = {}
    if pilot:
        query["pilot"] = pilot
    if seed:
        query["seed"] = seed
    for k, v in sorted(overrides.items()):
        query[k] = json.dumps(v) if isinstance(v, list) else ("true" if v is True else "false" if v is False else v)
    return PATH + ("?" + urlencode(query) if query else "")


def bucket_presets() -> dict[str, str]:
    """Button label -> bucket list text."""
    return {"seed buckets": json.dumps(list(SEED_BUCKETS)), "DIRAC's 13 buckets": json.dumps(list(DIRAC_BUCKETS))}


def tq_rows(result: Mapping[str, Any], definitions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One grid row per task queue: verdict, chance, Priority, jobs and the requirement sets, best chance first."""
    by_id = {d["id"]: d for d in definitions}
    rows = []
    for t in result["taskqueues"]:
        d = by_id[t["id"]]
        row = {"id": t["id"], "verdict": t["verdict"], "probability": round(t["probability"], 6),
               "Priority": t["priority"], "jobs": t["jobs"], "CPUTime": t["CPUTime"], "Owner": t["Owner"],
               "OwnerGroup": t["OwnerGroup"], "rules": ", ".join(r["rule"] for r in t["reasons"]),
               "why": t["sentence"]}  # fmt: skip
        for s in SETS:
            row[s] = ", ".join(d[s])
        rows.append(row)
    order = {"matched": 0, "eligible": 1, "outranked": 2, "excluded": 3, "refused": 4}
    rows.sort(key=lambda r: (order[r["verdict"]], -r["probability"], r["id"]))
    return rows


def probability_figure(result: Mapping[str, Any], top: int = 25) -> go.Figure:
    """Bar chart of the task queues that could be drawn, by probability (the matched one highlighted)."""
    drawn = [t for t in result["taskqueues"] if t["verdict"] in ("matched", "eligible")]
    if not drawn:
        return empty_figure(result.get("message") or "no task queue can be matched")
    drawn.sort(key=lambda t: -t["probability"])
    drawn = drawn[:top]
    fig = go.Figure(
        go.Bar(
            x=[f"TQ {t['id']}" for t in drawn],
            y=[t["probability"] for t in drawn],
            marker_color=[VERDICT_COLOURS[t["verdict"]] for t in drawn],
            customdata=[[t["priority"], t["OwnerGroup"], t["Owner"]] for t in drawn],
            hovertemplate="%{x}<br>P=%{y:.4f}<br>Priority %{customdata[0]}<br>%{customdata[2]} / %{customdata[1]}"
            "<extra></extra>",
        )
    )
    return style(fig, height=260, yaxis_title="probability of being matched", xaxis_type="category")


def rule_counts(result: Mapping[str, Any]) -> dict[str, int]:
    """How many task queues fail each rule (every failing rule counted, not only the first)."""
    counts: dict[str, int] = {}
    for t in result["taskqueues"]:
        for r in t["reasons"]:
            counts[r["rule"]] = counts.get(r["rule"], 0) + 1
    return counts


def summary(result: Mapping[str, Any]) -> str:
    """One sentence: what the pilot gets."""
    if result["status"] == "refused":
        return f"The matcher refuses the request: {result['message']}."
    m = result["matched"]
    if m is None:
        return f"{result['message']}: no task queue passes every rule."
    n = sum(t["verdict"] in ("matched", "eligible") for t in result["taskqueues"])
    return (f"Matched task queue {m['taskqueue']} (chance {m['probability']:.4f} among {n}) and job {m['job']} "
            f"(user priority {m['job_priority']}, chance {m['job_probability']:.4f} inside the queue).")  # fmt: skip


def known_key(key: str) -> bool:
    """True when KEY is a DIRAC_ gdpconfig key (or a DIRAC_JOB_SHARE_<group> member)."""
    try:
        return lookup_param(key).app == "dirac"
    except ConfigError:
        return False
