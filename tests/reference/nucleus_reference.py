"""Scalar reference of the ATLAS production task brokerage (nucleus choice), written to read like the seed.

The seed is ``shared/seeds/000_f8f78ef8e3a9ac50.txt`` ("ATLAS Production Task Brokerage", "Special Brokerage
for ATLAS Full-chain") with ``003_96f1f03d4ebd0525.txt`` ("Task brokerage"). This module walks the nuclei one by
one, asks each check in the seed's order and computes the weight with Python floats. It never calls the
vectorised broker (``brokerage.brokers.nucleus``). The one shared piece is the job check: "the nucleus must be
able to execute the workload" is answered by the production job filters themselves (hint mode, one nucleus at a
time), because that check is defined as "what the job brokerage would accept"; those filters have their own
reference in ``production_reference``.

Usage: ``result = broker(snap, 4242, Config(), seed=0); result.chosen``
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from brokerage.checks import production_queues
from brokerage.framework import apply_filters
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from tests.reference.production_reference import _rows as rows_of

# --- names the seed uses ------------------------------------------------------------------------

ACTIVE = "ACTIVE"
STATUSES_WITH_REMAINING_WORK = ("ready", "scouting", "running", "pending")
CORE_POWER = 10.0  # seed 003: "(corePower=10)"
SECONDS_PER_DAY = 24 * 3600.0  # seed 003: "/24/3600"
GB_PER_TB = 1024.0
CPUTIME_WHEN_UNSET = 300.0
ONE_HS06_SECOND_IN_DAYS = 1.0 / SECONDS_PER_DAY  # smallest RW in the weight (RW_OFFSET may be 0)
QUEUED_KEY = "Production Output_queued"
OUTPUT_ENDPOINT_TYPE = "DATADISK"  # seed 003: space "associated to the output endpoint type"
NETWORK_MAX_AGE = pd.Timedelta(minutes=60)


@dataclass
class RefNucleus:
    """A nucleus that passed every check: its weight, the factors of the weight and its probability."""

    name: str
    weight: float
    factors: dict[str, float]
    probability: float = 0.0


@dataclass
class RefResult:
    """What the reference decided for one task."""

    status: str  # ok or pending
    candidates: list[RefNucleus]
    skips: dict[str, str]  # nucleus -> criteria code
    chosen: str | None
    locality_disabled: bool = False
    pending_minutes: int | None = None
    rw_days: dict[str, float] = field(default_factory=dict)

    @property
    def ranked_names(self) -> list[str]:
        """Candidate names, best first."""
        return [c.name for c in self.candidates]


# --- reading the snapshot row by row ------------------------------------------------------------


# rows as plain dicts (NaN/NaT -> None): the same reading as the production reference
_rows = rows_of


def _cpu_time(task: dict[str, Any]) -> float:
    cpu = task.get("cputime")
    cpu = CPUTIME_WHEN_UNSET if cpu is None else float(cpu)
    if str(task.get("cputimeunit") or "").startswith("mHS06"):
        cpu = cpu / 1000.0
    return cpu


def remaining_work_seconds(task: dict[str, Any], its_datasets: list[dict[str, Any]]) -> float:
    """The task's RW: Σ over its master datasets of (nEvents − nEventsUsed) × cpuTime, in HS06 s."""
    total = 0.0
    for d in its_datasets:
        if d["is_master"]:
            total += max(float(d["nevents"]) - float(d["neventsused"]), 0.0) * _cpu_time(task)
    return total


def _by_task(rows: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(int(r["jeditaskid"]), []).append(r)
    return out


# --- the brokerage ------------------------------------------------------------------------------


@dataclass
class _Tables:
    """The snapshot's tables as plain rows, read once per call."""

    tasks: dict[int, dict[str, Any]]
    sites: list[dict[str, Any]]
    endpoints: list[dict[str, Any]]
    datasets: dict[int, list[dict[str, Any]]]
    replicas: dict[int, list[dict[str, Any]]]
    network: list[dict[str, Any]]


def _tables(snap: GridSnapshot) -> _Tables:
    return _Tables(
        tasks={int(t["jeditaskid"]): t for t in _rows(snap.tasks)},
        sites=_rows(snap.sites),
        endpoints=_rows(snap.ddm_endpoints),
        datasets=_by_task(_rows(snap.datasets)),
        replicas=_by_task(_rows(snap.dataset_replicas)),
        network=_rows(snap.network),
    )


class _Batch:
    """What earlier tasks of the same cycle decided: their nucleus and, for RW, their priority."""

    def __init__(self) -> None:
        self.nucleus_of: dict[int, str] = {}
        self.counted: dict[int, str] = {}


def broker(snap: GridSnapshot, jeditaskid: int, config: Config, seed: int = 0) -> RefResult:
    """Choose a nucleus for one task, the plain way.

    Usage: ``broker(snap, 1, Config()).chosen``
    """
    return broker_many(snap, [jeditaskid], config, seed)[0]


def broker_many(snap: GridSnapshot, task_ids: list[int], config: Config, seed: int = 0) -> list[RefResult]:
    """Tasks one after the other, highest currentPriority first; each choice counts in the RW of the next ones."""
    tables = _tables(snap)
    tasks = tables.tasks
    rng = np.random.default_rng(seed)
    batch = _Batch()
    results: dict[int, RefResult] = {}
    wanted = list(dict.fromkeys(int(t) for t in task_ids))
    wanted.sort(key=lambda t: (-(tasks[t]["currentpriority"] or 0), t))
    for tid in wanted:
        result = _one(snap, tasks[tid], tables, config, rng, batch)
        results[tid] = result
        if result.chosen is not None:
            batch.nucleus_of[tid] = result.chosen
            if not tasks[tid].get("nucleus"):
                batch.counted[tid] = result.chosen
    return [results[int(t)] for t in task_ids]


def _one(
    snap: GridSnapshot,
    task: dict[str, Any],
    tables: _Tables,
    cfg: Config,
    rng: np.random.Generator,
    batch: _Batch,
) -> RefResult:
    # "Tasks that already have a nucleus keep it" (reference §2.3)
    if task.get("nucleus"):
        return RefResult("ok", [RefNucleus(task["nucleus"], 1.0, {}, 1.0)], {}, task["nucleus"])

    tasks, sites, endpoints, datasets = tables.tasks, tables.sites, tables.endpoints, tables.datasets
    replicas = tables.replicas.get(int(task["jeditaskid"]), [])
    endpoint_named = {e["ddm_endpoint_name"]: e for e in endpoints}
    bare_of = {s["site_name"]: s["bare_nucleus"] or "" for s in sites}
    priority = task["currentpriority"] or 0

    # 1. "Generate the primary list of nuclei"
    nuclei = [s for s in sites if s["role"] == "nucleus"]

    # RW: "The total sum of task RWs in the nucleus. Their priorities are equal to or larger than that of the
    # assigned task." Counted in HS06 s, used in HS06 day.
    def rw_days(nucleus: str) -> float:
        total = 0.0
        for t in tasks.values():
            tid = int(t["jeditaskid"])
            if tid in batch.counted:
                at = batch.counted[tid]
            elif t["status"] in STATUSES_WITH_REMAINING_WORK:
                at = t.get("nucleus")
            else:
                continue
            if at == nucleus and (t["currentpriority"] or 0) >= priority:
                total += remaining_work_seconds(t, datasets.get(tid, []))
        return total / SECONDS_PER_DAY

    def disk_storages(nucleus: str) -> list[dict[str, Any]]:
        return [
            e for e in endpoints if e["site_name"] == nucleus and not e["is_tape"] and e["type"] == OUTPUT_ENDPOINT_TYPE
        ]

    def backlog(nucleus: str) -> float:
        oldest = pd.Timestamp(snap.taken_at) - NETWORK_MAX_AGE
        last: dict[str, float] = {}
        for row in tables.network:
            if row["dst"] != nucleus or row["key"] != QUEUED_KEY:
                continue
            if row["ts"] is None or pd.Timestamp(row["ts"]) >= oldest:
                last[row["src"]] = float(row["value"])
        return sum(last.values())

    # the input the task reads, and how much of it each nucleus holds
    # "All input datasets are considered if the taskBrokerOnMaster task parameter is set to False or is
    # unspecified. Otherwise, only the primary input dataset is considered"
    considered = [
        d for d in datasets.get(int(task["jeditaskid"]), []) if d["is_master"] or not task["taskbrokeronmaster"]
    ]
    total_size = sum(float(d["size_gb"]) for d in considered)
    total_files = sum(float(d["nfiles"]) for d in considered)

    def local_input(nucleus: str) -> tuple[float, float, float]:
        """(size on any storage, size on disk, files) of the input held by the nucleus."""
        size_any = size_disk = files = 0.0
        for d in considered:
            best_any = best_disk = best_files = 0.0
            for r in replicas:
                if r["jeditaskid"] != d["jeditaskid"] or r["datasetid"] != d["datasetid"]:
                    continue
                e = endpoint_named.get(r["ddm_endpoint_name"])
                if e is None or e["site_name"] != nucleus:
                    continue
                best_any = max(best_any, float(r["size_gb"]))
                best_files = max(best_files, float(r["nfiles"]))
                if not e["is_tape"]:
                    best_disk = max(best_disk, float(r["size_gb"]))
            size_any += min(best_any, float(d["size_gb"]))
            size_disk += min(best_disk, float(d["size_gb"]))
            files += min(best_files, float(d["nfiles"]))
        return size_any, size_disk, files

    # 2. the checks, in the seed's order; a nucleus leaves at the first check it fails
    skips: dict[str, str] = {}
    alive = [n["site_name"] for n in nuclei]
    state_of = {n["site_name"]: n["state"] for n in nuclei}

    def drop(code_of: dict[str, str | None]) -> None:
        nonlocal alive
        for name in list(alive):
            code = code_of.get(name)
            if code:
                skips[name] = code
        alive = [n for n in alive if not code_of.get(n)]

    # "Generate the primary list of nuclei in the ACTIVE status."
    drop({n: None if state_of[n] == ACTIVE else "-status" for n in alive})

    # "Nuclei are skipped if there are long transfer backlogs unless t1Weight of the task is negative."
    t1 = task.get("t1weight")
    if not (t1 is not None and t1 < 0):
        drop({n: "-transfer_backlog" if backlog(n) > cfg["NQUEUED_NUC_CAP"] else None for n in alive})

    # "Nuclei must have associated storages."
    drop({n: None if disk_storages(n) else "-match" for n in alive})

    # "spaceFree + spaceExpired - normalizedExpOutSize x RW > diskThreshold"
    key = f"DISK_THRESHOLD_{task['gshare']}" if task.get("gshare") else "DISK_THRESHOLD"
    threshold_tb = cfg[key] if (key in cfg.overrides or key in cfg.stored) else cfg["DISK_THRESHOLD"]
    threshold_gb = float(threshold_tb) * GB_PER_TB

    def enough_space(n: str) -> bool:
        demand_gb = rw_days(n) / CORE_POWER * float(cfg["OUTPUT_GB_PER_CORE_DAY"])
        return all(
            float(e["space_free"]) + float(e["space_expired"]) - demand_gb > threshold_gb for e in disk_storages(n)
        )

    drop({n: None if enough_space(n) else "-space" for n in alive})

    # data locality
    def locality(n: str) -> str | None:
        size_any, _, files = local_input(n)
        # "Nuclei with incomplete local data can be used if the inputPreStaging task parameter is set to True"
        if task["inputprestaging"] and (files > 0 or size_any > 0):
            return None
        # "The fraction of the data size locally available ... must be larger than INPUT_SIZE_FRACTION"
        if total_size > cfg["INPUT_SIZE_THRESHOLD"] and not size_any / total_size > cfg["INPUT_SIZE_FRACTION"] / 100:
            return "-insize"
        # "The fraction of the number of files locally available ... must be larger than INPUT_NUM_FRACTION"
        if total_files > cfg["INPUT_NUM_THRESHOLD"] and not files / total_files > cfg["INPUT_NUM_FRACTION"] / 100:
            return "-innum"
        return None

    locality_codes = {n: locality(n) for n in alive}
    io = task.get("iointensity")
    nobody_passes = alive and all(code is not None for code in locality_codes.values())
    low_io_small_input = (io is None or io <= cfg["MIN_IO_INTENSITY_WITH_LOCAL_DATA"]) and total_size <= cfg[
        "MIN_INPUT_SIZE_WITH_LOCAL_DATA"
    ]
    high_priority = (task["taskpriority"] or 0) >= cfg["MAX_TASK_PRIO_WITH_LOCAL_DATA"]
    # "The entire data locality check is disabled if no nuclei pass and ..."
    locality_disabled = bool(nobody_passes and (low_io_small_input or high_priority))
    if not locality_disabled:
        drop(locality_codes)

    # "The nucleus must be able to execute the workload."
    pctx = production_queues.make_context(task, cfg, GridCache(snap), hint_mode=True)

    def can_run_jobs(n: str) -> bool:
        qa = pctx.qa
        mine = (qa["atlas_site"] == n) & np.isin(qa["type"], ("production", "unified")) & ~qa.name_has_test
        survivors, _, _ = apply_filters(qa.name, mine, production_queues.FILTERS, pctx)
        return bool(survivors.any())

    drop({n: None if can_run_jobs(n) else "-job" for n in alive})

    # full-chain: "bareNucleus=only ... accepts only full-chain workflows"; fullChain=only / require / capable
    parent_nucleus = None
    pid = task.get("parent_tid")
    if pid is not None and int(pid) != int(task["jeditaskid"]):
        parent_nucleus = batch.nucleus_of.get(int(pid)) or (tasks.get(int(pid)) or {}).get("nucleus")
    parent_on_bare = bare_of.get(parent_nucleus, "") in ("only", "allow")
    mode = task["fullchain"] or ""
    if mode == "capable" and not parent_on_bare:
        mode = ""  # "Otherwise, capable is ignored and the task can go to a normal nucleus."

    def full_chain(n: str) -> str | None:
        bare = bare_of.get(n, "")
        if mode == "" and bare == "only":
            return "-full_chain"
        if mode == "only" and bare != "only":
            return "-full_chain"
        if mode == "require" and bare not in ("only", "allow"):
            return "-full_chain"
        if mode and parent_on_bare and n != parent_nucleus:
            return "-full_chain"
        return None

    drop({n: full_chain(n) for n in alive})

    # 4. "If all nuclei are skipped, the task is pending for 30 min and then gets retried."
    if not alive:
        return RefResult("pending", [], skips, None, locality_disabled, int(cfg["NUCLEUS_PENDING_MINUTES"]))

    # 3. the weight
    io_intensive = io is not None and io > cfg["MIN_IO_INTENSITY_WITH_LOCAL_DATA"]
    use_data = not locality_disabled and total_size > 0
    candidates = []
    rws = {}
    for n in alive:
        storage = min(
            disk_storages(n), key=lambda e: (float(e["space_free"]) + float(e["space_expired"]), e["ddm_endpoint_name"])
        )
        free = float(storage["space_free"]) + float(storage["space_expired"])
        total_space = float(storage["space_total"])
        size_any, size_disk, _ = local_input(n)
        rws[n] = rw_days(n)
        rw_factor = 1.0 / max(float(cfg["RW_OFFSET"]), ONE_HS06_SECOND_IN_DAYS, rws[n])
        local_factor = size_any / total_size if (io_intensive and use_data) else 1.0
        tape = float(cfg["TAPE_WEIGHT"]) if (use_data and size_any > size_disk) else 1.0
        space = free / total_space if total_space > 0 else 0.0
        factors = {"rw": rw_factor, "local": local_factor, "tape": tape, "space": space}
        candidates.append(RefNucleus(n, local_factor * tape * space * rw_factor, factors))
    candidates.sort(key=lambda c: (-c.weight, c.name))
    total_weight = sum(c.weight for c in candidates)
    drawn = [c.weight for c in candidates] if total_weight > 0 else [1.0] * len(candidates)
    for c, w in zip(candidates, drawn, strict=True):
        c.probability = w / sum(drawn)
    # choose: t = U(0, Σw); walk the ranked list, the first nucleus whose running sum exceeds t wins
    t = rng.random() * float(np.cumsum(drawn)[-1])
    chosen = None
    running = 0.0
    for c, w in zip(candidates, drawn, strict=True):
        running += w
        if running > t and w > 0:
            chosen = c.name
            break
    if chosen is None:
        chosen = [c.name for c, w in zip(candidates, drawn, strict=True) if w > 0][-1]
    return RefResult("ok", candidates, skips, chosen, locality_disabled, None, rws)
