"""A crosscheck report as text (the default), or a standalone HTML page."""

from __future__ import annotations

import html
from typing import Any

from brokerage.crosscheck.run import Report

NAMES = {
    "prod": "production job broker",
    "nucleus": "task (nucleus) broker",
    "anal": "analysis job broker",
    "dirac_tq": "DIRAC task queues (per grid: queues, definitions, jobs, Priority)",
    "dirac": "DIRAC matcher (per pilot: request, resource, task queues it can match)",
}
TOP = 12


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}%"


def _version(d: dict[str, Any]) -> str:
    v = str(d["panda_version"])
    return v if v.startswith(d.get("against", "PanDA")) else f"PanDA {v}"


def text(report: Report) -> list[str]:
    """The summary lines: per broker agreement, the most frequent differences, unmapped tokens."""
    d = report.to_dict(with_tasks=False)
    other = d.get("against", "PanDA")
    lines = [
        f"crosscheck against {_version(d)} (rule profile {d['profile']}), {d['grids']} grid(s)",
        "time: " + ", ".join(f"{k} {v:.2f} s" for k, v in d["seconds"].items()),
    ]
    for b, t in d["brokers"].items():
        lines += [
            "",
            f"{NAMES.get(b, b)}: {t['tasks']} tasks, {t['tasks_identical']} identical ({_pct(t['tasks_identical_pct'])});"
            f" (task, queue) verdicts {t['verdicts_agree']}/{t['verdicts']} agree ({_pct(t['verdicts_agree_pct'])});"
            f" weights {t['weights_agree']}/{t['weights']} ({_pct(t['weights_agree_pct'])})",
            f"  per task: ours {t['ours_ms_per_task']} ms, {other} {t['jedi_ms_per_task']} ms;"
            f" {other} errors {t['jedi_errors']}",
        ]
        for why, n in t["panda_bugs"].items():
            lines.append(f"  PanDA bug met {n} times: {why}")
        lines.append(f"  with the allow-list: {t['tasks_accepted']} tasks accepted ({_pct(t['tasks_accepted_pct'])})")
        for x in t["differences"][:TOP]:
            lines.append(f"  {x['count']:>6}  {x['field']:<11} ours {x['ours']:<22} {other} {x['jedi']}")
        for x in t["allowed_differences"]:
            lines.append(f"  {x['count']:>6}  allowed {x['field']:<11} ours {x['ours']:<22} PanDA {x['jedi']}")
        if len(t["differences"]) > TOP:
            lines.append(f"  ... {len(t['differences']) - TOP} more kinds of difference (--json lists them all)")
        if t["unmapped_tokens"]:
            lines.append("  UNMAPPED JEDI tokens: " + ", ".join(f"{k} ({v})" for k, v in t["unmapped_tokens"].items()))
    return lines


def _table(rows: list[list[Any]], head: list[str]) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{th}</tr>{body}</table>"


def page(report: Report, max_tasks: int = 200) -> str:
    """A standalone HTML page: the summary, then the differing tasks with their differing names."""
    d = report.to_dict()
    other = d.get("against", "PanDA")
    parts = [f"<h1>Crosscheck against {html.escape(_version(d))}</h1>",
             f"<pre>{html.escape(chr(10).join(text(report)))}</pre>"]  # fmt: skip
    shown = 0
    for t in d["tasks"]:
        if t["identical"] or shown >= max_tasks:
            continue
        shown += 1
        rows = [[q["name"], q["ours"], q["jedi"], q.get("differs", ""), q.get("ours_weight", ""), q.get("jedi_weight", ""),
                 q.get("ours_reason", ""), q.get("jedi_reason", "")] for q in t["queues"] if not q["agree"]]  # fmt: skip
        parts.append(f"<h3>task {t['task']} ({NAMES.get(t['broker'], t['broker'])})</h3>")
        parts.append(_table(rows, ["name", "ours", other, "differs", "our weight", f"{other} weight", "our reason",
                                   f"{other} message"]))  # fmt: skip
    style = "body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
    return f"<!doctype html><html><head><meta charset='utf-8'><style>{style}</style></head><body>{''.join(parts)}</body></html>"
