"""Self-contained HTML report: inline CSS and inline SVG charts, no script and no network reference."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import IO, Any

from brokerage.model.explain import Decision
from brokerage.model.words import count
from brokerage.report.build import Report
from brokerage.report.entry import TaskEntry
from brokerage.report.summary import shares
from brokerage.report.svg import Bar, bar_chart, fmt_number

TOP_BARS = 25  # bars per grid-wide chart; the JSON and CSV hold every queue
TOP_SHARES = 15  # candidates in a task's share-of-jobs chart; the table below lists all
# The page may load nothing at all: no script, no font, no image but data: URIs.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
CSS = """
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif; color: #1f2933;
       background: #f5f7fa; margin: 0; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 48px; background: #fff; min-height: 100vh; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 8px; padding-top: 12px; border-top: 1px solid #e4e7eb; }
h3 { font-size: 15px; margin: 20px 0 6px; }
.sub { color: #5f6b7a; margin: 0 0 16px; }
table { border-collapse: collapse; margin: 6px 0 12px; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 10px 3px 0; text-align: left; vertical-align: top; border-bottom: 1px solid #eef1f4; }
th { color: #5f6b7a; font-weight: 600; border-bottom: 1px solid #cbd2d9; }
td.n, th.n { text-align: right; padding-right: 14px; }
table.kv th { border-bottom: 1px solid #eef1f4; padding-right: 18px; white-space: nowrap; }
.kpis { display: flex; flex-wrap: wrap; gap: 12px; margin: 8px 0 16px; }
.kpi { border: 1px solid #e4e7eb; border-radius: 6px; padding: 8px 14px; min-width: 130px; }
.kpi b { display: block; font-size: 20px; }
.kpi span { color: #5f6b7a; font-size: 12px; }
figure { margin: 10px 0 18px; }
figcaption { font-weight: 600; margin-bottom: 4px; }
figcaption small { font-weight: 400; color: #5f6b7a; }
svg.chart { display: block; max-width: 100%; height: auto; }
.ok { color: #1e7a46; } .pending { color: #b35c00; } .error { color: #b42318; }
code { background: #f0f3f6; padding: 0 3px; border-radius: 3px; white-space: nowrap; }
.nw { white-space: nowrap; }
.wide { overflow-x: auto; }
details summary { cursor: pointer; color: #3b6ea5; }
footer { margin-top: 36px; color: #5f6b7a; font-size: 12px; }
@media print { body { background: #fff; } main { padding: 0; } h2 { break-before: auto; } }
"""


def _e(x: Any) -> str:
    return escape(str(x))


def _num(x: float, digits: int = 4) -> str:
    return "n/a" if x != x else f"{x:.{digits}g}"


def _value(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, sort_keys=True, default=str)


def _table(head: Sequence[str], rows: Iterable[Sequence[str]], numeric: Sequence[bool] = (), cls: str = "") -> str:
    """A table of already-escaped cells; NUMERIC marks right-aligned columns."""
    num = list(numeric) + [False] * (len(head) - len(numeric))
    th = "".join(f'<th class="n">{h}</th>' if n else f"<th>{h}</th>" for h, n in zip(head, num, strict=True))
    body = [
        "<tr>"
        + "".join(f'<td class="n">{c}</td>' if n else f"<td>{c}</td>" for c, n in zip(r, num, strict=True))
        + "</tr>"
        for r in rows
    ]
    klass = f' class="{cls}"' if cls else ""
    return f'<div class="wide"><table{klass}><thead><tr>{th}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def _figure(svg: str, caption: str, note: str = "") -> str:
    small = f" <small>{_e(note)}</small>" if note else ""
    return f"<figure><figcaption>{_e(caption)}{small}</figcaption>{svg}</figure>"


def _status(status: str) -> str:
    cls = "ok" if status == "ok" else "error" if status == "error" else "pending"
    return f'<span class="{cls}">{_e(status)}</span>'


# ---------------------------------------------------------------- provenance


def _meta_section(meta: Mapping[str, Any]) -> str:
    over = meta.get("changed_from_stored") or {}
    if over:
        what_if = "<br>".join(
            f"<code>{_e(k)}</code> = {_e(_value(v['whatif']))} (stored: {_e(_value(v['stored']))})"
            for k, v in over.items()
        )
    else:
        what_if = "none: the stored gdpconfig as is"
    defaults = meta.get("changed_from_defaults") or {}
    changed = (
        f"<details><summary>{count(len(defaults), 'value')} differ from the defaults</summary>"
        + "<br>".join(f"<code>{_e(k)}</code> = {_e(_value(v))}" for k, v in defaults.items())
        + "</details>"
        if defaults
        else "every value at its default"
    )
    version = meta.get("config_version")
    rows = [
        ("snapshot", f"<code>{_e(meta.get('snapshot', ''))}</code> taken at {_e(meta.get('snapshot_taken_at', ''))}"),
        ("source", _e(meta.get("origin", "unknown"))),
        ("gdpconfig version", _e("not stored (defaults)" if version is None else version)),
        ("what-if overrides", what_if),
        ("effective config", f"fingerprint <code>{_e(meta.get('config_fingerprint', ''))}</code>; {changed}"),
        ("scope", _e(meta.get("scope", ""))),
        ("generated", f"{_e(meta.get('generated_at', ''))} by {_e(meta.get('tool', ''))}"),
        ("brokerage time", f"{_e(meta.get('seconds', ''))} s; nucleus draw seed {_e(meta.get('nucleus_seed', ''))}"),
    ]
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<section id="meta"><h2>Provenance</h2><table class="kv">{body}</table></section>'


# ---------------------------------------------------------------- the whole grid


def _kpis(items: Sequence[tuple[str, int]]) -> str:
    cells = "".join(f'<div class="kpi"><b>{n:,}</b><span>{_e(label)}</span></div>' for label, n in items)
    return f'<div class="kpis">{cells}</div>'


def _top(d: Mapping[str, float], n: int = TOP_BARS) -> list[Bar]:
    return [Bar(k, float(v)) for k, v in list(d.items())[:n]]


def _more(d: Mapping[str, Any], n: int = TOP_BARS) -> str:
    return f"top {n} of {len(d)}" if len(d) > n else ""


def _summary_section(report: Report) -> str:
    s = report.summary
    parts = [
        '<section id="summary"><h2>Summary</h2>',
        _kpis(
            [
                ("tasks analysed", s["tasks"]),
                ("with candidates", s["with_candidates"]),
                ("pending / no candidates", s["pending"]),
                ("errors", s["errors"]),
                ("nucleus brokerages", s["nucleus_decisions"]),
            ]
        ),
    ]
    crit, queues, nuclei = s["skips_by_criteria"], s["expected_jobs_per_queue"], s["expected_jobs_per_nucleus"]
    parts.append(
        _figure(
            bar_chart(_top(crit), title="queue skips per criteria code", chart_id="chart-criteria"),
            "Queue skips per criteria code",
            "job brokerage, summed over tasks. " + _more(crit),
        )
    )
    parts.append(
        _figure(
            bar_chart(_top(queues), title="expected jobs per queue", chart_id="chart-queues"),
            "Expected jobs per queue",
            "Σ over tasks of chunk_njobs × weight / Σ weights of its candidates. " + _more(queues),
        )
    )
    if s["nucleus_decisions"]:
        parts.append(
            _figure(
                bar_chart(_top(nuclei), title="expected jobs per nucleus", chart_id="chart-nuclei"),
                "Expected jobs per nucleus",
                "tasks still in assigning: Σ of chunk_njobs × selection probability. " + _more(nuclei),
            )
        )
        ncrit = s["nucleus_skips_by_criteria"]
        parts.append(
            _figure(
                bar_chart(_top(ncrit), title="nucleus skips per criteria code", chart_id="chart-nucleus-criteria"),
                "Nucleus skips per criteria code",
                "task brokerage, summed over tasks. " + _more(ncrit),
            )
        )
    parts.append("</section>")
    return "".join(parts)


def _task_rows(entries: Iterable[TaskEntry]) -> Iterable[list[str]]:
    for e in entries:
        d = e.job
        nuc = "" if e.nucleus is None else _e(e.nucleus.extra.get("chosen") or f"none ({e.nucleus.status})")
        if d is None:
            yield [str(e.task), _e(e.task_status), "", _status("error"), _e(e.error), "", "", nuc]
            continue
        status = "error" if e.error else d.status
        top = _e(d.candidates[0].name) if d.candidates else _e(e.error or d.message)
        yield [str(e.task), _e(e.task_status), _e(d.broker), _status(status), top,
               f"{len(d.candidates):,}", f"{len(d.skipped):,}", nuc]  # fmt: skip


def _tasks_section(report: Report) -> str:
    head = ["task", "JEDI status", "broker", "result", "top candidate", "#candidates", "#skipped", "nucleus chosen"]
    table = _table(head, _task_rows(report.tasks), [False, False, False, False, False, True, True], cls="tasks")
    return f'<section id="tasks"><h2>Tasks ({len(report.tasks):,})</h2>{table}</section>'


# ---------------------------------------------------------------- one task


def _funnel_chart(d: Decision, ident: str) -> str:
    bars = [
        Bar(
            f.filter,
            f.after,
            f.before,
            f"{f.before:,} → {f.after:,}" + (f" (−{f.cut_percent}%)" if f.cut_percent else ""),
        )
        for f in d.funnel
    ]
    kind = "Nucleus" if d.label == "nucleus" else "Queue"
    title = f"{kind} funnel of task {d.task}"
    note = "grey: candidates before the filter, blue: after"
    return _figure(bar_chart(bars, title=title, chart_id=ident), title, note)


def _share_chart(d: Decision, njobs: float, ident: str) -> str:
    share = shares(d)
    nucleus = d.label == "nucleus"
    bars = [
        Bar(c.name, share.get(c.name, 0.0) * 100, text=f"{share.get(c.name, 0.0) * 100:.1f}%"
            + ("" if nucleus else f" · {fmt_number(share.get(c.name, 0.0) * njobs)} jobs"))
        for c in d.candidates[:TOP_SHARES]
    ]  # fmt: skip
    caption = "Selection probability per nucleus" if nucleus else "Share of the task's jobs per queue"
    note = f"top {TOP_SHARES} of {len(d.candidates)}" if len(d.candidates) > TOP_SHARES else ""
    note += "" if nucleus else f"{'; ' if note else ''}weight / Σ weights × chunk_njobs={fmt_number(njobs)}"
    return _figure(bar_chart(bars, title=caption, chart_id=ident), caption, note)


def _candidates_table(d: Decision, njobs: float) -> str:
    share = shares(d)
    keys = list(dict.fromkeys(k for c in d.candidates for k in c.factors))
    prob = d.label == "nucleus"
    head = ["rank", _e(d.label), "weight", "probability" if prob else "share", *(_e(k) for k in keys)]
    if not prob:
        head.insert(4, "expected jobs")
    rows = []
    for c in d.candidates:
        s = share.get(c.name, 0.0)
        row = [str(c.rank), f'<span class="nw">{_e(c.name)}</span>', _num(c.weight), f"{s * 100:.1f}%"]
        if not prob:
            row.append(fmt_number(s * njobs))
        row += [_num(float(c.factors[k])) if k in c.factors else "" for k in keys]
        rows.append(row)
    numeric = [True, False, *([True] * (len(head) - 2))]
    return _table(head, rows, numeric)


def _skipped_table(d: Decision) -> str:
    head = [_e(d.label), "criteria", "filter", "temporary", "reason"]
    rows = (
        [
            f'<span class="nw">{_e(s.candidate)}</span>',
            f"<code>{_e(s.criteria)}</code>",
            f'<span class="nw">{_e(s.stage)}</span>',
            "yes" if s.temporary else "",
            _e(s.reason),
        ]
        for s in d.skipped
    )
    return _table(head, rows)


def _decision_section(d: Decision, njobs: float, heading: str, ident: str) -> str:
    parts = [f"<h3>{_e(heading)}: {_status(d.status)}</h3>"]
    facts = []
    if d.message:
        facts.append(_e(d.message))
    if d.pending_minutes is not None:
        facts.append(f"pending for {d.pending_minutes} min")
    chosen = d.extra.get("chosen") if d.label == "nucleus" else None
    if chosen:
        facts.append(f"chosen nucleus (seeded draw): <b>{_e(chosen)}</b>")
    if facts:
        parts.append(f'<p class="sub">{"; ".join(facts)}</p>')
    parts.append(_funnel_chart(d, f"chart-funnel-{ident}"))
    if d.candidates:
        parts.append(_share_chart(d, njobs, f"chart-share-{ident}"))
        parts.append(f"<h3>Ranked candidates ({len(d.candidates)})</h3>")
        parts.append(_candidates_table(d, njobs))
    if d.skipped:
        crit = ", ".join(
            f"<code>{_e(k)}</code> {n}" for k, n in sorted(d.criteria_counts().items(), key=lambda kv: -kv[1])
        )
        parts.append(f"<h3>Skipped candidates ({len(d.skipped)})</h3><p>{crit}</p>")
        parts.append(_skipped_table(d))
    if d.notes:
        rows = ([_e(n.candidate), _e(n.check), _e(n.text)] for n in d.notes)
        parts.append(f"<h3>Notes ({len(d.notes)})</h3>" + _table([_e(d.label), "check", "note"], rows))
    return "".join(parts)


def _task_section(e: TaskEntry) -> str:
    facts = f"JEDI status {_e(e.task_status)}, prodsourcelabel {_e(e.label)}, chunk_njobs {fmt_number(e.njobs)}"
    parts = [f'<section id="task-{e.task}" class="task"><h2>Task {e.task}</h2><p class="sub">{facts}</p>']
    if e.error:
        parts.append(f'<p class="error">brokerage failed: {_e(e.error)}</p>')
    if e.job is not None:
        parts.append(_decision_section(e.job, e.njobs, f"Job brokerage ({e.job.broker})", f"{e.task}-job"))
    if e.nucleus is not None:
        parts.append(_decision_section(e.nucleus, e.njobs, "Task brokerage (nucleus)", f"{e.task}-nucleus"))
    parts.append("</section>")
    return "".join(parts)


# ---------------------------------------------------------------- before/after


WHATIF_ROWS = 200  # changed decisions listed in the page; the CSV and JSON hold every one


def _cands(cands: Sequence[tuple[str, float]]) -> str:
    return "<br>".join(f"{_e(n)} <small>{_num(w)}</small>" for n, w in cands) or "<i>none</i>"


def _whatif_section(report: Report) -> str:
    """Stored config vs what-if: the edits, how many decisions moved, and per changed decision the top candidates
    before and after with the filter verdicts and weight factors that changed."""
    w = report.whatif
    if w is None:
        return ""
    edits = ", ".join(f"{k}: {_value(v['stored'])} → {_value(v['whatif'])}" for k, v in w.edits.items())
    moved = len({c.task for c in w.moved})
    head = (
        f"<p>Edits {_e(edits)}. Every brokerage that reads an edited key was made twice, under the stored config "
        f"and under the edits: {count(w.compared, 'decision')} compared, {len(w.changes):,} changed, "
        f"{count(moved, 'task')} moved to another queue or nucleus (or changed status).</p>"
    )
    rows = [
        [f'<a href="#task-{c.task}">{c.task}</a>' if not report.whole_grid else str(c.task), _e(c.kind),
         ("<b>moved</b> " if c.moved else "") + f"<span class='nw'>{_e(c.top_before or '—')} → {_e(c.top_after or '—')}</span>",
         f"<span class='nw'>{_status(c.status_before)} → {_status(c.status_after)}</span>", _cands(c.before), _cands(c.after),
         "<br>".join(_e(y) for y in c.why)]
        for c in w.changes[:WHATIF_ROWS]
    ]  # fmt: skip
    more = f"<p class='sub'>first {WHATIF_ROWS} of {len(w.changes):,}; the CSV and JSON list all</p>"
    table = _table(["task", "brokerage", "chosen", "status", "before (weight)", "after (weight)", "why"], rows)
    return (
        '<section id="whatif"><h2>Before / after the what-if edits</h2>' + head
        + (table if rows else "<p>No decision changed.</p>") + (more if len(w.changes) > WHATIF_ROWS else "")
        + "</section>"
    )  # fmt: skip


# ---------------------------------------------------------------- page


def html_document(report: Report) -> str:
    """The whole page as text: provenance, then the grid summary and task table (several tasks) and/or the
    detail of each task picked by id.

    Usage: ``Path("r.html").write_text(html_document(report))``
    """
    meta = report.meta
    title = f"Brokerage report — {meta.get('title', '')}"
    over = meta.get("overrides") or {}
    what_if = ", ".join(f"{k}={_value(v)}" for k, v in over.items()) or "stored gdpconfig"
    version = meta.get("config_version")
    stored = "defaults (no stored gdpconfig)" if version is None else f"gdpconfig version {version}"
    sub = f"snapshot {meta.get('snapshot', '')} · {stored} · what-if: {what_if}"
    parts = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body><main>",
        f'<h1>{_e(title)}</h1><p class="sub">{_e(sub)}</p>',
        _meta_section(meta),
        _whatif_section(report),
    ]
    if len(report.tasks) != 1 or report.whole_grid:
        parts.append(_summary_section(report))
        parts.append(_tasks_section(report))
    if not report.whole_grid:
        parts.extend(_task_section(e) for e in report.tasks)
    parts.append(f"<footer>{_e(meta.get('tool', ''))} · generated {_e(meta.get('generated_at', ''))}</footer>")
    parts.append("</main></body></html>\n")
    return "".join(parts)


def write_html(report: Report, out: IO[bytes]) -> None:
    """Write the self-contained HTML page to the binary stream OUT.

    Usage: ``with open("r.html", "wb") as f: write_html(report, f)``
    """
    out.write(html_document(report).encode("utf-8"))
