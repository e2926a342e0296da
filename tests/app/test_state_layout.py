"""The task state diagram's layout: main flow left to right, side states grouped, edges along shared lanes that pass
no other status."""

from __future__ import annotations

import itertools
import math

import pandas as pd

from app.viewmodels import state_layout as lay
from app.viewmodels.state_diagram import diagram

CLEAR = 0.2  # an edge keeps at least this far (axis units) from every status it does not join


def _distance(p: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    """Distance from P to the segment AB."""
    (px, py), (ax, ay), (bx, by) = p, a, b
    dx, dy = bx - ax, by - ay
    t = 0.0 if dx == dy == 0 else max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - (ax + t * dx), py - (ay + t * dy))


def test_main_flow_runs_left_to_right_and_side_states_are_grouped_above_it() -> None:
    """JEDI's main flow (registered … finishing) is one row in its order, left to right; the side states (pending,
    throttled, paused, exhausted, tobroken, broken) are one row above it; the final statuses one column right of all."""
    main = [lay.POSITIONS[s] for s in lay.MAIN]
    assert len({y for _, y in main}) == 1 and [x for x, _ in main] == sorted(x for x, _ in main)
    side = [lay.POSITIONS[s] for s in ("pending", "throttled", "paused", "exhausted", "tobroken", "broken")]
    assert len({y for _, y in side}) == 1 and side[0][1] > main[0][1]
    finals = [lay.POSITIONS[s] for s in lay.FINAL]
    assert {x for x, _ in finals} == {lay.FINAL_X} and all(x < lay.FINAL_X for x, _ in main + side)


def test_no_edge_crosses_a_status_it_does_not_join() -> None:
    """Every possible transition between two statuses of the diagram runs clear of every other status (the tangle
    of issue 33: arrows into paused crossed the whole figure and its labels)."""
    nodes = dict(lay.POSITIONS)
    crossings = []
    for a, b in itertools.permutations(nodes, 2):
        pts = lay.route(a, b, {})
        for c, p in nodes.items():
            if c in (a, b):
                continue
            if any(_distance(p, pts[i], pts[i + 1]) < CLEAR for i in range(len(pts) - 1)):
                crossings.append(f"{a}→{b} passes {c}")
    assert crossings == []


def test_edges_into_a_side_state_share_one_lane() -> None:
    """Transitions from any main status into paused run along the same lane (bundled): one horizontal y for all."""
    lanes = {lay.route(s, "paused", {})[1][1] for s in lay.MAIN}
    assert lanes == {lay.LANE_UP}


def test_each_transition_shows_its_count_on_hover() -> None:
    """A logged transition running → paused of 7 tasks is a line with its count on hover: "running → paused: 7
    logged"."""
    past = pd.DataFrame([("running", "paused", 7), ("ready", "scouting", 3)], columns=["source", "target", "n"])
    fig = diagram(past, past.iloc[0:0], {"running": 4, "paused": 1}, "t")
    hovers = [t.hovertext[0] for t in fig.data if t.hovertext is not None and len(t.hovertext) == 1]
    assert "running → paused: 7 logged" in hovers and "ready → scouting: 3 logged" in hovers
