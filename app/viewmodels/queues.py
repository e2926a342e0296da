"""Queues page: queue table rows, task picker options and the explained job brokerage of one task."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from app.viewmodels.common import PALETTE, num, plain, records
from brokerage.model.explain import Decision
from brokerage.model.snapshot import GridSnapshot
from brokerage.model.tables import DEFAULT_VO
from brokerage.model.waiting import WAITING_TASK_STATUSES
from brokerage.report.svg import text_px

QUEUE_COLUMNS = [
    "panda_queue", "atlas_site", "cloud", "type", "status", "corecount", "maxrss", "maxtime", "maxwdir",
    "capability", "jobseed", "npilot", "trr",
]  # fmt: skip
COUNT_COLUMNS = ["running", "activated", "assigned", "defined", "starting", "transferring", "holding"]


def queue_rows(snap: GridSnapshot) -> list[dict[str, Any]]:
    """One row per queue: CRIC attributes, the site's role, the VOs whose jobs are there (``vo``, atlas first) and
    job counts per status over all shares and VOs (the queue page breaks them down per VO)."""
    q = snap.queues
    if q.empty:
        return []
    df = q[[c for c in QUEUE_COLUMNS if c in q.columns]].copy()
    roles = dict(zip(snap.sites["site_name"], snap.sites["role"], strict=False))
    df.insert(3, "site_role", df["atlas_site"].map(roles).fillna(""))
    jc = snap.job_counts
    df.insert(4, "vo", df["panda_queue"].map(queue_vos(jc)).fillna(""))
    if not jc.empty:
        piv = jc.pivot_table(index="panda_queue", columns="jobstatus", values="njobs", aggfunc="sum", fill_value=0)
        for c in COUNT_COLUMNS:
            df[c] = df["panda_queue"].map(piv[c] if c in piv.columns else {}).fillna(0).astype(int)
    else:
        for c in COUNT_COLUMNS:
            df[c] = 0
    return records(df)


def queue_vos(jc: pd.DataFrame) -> dict[str, str]:
    """Per queue, the VOs with jobs there ('atlas, wlcg'; atlas first, then by name); rows naming none are atlas'.

    Usage: ``queue_vos(snap.job_counts)["CERN_MCORE"]``
    """
    if jc.empty:
        return {}
    vo = jc["vo"].fillna(DEFAULT_VO) if "vo" in jc else pd.Series(DEFAULT_VO, index=jc.index)
    d = pd.DataFrame({"q": jc["panda_queue"], "vo": vo})[jc["njobs"].to_numpy() > 0].drop_duplicates()
    order = lambda v: (v != DEFAULT_VO, v)  # noqa: E731
    return {str(q): ", ".join(sorted(g["vo"].astype(str), key=order)) for q, g in d.groupby("q")}


def queue_column_defs() -> list[dict[str, Any]]:
    """AG Grid columns for the queue table; the queue name links to its detail page."""
    defs: list[dict[str, Any]] = [
        {
            "field": "panda_queue",
            "headerName": "queue",
            "pinned": "left",
            "cellRenderer": "Link",
            "cellRendererParams": {"prefix": "/queue?name="},
            "minWidth": 190,
        },
        {"field": "atlas_site", "headerName": "site", "minWidth": 130},
    ]
    for c in ["cloud", "site_role", "type", "status"]:
        defs.append({"field": c, "filter": "agTextColumnFilter", "minWidth": 110})
    defs.insert(4, {"field": "vo", "headerName": "VO", "filter": "agTextColumnFilter", "minWidth": 90,
                    "headerTooltip": "the VOs whose jobs are at the queue; the job counts sum them (the queue page "
                                     "shows each VO's)"})  # fmt: skip
    for c in ["corecount", "maxrss", "maxtime", "maxwdir", "npilot", "trr", *COUNT_COLUMNS]:
        defs.append({"field": c, "filter": "agNumberColumnFilter", "type": "numericColumn", "maxWidth": 120})
    defs += [{"field": "capability", "maxWidth": 110}, {"field": "jobseed", "maxWidth": 100}]
    return defs


def task_label(row: dict[str, Any]) -> str:
    """'123 · ready · managed · taskname' for the task picker."""
    name = str(row.get("taskname") or "")
    short = name if len(name) <= 60 else name[:57] + "…"
    return f"{int(row['jeditaskid'])} · {row.get('status')} · {row.get('prodsourcelabel')} · {short}"


def task_options(snap: GridSnapshot, limit: int = 5000) -> list[dict[str, Any]]:
    """Dropdown options for tasks: waiting tasks first (those brokerage acts on), then the rest, by id."""
    t = snap.tasks
    if t.empty:
        return []
    waiting = t["status"].isin(WAITING_TASK_STATUSES)
    ordered = pd.concat([t[waiting], t[~waiting]]).head(limit)
    return [{"label": task_label(r), "value": int(r["jeditaskid"])} for r in ordered.to_dict("records")]


def search_tasks(snap: GridSnapshot, text: str, keep: Any = None, limit: int = 50) -> list[dict[str, Any]]:
    """Task options whose label (id, status, label, name, user) contains every word of TEXT (waiting tasks first),
    plus the option of task KEEP; "pending" or "alice ready" match as the operator reads the options."""
    t = snap.tasks
    if t.empty:
        return []
    words = str(text or "").strip().lower().split()
    hay = t["jeditaskid"].astype(int).astype(str)
    for col in ("status", "prodsourcelabel", "taskname", "username"):
        if col in t.columns:
            hay = hay + " " + t[col].fillna("").astype(str).str.lower()
    hit = pd.Series(True, index=t.index)
    for w in words:
        hit &= hay.str.contains(w, regex=False)
    found = t[hit]
    waiting = found["status"].isin(WAITING_TASK_STATUSES)
    found = pd.concat([found[waiting], found[~waiting]]).head(limit)
    rows = found.to_dict("records")
    keep_id = parse_task(keep)
    if keep_id is not None and keep_id not in set(found["jeditaskid"].astype(int)):
        rows += t[t["jeditaskid"] == keep_id].to_dict("records")
    return [{"label": task_label(r), "value": int(r["jeditaskid"])} for r in rows]


def picker_options(
    snap: GridSnapshot, picked: int | None, limit: int = 200, also: Sequence[int] = ()
) -> list[dict[str, Any]]:
    """Initial task options: the first LIMIT (waiting first), the picked task and the tasks ALSO (e.g. the showcase
    candidates a callback may pick); typing searches all tasks."""
    opts = task_options(snap, limit)
    have = {o["value"] for o in opts}
    wanted = [t for t in ([picked] if picked is not None else []) + [int(t) for t in also] if t not in have]
    if wanted:
        t = snap.tasks
        rows = t[t["jeditaskid"].isin(wanted)].to_dict("records")
        opts += [{"label": task_label(r), "value": int(r["jeditaskid"])} for r in rows]
    return opts


def default_task(snap: GridSnapshot) -> int | None:
    """The first waiting task (or any task) to show when the URL names none."""
    opts = task_options(snap, limit=1)
    return opts[0]["value"] if opts else None


def showcase_candidates(snap: GridSnapshot, stage: str = "jobs", tries: int = 20) -> list[int]:
    """The first TRIES waiting tasks at STAGE a brokerage view may open on (no brokerage is run).

    STAGE "jobs": production tasks with a nucleus (job brokerage); "nucleus": tasks in task brokerage
    (``tasks_needing_nucleus``). Usage: ``picker_options(snap, None, also=showcase_candidates(snap))``
    """
    from brokerage.brokers.router import tasks_needing_nucleus
    from brokerage.model.waiting import waiting_task_ids

    ids = waiting_task_ids(snap)
    if not ids:
        return []
    if stage == "nucleus":
        eligible = tasks_needing_nucleus(snap, ids)
    else:
        t = snap.tasks.set_index("jeditaskid").loc[ids]
        has_nucleus = t["nucleus"].map(lambda n: isinstance(n, str) and n != "")
        eligible = t.index[(t["prodsourcelabel"] != "user") & has_nucleus].tolist()
    return [int(tid) for tid in eligible[:tries]]


def showcase_task(
    snap: GridSnapshot, n_candidates: Callable[[int], int], want: int = 5, tries: int = 20, stage: str = "jobs"
) -> int | None:
    """The task a brokerage view opens on when the URL names none: the first of ``showcase_candidates`` whose
    brokerage keeps at least WANT candidates (a ranking with its factors at work), else the one with most
    candidates among them, else the first waiting task. N_CANDIDATES(task) runs (or looks up) the brokerage.

    Usage: ``showcase_task(snap, lambda t: len(state.job_decision(t).candidates))``
    """
    from brokerage.model.waiting import waiting_task_ids

    ids = waiting_task_ids(snap)
    if not ids:
        return default_task(snap)
    best, best_n = ids[0], 0
    for tid in showcase_candidates(snap, stage, tries):
        n = n_candidates(tid)
        if n >= want:
            return tid
        if n > best_n:
            best, best_n = tid, n
    return int(best)


def url_task(snap: GridSnapshot, raw: Any) -> tuple[int | None, str | None]:
    """The task named by a URL's ``?task=``, or (None, why) when it names no task of this snapshot.

    Usage: ``tid, problem = url_task(snap, "45000011")``
    """
    if raw in (None, ""):
        return None, None
    tid = parse_task(raw)
    if tid is None:
        return None, f"task={raw}: not a task id (jeditaskid, a whole number); showing another task instead"
    if snap.tasks.empty or not (snap.tasks["jeditaskid"] == tid).any():
        return None, f"task={tid}: no such task in this snapshot; showing another task instead"
    return tid, None


def parse_task(value: Any) -> int | None:
    """A task id from URL text or a dropdown value; None when absent or not a number."""
    try:
        return int(str(value).strip()) if value not in (None, "") else None
    except ValueError:
        return None


def summary(decision: Decision) -> dict[str, Any]:
    """Headline of a decision: status, counts and message."""
    initial = decision.funnel[0].before if decision.funnel else 0
    return {
        "status": decision.status,
        "broker": decision.broker,
        "initial": initial,
        "final": len(decision.candidates),
        "skipped": len(decision.skipped),
        "message": decision.message,
        "pending_minutes": decision.pending_minutes,
        "config_changed": decision.config,
    }


def _layout(height: int, title: str, **extra: Any) -> dict[str, Any]:
    """Plain-dict layout matching common.style (dicts skip plotly's slow validation on the hot path)."""
    return {
        "height": height,
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "template": {"layout": {"paper_bgcolor": "white", "plot_bgcolor": "white", "font": {"color": "#2a3f5f"}}},
        "font": {"size": 12},
        "title": {"text": title, "x": 0, "font": {"size": 13}},
        "legend": {"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 1, "xanchor": "right"},
        **extra,
    }


def label_room(labels: Sequence[str], pad: int = 14) -> int:
    """Pixels a category axis needs for LABELS at the 12 px font, estimated here rather than by plotly's automargin,
    whose extra layout passes cost about 60 ms of the browser's time per task picked.

    Usage: ``layout["margin"]["l"] = label_room(names)``
    """
    return int(max((text_px(s) for s in labels), default=0.0)) + pad


def _empty(text: str) -> dict[str, Any]:
    return {
        "data": [],
        "layout": _layout(240, "", xaxis={"visible": False}, yaxis={"visible": False},
                          annotations=[{"text": text, "showarrow": False, "font": {"size": 14, "color": "#6b7280"}}]),
    }  # fmt: skip


def funnel_figure(decision: Decision) -> dict[str, Any]:
    """Candidates left after each filter that removed some (plus the first and last steps), as a figure dict."""
    steps = [(i, f) for i, f in enumerate(decision.funnel) if f.after != f.before or i == 0]
    if not steps:
        return _empty("no filter ran")
    # numbered as in the whole funnel, so "step 13, memory check" in the pending answer is found here
    labels = [f"{i + 1}. {f.filter}" for i, f in steps]
    steps = [f for _, f in steps]
    values = [f.after for f in steps]
    if steps[0].before != steps[0].after:
        labels.insert(0, "all candidates")
        values.insert(0, steps[0].before)
    trace = {"type": "funnel", "y": labels, "x": values, "textinfo": "value+percent initial",
             "marker": {"color": PALETTE[0]}, "connector": {"fillcolor": "#e5e7eb"}}  # fmt: skip
    layout = _layout(max(220, 34 * len(labels) + 60), "Candidates left after each filter")
    layout["margin"] = {**layout["margin"], "l": label_room(labels)}
    return {"data": [trace], "layout": layout}


def factor_rows(decision: Decision) -> list[dict[str, Any]]:
    """Ranked candidates: weight, every factor, and the numbers behind them (one flat row each)."""
    rows = []
    for c in decision.candidates:
        row: dict[str, Any] = {decision.label: c.name, "rank": c.rank, "weight": c.weight}
        row.update({f"f_{k}": v for k, v in c.factors.items()})
        row.update({k: plain(v) for k, v in c.details.items() if not isinstance(v, (dict, list))})
        rows.append(row)
    return rows


def factor_figure(decision: Decision, top: int = 10) -> dict[str, Any]:
    """Top candidates: weight bars beside grouped weight-factor bars, so the reason for a rank is visible."""
    cands = decision.candidates[:top]
    if not cands:
        return _empty("no candidate survived the filters")
    names = [f"{c.rank}. {c.name}" for c in cands]
    data: list[dict[str, Any]] = [
        {"type": "bar", "orientation": "h", "y": names, "x": [c.weight for c in cands], "name": "weight",
         "marker": {"color": "#111827"}, "text": [num(c.weight) for c in cands], "textposition": "auto",
         "xaxis": "x", "yaxis": "y"}
    ]  # fmt: skip
    keys = list(dict.fromkeys(k for c in cands for k in c.factors))
    for i, k in enumerate(keys):
        data.append(
            {"type": "bar", "orientation": "h", "y": names, "x": [c.factors.get(k) for c in cands], "name": k,
             "marker": {"color": PALETTE[i % len(PALETTE)]}, "hovertemplate": f"{k}=%{{x:.4g}}<extra>%{{y}}</extra>",
             "xaxis": "x2", "yaxis": "y"}
        )  # fmt: skip
    values = [float(v) for c in cands for v in c.factors.values() if v is not None]
    # factors multiply, so when they span orders of magnitude (t1Weight 100 beside a data factor of 2) a log
    # axis shows each one's share of the weight; a zero factor keeps the linear axis
    log = bool(values) and min(values) > 0 and max(values) / min(values) > 20
    title = "weight | weight factors (their product is the weight" + ("; log scale)" if log else ")")
    # room under the axes for their tick labels (log labels were cut off) and for the legend, which beside the
    # title ran into it at 1100 px; room left of them for the names, measured here (see label_room)
    layout = _layout(
        max(290, 46 * len(cands) + 130), title,
        barmode="group", bargap=0.25,
        margin={"l": label_room(names), "r": 20, "t": 40, "b": 80},
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0},
        xaxis={"domain": [0, 0.33], "gridcolor": "#eef0f3"},
        xaxis2={"domain": [0.36, 1], "gridcolor": "#eef0f3", **({"type": "log"} if log else {})},
        yaxis={"type": "category", "autorange": "reversed"},
        shapes=[{"type": "line", "xref": "x2", "yref": "paper", "x0": 1, "x1": 1, "y0": 0, "y1": 1,
                 "line": {"dash": "dot", "color": "#9ca3af"}}],
    )  # fmt: skip
    return {"data": data, "layout": layout}


def ranked_column_defs(rows: list[dict[str, Any]], label: str, prefix: str) -> list[dict[str, Any]]:
    """Columns of the ranked table: rank, linked name, weight, factors (marked ×) and details."""
    link = {
        "field": label,
        "headerName": label,
        "cellRenderer": "Link",
        "cellRendererParams": {"prefix": prefix},
        "pinned": "left",
        "minWidth": 170,
    }
    cols: list[dict[str, Any]] = [{"field": "rank", "headerName": "rank", "maxWidth": 80, "pinned": "left"}, link]
    for k in rows[0] if rows else ["weight"]:
        if k in ("rank", label):
            continue
        col: dict[str, Any] = {"field": k, "headerName": k.removeprefix("f_") + (" ×" if k.startswith("f_") else "")}
        if rows and isinstance(rows[0][k], float):
            col["valueFormatter"] = {"function": "params.value == null ? '' : d3.format('.4~g')(params.value)"}
        cols.append(col)
    return cols


def skipped_column_defs(label: str, prefix: str) -> list[dict[str, Any]]:
    """Columns of the skipped table: linked name, criteria, filter, sentence, temporary."""
    return [
        {"field": label, "headerName": label, "cellRenderer": "Link", "cellRendererParams": {"prefix": prefix}, "minWidth": 180},
        {"field": "criteria", "headerName": "criteria", "maxWidth": 150},
        {"field": "stage", "headerName": "filter", "maxWidth": 220},
        # full sentence on hover: wrapped auto-height rows made a 400-row table several times slower to paint
        {"field": "reason", "headerName": "reason", "flex": 3, "minWidth": 300, "tooltipField": "reason"},
        {"field": "temporary", "headerName": "temporary", "maxWidth": 110},
    ]  # fmt: skip


def skipped_rows(decision: Decision, criteria: list[str] | None = None) -> list[dict[str, Any]]:
    """Every removed candidate with its criteria code, filter, sentence and whether it may pass later."""
    label = decision.label
    out = [s.to_dict(label) for s in decision.skipped]
    if criteria:
        out = [r for r in out if r["criteria"] in criteria]
    return out


def criteria_options(decision: Decision, selected: list[str] | None = None) -> list[dict[str, Any]]:
    """Criteria codes that removed candidates, most frequent first, with counts; SELECTED codes always stay offered.

    A dropdown drops a value that is not among its options, which would silently undo a permalink's filter.
    """
    counts = sorted(decision.criteria_counts().items(), key=lambda kv: (-kv[1], kv[0]))
    options = [{"label": f"{code} ({n})", "value": code} for code, n in counts]
    present = {code for code, _ in counts}
    return options + [{"label": f"{code} (0)", "value": code} for code in selected or [] if code not in present]


def note_rows(decision: Decision) -> list[dict[str, str]]:
    """What the broker could not judge, shown rather than hidden."""
    return [{decision.label: n.candidate, "check": n.check, "text": n.text} for n in decision.notes]


def query_string(**params: Any) -> str:
    """'?a=1&b=x,y' from non-empty params (lists joined by commas)."""
    from urllib.parse import urlencode

    clean = {
        k: ",".join(map(str, v)) if isinstance(v, (list, tuple)) else v
        for k, v in params.items()
        if v not in (None, "", [])
    }
    return "?" + urlencode(clean) if clean else ""


def split_list(text: Any) -> list[str]:
    """'a,b' or ['a','b'] -> ['a','b']."""
    if not text:
        return []
    if isinstance(text, (list, tuple)):
        return [str(x) for x in text]
    return [s for s in str(text).split(",") if s]
