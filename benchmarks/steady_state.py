"""Running jobs per global share of a demo grid over simulated time (issue 30), and the curves of docs/steady_state.png.

    python benchmarks/steady_state.py run --seed 2 --queues 700 --tasks 3000 --out /tmp/demo700.json
    python benchmarks/steady_state.py plot /tmp/grid60.json /tmp/demo700.json --png docs/steady_state.png

``run`` simulates the demo grid under the stored config (``--rules panda-1.0.4``: PanDA's code profile) and writes each share's running jobs at every sample
(JSON) and prints them at 0, 6, 12, 18 and 24 h; ``plot`` draws each run's shares as % of their start, the ±15 %
band of the issue shaded, one panel per run, and renders the page with headless Chromium to a PNG.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from brokerage.model.gdpconfig import Config  # noqa: E402
from brokerage.sim.engine import Simulation  # noqa: E402
from brokerage.synth.demo import demo_snapshot  # noqa: E402

BAND = 0.15  # the goal: every share within ±15 % of its start
Y_MAX = 260  # % of the start: a share far above it leaves the plot rather than flatten the others


def run(args: argparse.Namespace) -> None:
    """Simulate the demo grid ARGS names and write its running jobs per share to ARGS.out."""
    t0 = time.process_time()
    snap = demo_snapshot(seed=args.seed, queues=args.queues, tasks=args.tasks)
    sim = Simulation(snap, Config().with_overrides({"RULES": args.rules}), seed=0).run(args.hours)
    result = sim.result()
    shares = {name: series["running"] for name, series in result["shares"].items()}
    out = {
        "grid": f"demo seed {args.seed}, {args.queues} queues, {args.tasks} tasks"
        + ("" if args.rules == "seed" else f", RULES={args.rules}"),
        "times_h": result["times_h"],
        "running": shares,
        "cpu_s": round(time.process_time() - t0, 1),
    }
    Path(args.out).write_text(json.dumps(out))
    print(table(out))


def table(out: dict) -> str:
    """The running jobs per share (and all) at 0, 6, 12, 18 and 24 h, with the furthest departure from the start."""
    times = np.asarray(out["times_h"])
    hours = [h for h in (0, 6, 12, 18, 24) if h <= times[-1] + 1e-9]
    at = [int(np.argmin(np.abs(times - h))) for h in hours]
    rows = [f"| share | {' | '.join(f'{h} h' for h in hours)} | furthest |", "|---" * (len(hours) + 2) + "|"]
    series = dict(out["running"])
    series["**all**"] = list(np.sum(np.array(list(out["running"].values())), axis=0))
    for name, values in series.items():
        v = np.asarray(values, dtype=float)
        off = (v / max(v[0], 1.0) - 1.0) * 100.0
        worst = off[int(np.argmax(np.abs(off)))]
        cells = " | ".join(f"{int(v[i]):,}" for i in at)
        rows.append(f"| {name} | {cells} | {worst:+.1f} % |")
    return "\n".join(rows)


def plot(args: argparse.Namespace) -> None:
    """Draw the runs in ARGS.runs as % of start per share and render them to ARGS.png."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    runs = [json.loads(Path(p).read_text()) for p in args.runs]
    fig = make_subplots(rows=1, cols=len(runs), subplot_titles=[r["grid"] for r in runs], shared_yaxes=True)
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
               "#bcbd22", "#17becf", "#393b79"]  # fmt: skip
    for col, r in enumerate(runs, start=1):
        t = r["times_h"]
        fig.add_trace(go.Scatter(x=[t[0], t[-1], t[-1], t[0]], y=[100 * (1 - BAND)] * 2 + [100 * (1 + BAND)] * 2,
                                 fill="toself", fillcolor="rgba(0,0,0,0.07)", line={"width": 0}, mode="lines", hoverinfo="skip",
                                 showlegend=False), row=1, col=col)  # fmt: skip
        for k, (name, values) in enumerate(sorted(r["running"].items())):
            v = np.asarray(values, dtype=float)
            fig.add_trace(go.Scatter(x=t, y=100.0 * v / max(v[0], 1.0), name=name, legendgroup=name, mode="lines",
                                     line={"color": palette[k % len(palette)], "width": 1.6},
                                     showlegend=col == 1), row=1, col=col)  # fmt: skip
        total = np.sum(np.array(list(r["running"].values()), dtype=float), axis=0)
        fig.add_trace(go.Scatter(x=t, y=100.0 * total / max(total[0], 1.0), name="all shares", legendgroup="all",
                                 mode="lines",
                                 line={"color": "black", "width": 3, "dash": "dash"}, showlegend=col == 1),
                      row=1, col=col)  # fmt: skip
        fig.update_xaxes(title_text="simulated hours", row=1, col=col)
    fig.update_yaxes(range=[0, Y_MAX])
    fig.update_yaxes(title_text=f"running jobs, % of the start (axis cut at {Y_MAX} %)", row=1, col=1)
    fig.update_layout(width=640 * len(runs) + 220, height=600, template="plotly_white",
                      title="Running jobs per global share (band: ±15 %)")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "steady_state.html"
        fig.write_html(page, include_plotlyjs=True, full_html=True, config={"displayModeBar": False})
        browser = shutil.which("chromium") or shutil.which("chromium-browser") or "chromium"
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--window-size={fig.layout.width},{fig.layout.height}", "--virtual-time-budget=10000",
                        f"--screenshot={Path(args.png).resolve()}", page.as_uri()],
                       check=True, capture_output=True)  # fmt: skip
    print(f"wrote {args.png}")


def main() -> None:
    """``run`` a demo grid or ``plot`` runs (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="simulate a demo grid and write its running jobs per share")
    r.add_argument("--seed", type=int, default=2)
    r.add_argument("--queues", type=int, default=700)
    r.add_argument("--tasks", type=int, default=3000)
    r.add_argument("--hours", type=float, default=24.0)
    r.add_argument("--rules", default="seed", help="the rule profile (gdpconfig RULES): seed or panda-1.0.4")
    r.add_argument("--out", required=True)
    p = sub.add_parser("plot", help="draw runs written by `run` to a PNG")
    p.add_argument("runs", nargs="+")
    p.add_argument("--png", default=str(ROOT / "docs" / "steady_state.png"))
    args = parser.parse_args()
    run(args) if args.command == "run" else plot(args)


if __name__ == "__main__":
    main()
