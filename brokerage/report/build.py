"""Collect brokerage decisions of one task, a list of tasks or every waiting task into a Report."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from brokerage import runs
from brokerage.brokers import batch
from brokerage.brokers.router import NUCLEUS_SEED, label_of
from brokerage.model import views
from brokerage.model.cache import GridCache, cache_for
from brokerage.model.errors import UnknownIdError
from brokerage.model.explain import Decision
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.model.versions import config_version, snapshot_version
from brokerage.model.waiting import waiting_task_ids
from brokerage.report.entry import TaskEntry
from brokerage.report.summary import summarise
from brokerage.report.whatif import WhatIfSection, whatif_section
from brokerage.whatif.compare import affected_brokers

Progress = Callable[[int, int], None]
SCOPE_ALL = "all waiting tasks"


class UnknownTaskError(UnknownIdError):
    """Task ids asked for that the snapshot does not hold."""

    def __init__(self, missing: Sequence[int], known: int) -> None:
        ids = ", ".join(str(t) for t in missing)
        noun = "task" if len(missing) == 1 else "tasks"
        super().__init__(f"unknown {noun} {ids}: not in the snapshot ({known} tasks)")
        self.missing = list(missing)


@dataclass(frozen=True)
class Report:
    """Decisions of the tasks in scope plus where they came from (meta) and grid-wide totals (summary).

    Usage: ``report = build_report(snap, config, [4242]); report.tasks[0].job.status``
    """

    meta: dict[str, Any]
    tasks: list[TaskEntry]
    summary: dict[str, Any] = field(default_factory=dict)
    whatif: WhatIfSection | None = None  # before/after when made with what-if edits

    @property
    def whole_grid(self) -> bool:
        """Whether the report covers every waiting task (rather than tasks picked by id)."""
        return self.meta.get("scope") == SCOPE_ALL


def tool_version() -> str:
    """``brokerage-dashboard <version>`` of the installed package."""
    try:
        return f"brokerage-dashboard {version('brokerage-dashboard')}"
    except PackageNotFoundError:
        return "brokerage-dashboard (not installed)"


def _utc_iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def check_task_ids(snap: GridSnapshot, task_ids: Sequence[int]) -> list[int]:
    """TASK_IDS as ints without repeats; UnknownTaskError naming every id the snapshot lacks.

    Usage: ``ids = check_task_ids(snap, [1, 2])``
    """
    ids = list(dict.fromkeys(int(t) for t in task_ids))
    known = set(snap.tasks["jeditaskid"].astype(int)) if len(snap.tasks) else set()
    missing = [t for t in ids if t not in known]
    if missing:
        raise UnknownTaskError(missing, len(known))
    return ids


def _meta(
    snap: GridSnapshot, base: Config, config: Config, overrides: Mapping[str, Any], ids: list[int], explicit: bool
) -> dict[str, Any]:
    title = (f"task {ids[0]}" if len(ids) == 1 else f"{len(ids)} tasks") if explicit else SCOPE_ALL
    return {
        "title": title,
        "scope": "tasks" if explicit else SCOPE_ALL,
        "task_ids": ids if explicit else None,
        "snapshot": snap.key,
        "snapshot_taken_at": _utc_iso(snap.taken_at),
        "origin": "unknown",
        "generated_at": _utc_iso(datetime.now(UTC)),
        "config_version": config.version,
        "config_fingerprint": config.fingerprint(),
        "snapshot_version": snapshot_version(snap),
        "config_label": config_version(config),  # "vN", "defaults" or "what-if on vN (KEY=VALUE, ...)"
        "overrides": dict(overrides),
        "changed_from_stored": {k: {"stored": base.get(k), "whatif": config.get(k)} for k in overrides},
        "changed_from_defaults": config.changed(),
        "nucleus_seed": NUCLEUS_SEED,
        "tool": tool_version(),
    }


def _njobs(row: Mapping[str, Any]) -> float:
    n = row.get("chunk_njobs")
    return 1.0 if n is None else float(n)


def _on_cluster(
    snap: GridSnapshot, config: Config, keys: list[batch.Key], cache: GridCache, tasks: int, progress: Progress | None
) -> list[tuple[batch.Key, Decision | batch.TaskFailure]]:
    """Every brokerage of KEYS on the cluster, failures kept; PROGRESS in tasks, estimated from chunks done."""

    def chunk_progress(done: int, total: int) -> None:
        if progress:
            progress(done * tasks // max(total, 1), tasks)

    return runs.decide_all(snap, config, keys, cache=cache, progress=chunk_progress)


def _entries(
    snap: GridSnapshot, config: Config, ids: list[int], cache: GridCache, progress: Progress | None,
    brokers: frozenset[str] = batch.ALL_BROKERS,
) -> list[TaskEntry]:  # fmt: skip
    """Every task's job brokerage and, while it still needs one, its nucleus brokerage (the runner's order); only
    the BROKERS named (the others' decisions are None)."""
    keys = batch.plan(cache, ids, brokers)
    decided: dict[int, dict[str, Decision]] = {t: {} for t in ids}
    errors: dict[int, str] = {}
    left = {t: 0 for t in ids}  # brokerages still to run per task: progress counts whole tasks
    for _, tid in keys:
        left[tid] += 1
    done = sum(1 for n in left.values() if n == 0)
    if runs.use_cluster(len(keys)):  # a big grid: progress comes per chunk
        decisions: Iterable[tuple[batch.Key, Decision | batch.TaskFailure]] = _on_cluster(
            snap, config, keys, cache, len(ids), progress
        )
        progress = None
    else:
        decisions = batch.run(snap, config, keys, cache=cache, keep_failures=True)
    for (name, tid), outcome in decisions:
        if isinstance(outcome, batch.TaskFailure):
            errors.setdefault(tid, outcome.error)  # one malformed task must not sink a grid-wide report
        else:
            decided[tid][name] = outcome
        left[tid] -= 1
        if left[tid] == 0:
            done += 1
            if progress:
                progress(done, len(ids))
    out = []
    for tid in ids:
        row = views.task_row(cache, tid)
        got = decided[tid]
        job = next((d for name, d in got.items() if name != batch.NUCLEUS_NAME), None)
        out.append(
            TaskEntry(
                tid, label_of(row), str(row.get("status") or ""), _njobs(row), job,
                got.get(batch.NUCLEUS_NAME), errors.get(tid, ""),
            )
        )  # fmt: skip
    return out


def build_report(
    snap: GridSnapshot,
    config: Config,
    task_ids: Sequence[int] | None,
    *,
    overrides: Mapping[str, Any] | None = None,
    meta: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
    cache: GridCache | None = None,
) -> Report:
    """Broker TASK_IDS (None: every waiting task, highest priority first) under CONFIG plus what-if OVERRIDES.

    CONFIG is the stored gdpconfig (its own overrides count as what-if too); OVERRIDES are validated first, so a
    bad value raises ConfigError before any work. META adds or replaces metadata (e.g. ``origin``). PROGRESS is
    called with (tasks done, total) after every task.
    Usage: ``report = build_report(snap, config, None, overrides={"NQUEUED_SAT_CAP": 300}, meta={"origin": path})``
    """
    all_overrides = {**config.overrides, **(overrides or {})}
    base = replace(config, overrides={})
    effective = base.with_overrides(all_overrides)
    explicit = task_ids is not None
    ids = check_task_ids(snap, task_ids) if task_ids is not None else waiting_task_ids(snap)
    info = _meta(snap, base, effective, effective.overrides, ids, explicit)
    info.update(meta or {})
    t0 = time.perf_counter()
    grid = cache_for(snap, cache)
    edited = affected_brokers(effective.overrides) if effective.overrides else frozenset()
    if progress:
        progress(0, len(ids) * (2 if edited else 1))
    entries = _entries(snap, effective, ids, grid, _half(progress, 0) if edited else progress)
    section = None
    if effective.overrides:  # before/after: the brokers that read an edited key, again under the stored config
        stored = _entries(snap, base, ids, grid, _half(progress, 1), edited) if edited else []
        section = whatif_section(stored, entries, info["changed_from_stored"])
    info["seconds"] = round(time.perf_counter() - t0, 3)
    return Report(info, entries, summarise(entries), section)


def _half(progress: Progress | None, which: int) -> Progress | None:
    """PROGRESS of one of two passes over the tasks (WHICH 0: the first half of the bar, 1: the second)."""
    if progress is None:
        return None
    return lambda done, total: progress(which * total + done, 2 * total)
