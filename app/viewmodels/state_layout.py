"""Where the task state diagram puts each JEDI status and how its edges run: main flow left to right, side states
grouped in a band above it, final statuses in the last column, command and preparation statuses in a band below;
edges run along shared lanes (bundled) instead of straight across the figure."""

from __future__ import annotations

from collections.abc import Sequence

Point = tuple[float, float]

MAIN = ("registered", "defined", "assigning", "ready", "scouting", "scouted", "running", "prepared", "finishing")
SIDE = ("pending", "throttled", "paused", "exhausted", "tobroken", "broken")  # held, retried or given up on
FINAL = ("finished", "done", "failed", "aborted")  # done on the main row: the main flow ends there
OTHER = ("staging", "staged", "topreprocess", "preprocessing", "toretry", "toincexec", "rerefine", "toreassign",
         "reassigning", "aborting", "toabort", "passed")  # fmt: skip  # command hand-overs and preparation

MAIN_Y, SIDE_Y, OTHER_Y = 0.0, 2.0, -2.0
FINAL_X = 9.6
RIM = 0.24  # edges stop this far (y units) from a node's centre, outside its label
# lanes: the horizontal channels edges share (bundled), one per direction so a return does not hide a departure
LANE_UP, LANE_BACK = 0.75, 1.2  # main → side, side → main
LANE_SIDE = 2.75  # side → side, side → final
LANE_MAIN = -0.7  # main → main (not next door), main → final
LANE_OTHER = -1.1  # to and from the bottom band
LEG = 0.09  # the vertical leg of a departure sits left of the node's centre, an arrival's right of it

POSITIONS: dict[str, Point] = {
    **{s: (float(i), MAIN_Y) for i, s in enumerate(MAIN)},
    **{s: (2.5 + 1.0 * i, SIDE_Y) for i, s in enumerate(SIDE)},  # half-way between main columns: legs pass clear
    **{s: (FINAL_X, 0.8 - 0.8 * i) for i, s in enumerate(FINAL)},
    # two rows, the second shifted half a step: the legs of its edges pass between the first row's statuses
    **{s: (0.3 + 1.55 * (i % 6) + 0.775 * (i // 6), OTHER_Y + 0.3 - 0.7 * (i // 6)) for i, s in enumerate(OTHER)},
}
GROUPS: dict[str, tuple[float, float, float, float]] = {  # label → (x0, y0, x1, y1) of its shaded box
    "side states: held, retried or given up": (2.05, SIDE_Y - 0.45, 7.95, SIDE_Y + 0.45),
    "final": (FINAL_X - 0.5, -2.0, FINAL_X + 0.5, 1.25),
    "commands and preparation": (-0.3, OTHER_Y - 0.75, 8.9, OTHER_Y + 0.65),
}


def group_of(status: str) -> str:
    """'main', 'side', 'final' or 'other' (a status the diagram does not know is 'other').

    Usage: ``group_of("paused") == "side"``
    """
    for name, members in (("main", MAIN), ("side", SIDE), ("final", FINAL)):
        if status in members:
            return name
    return "other"


def position(status: str, extra: dict[str, Point]) -> Point:
    """STATUS's place; a status the diagram does not know gets the next free place at the end of the bottom band."""
    if status in POSITIONS:
        return POSITIONS[status]
    if status not in extra:
        extra[status] = (FINAL_X + 1.3, OTHER_Y + 0.3 - 0.7 * len(extra))  # a column of its own
    return extra[status]


def _lane(a: str, b: str) -> float:
    """The lane an edge from group A to group B runs along."""
    if a == "other" or b == "other":
        return LANE_OTHER
    if a == "main" and b == "side":
        return LANE_UP
    if "side" in (a, b):
        return LANE_BACK if b == "main" else LANE_SIDE  # side → main; side ↔ side and side ↔ final above the band
    return LANE_MAIN  # main → main (not next door), main ↔ final


APPROACH = FINAL_X - 0.55  # the column edges into and out of the final statuses run along


def route(src: str, dst: str, extra: dict[str, Point]) -> list[Point]:
    """The polyline of the edge SRC → DST: next-door main statuses straight, anything else out of the source to its
    lane, along it and into the target (the final column along its own approach column); the last segment carries
    the arrowhead.

    Usage: ``route("running", "paused", {})``
    """
    (x0, y0), (x1, y1) = position(src, extra), position(dst, extra)
    a, b = group_of(src), group_of(dst)
    if (a == b == "main" and x1 - x0 == 1) or (src == MAIN[-1] and b == "final" and abs(y1 - y0) < 0.9):
        return [(x0 + RIM, y0), (x1 - RIM, y1)]
    if a == b == "final":
        return [(x0 - RIM, y0), (APPROACH, y0), (APPROACH, y1), (x1 - RIM, y1)]
    lane = _lane(a, b)
    start = [(x0 - RIM, y0), (APPROACH, y0), (APPROACH, lane)] if a == "final" else [
        (x0 - LEG, y0 + (RIM if lane > y0 else -RIM)), (x0 - LEG, lane)]  # fmt: skip
    if b == "final":
        return [*start, (APPROACH, lane), (APPROACH, y1), (x1 - RIM, y1)]
    return [*start, (x1 + LEG, lane), (x1 + LEG, y1 + (RIM if lane > y1 else -RIM))]


def midpoint(points: Sequence[Point]) -> Point:
    """The middle of the polyline's longest segment: where its hover label sits."""
    best = max(
        range(len(points) - 1),
        key=lambda i: abs(points[i + 1][0] - points[i][0]) + abs(points[i + 1][1] - points[i][1]),
    )
    (xa, ya), (xb, yb) = points[best], points[best + 1]
    return (xa + xb) / 2, (ya + yb) / 2
