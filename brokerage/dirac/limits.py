"""Running limits and matching delays at the pilot's site: DIRAC's Limiter negative conditions (reference §6)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from brokerage.dirac.taskqueues import TaskQueues
from brokerage.framework import Reads, Step
from brokerage.model.gdpconfig import Config
from brokerage.model.profiles import rule

# Limiter attributes that become conditions on task queues: multi-valued ones test the task queue's list ...
MULTI_ATTRS: dict[str, str] = {
    "GridCE": "GridCEs", "Site": "Sites", "Platform": "Platforms", "JobType": "JobTypes", "Tag": "Tags",
}  # fmt: skip
# ... single-valued ones its column
SINGLE_ATTRS: tuple[str, ...] = ("Owner", "OwnerGroup", "CPUTime")
# DIRAC 9.1.22 limits only the attributes that are columns of JobDB's Jobs table (switch dirac_limits_job_columns)
JOB_COLUMNS: tuple[str, ...] = ("JobType", "Site", "Owner", "OwnerGroup")
RUNNING_LIMIT = "RunningLimit"
MATCHING_DELAY = "MatchingDelay"


STEPS: tuple[Step, ...] = (
    Step("limits", Reads(config=("DIRAC_CHECK_JOB_LIMITS", "DIRAC_CHECK_MATCHING_DELAY", "RULES"))),
)
"""The gdpconfig keys the running limits and matching delays read (negative_conditions)."""


@dataclass(frozen=True)
class Hit:
    """One limited value: where it comes from and the sentence saying why."""

    attribute: str
    value: str
    source: str  # RunningLimit or MatchingDelay
    text: str


@dataclass
class Negative:
    """The negative condition of one site: limited values per attribute, and attributes DIRAC cannot express."""

    hits: dict[str, list[Hit]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, hit: Hit) -> None:
        """Record HIT (a value already limited keeps its first source)."""
        values = self.hits.setdefault(hit.attribute, [])
        if all(h.value != hit.value for h in values):
            values.append(hit)


@dataclass(frozen=True)
class LimiterTables:
    """The Limiter's tables by site: limit rows (GridCE, Attribute, Value, Limit), running counts, delay rows."""

    limits: dict[str, list[tuple[str, str, str, int]]]
    running: dict[tuple[str, str, str], int]
    delays: dict[str, list[tuple[str, str, int, float]]]

    @classmethod
    def from_frames(cls, limits: pd.DataFrame, counts: pd.DataFrame, delays: pd.DataFrame) -> LimiterTables:
        """Index dirac_running_limits, dirac_running_counts and dirac_matching_delays by site (once per snapshot).

        Usage: ``t = snap.tables; LimiterTables.from_frames(t["dirac_running_limits"], t["dirac_running_counts"],
        t["dirac_matching_delays"])``
        """
        by_site: dict[str, list[tuple[str, str, str, int]]] = {}
        for site, ce, attr, value, limit in limits[["Site", "GridCE", "Attribute", "Value", "Limit"]].itertuples(
            index=False
        ):
            by_site.setdefault(site, []).append((ce, attr, value, int(limit)))
        running = {
            (s, a, v): int(n)
            for s, a, v, n in counts[["Site", "Attribute", "Value", "Running"]].itertuples(index=False)
        }
        delay_rows: dict[str, list[tuple[str, str, int, float]]] = {}
        for site, attr, value, delay, since in delays[
            ["Site", "Attribute", "Value", "Delay", "SinceLastMatch"]
        ].itertuples(index=False):
            delay_rows.setdefault(site, []).append((attr, value, int(delay), float(since)))
        return cls(by_site, running, delay_rows)


def negative_conditions(tables: LimiterTables, site: str, grid_ce: str | None, config: Config) -> Negative:
    """Limited (attribute, value) pairs at SITE: running >= limit (site rows, then the GridCE's rows over them,
    compared with the site-wide count) and values matched there less than their delay ago.

    Usage: ``neg = negative_conditions(tables, "LCG.CERN.cern", None, Config())``
    """
    neg = Negative()
    if config["DIRAC_CHECK_JOB_LIMITS"]:
        _running_limits(neg, tables, site, grid_ce, config)
    if config["DIRAC_CHECK_MATCHING_DELAY"]:
        for attr, value, delay, since in tables.delays.get(site, ()):
            if since == since and since < delay:  # NaN: never matched there
                left = delay - since
                text = f"{attr}={value} delayed at {site}: matched {since:g} s ago, {left:g} s of {delay} s left"
                neg.add(Hit(attr, value, MATCHING_DELAY, text))
    for attr in list(neg.hits):
        if attr not in MULTI_ATTRS and attr not in SINGLE_ATTRS:
            neg.notes.append(f"limit on {attr} ignored: DIRAC builds no task-queue condition for it")
    return neg


def _running_limits(neg: Negative, tables: LimiterTables, site: str, grid_ce: str | None, config: Config) -> None:
    """The running-limit hits at SITE. Seed profile: a CE-level limit replaces the site's on the same value.
    DIRAC 9.1.22: site and CE limits are checked apart and their hits merged (dirac_ce_limits_merged), and only
    the Jobs table's columns are limited (dirac_limits_job_columns)."""
    merge = rule(config, "dirac_ce_limits_merged")
    columns_only = rule(config, "dirac_limits_job_columns")
    merged: dict[tuple[str, str, str], tuple[int, str]] = {}
    for ce, attr, value, limit in tables.limits.get(site, ()):
        if ce not in ("", grid_ce or ""):
            continue
        if columns_only and attr not in JOB_COLUMNS:
            note = f"limit on {attr} ignored: not a column of DIRAC's Jobs table ('Attribute does not exist')"
            if note not in neg.notes:
                neg.notes.append(note)
            continue
        key = (attr, value, ce if merge else "")
        if key not in merged or ce:  # without merging a CE-level limit replaces the site-wide one
            merged[key] = (limit, ce)
    for (attr, value, _), (limit, ce) in merged.items():
        n = tables.running.get((site, attr, value), 0)
        if n >= limit:
            where = f"{site} (CE {ce})" if ce else site
            neg.add(Hit(attr, value, RUNNING_LIMIT, f"{attr}={value} at {where}: {n} running ≥ limit {limit}"))


def hit_matrix(neg: Negative, tqs: TaskQueues) -> tuple[np.ndarray, list[tuple[str, list[Hit], np.ndarray]]]:
    """Which task queues the negative condition excludes, and per attribute which of its values each one hits.

    DIRAC ORs one piece per attribute, so a task queue is excluded only when it hits every limited attribute;
    several values of a single-valued attribute never exclude anything ('a' != x OR 'b' != x).
    Usage: ``excluded, per_attr = hit_matrix(neg, tqs)``
    """
    n = len(tqs)
    excluded = np.ones(n, dtype=bool)
    per_attr: list[tuple[str, list[Hit], np.ndarray]] = []
    for attr, hits in neg.hits.items():
        if attr in MULTI_ATTRS:
            f = tqs.fields[MULTI_ATTRS[attr]]
            m = np.column_stack([f.has(h.value) for h in hits])
        elif attr in SINGLE_ATTRS:
            column = {"Owner": tqs.owner, "OwnerGroup": tqs.group, "CPUTime": tqs.cpu_time}[attr]
            if len({h.value for h in hits}) > 1:
                m = np.zeros((n, len(hits)), dtype=bool)
            else:
                v: object = int(hits[0].value) if attr == "CPUTime" and hits[0].value.isdigit() else hits[0].value
                m = (column == v)[:, None] if n else np.zeros((0, 1), dtype=bool)
        else:
            continue
        per_attr.append((attr, hits, m))
        excluded &= m.any(axis=1)
    if not per_attr:
        excluded[:] = False
    return excluded, per_attr
