"""Per-snapshot numpy views of queues, storages and job counts that the vectorised brokers share."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from pandas.core.dtypes.cast import maybe_box_native

from brokerage.model.cache import GridCache
from brokerage.model.errors import UnknownIdError
from brokerage.model.profiles import rule
from brokerage.model.pseudoqueues import UNIFIED_CAPABILITY, pseudo_queue_columns
from brokerage.model.tables import DEFAULT_VO

QUEUED_STATUSES = ("defined", "assigned", "activated", "starting")
ANALYSIS_SOURCES = ("user", "panda")  # JobUtils.analy_sources: labels whose jobs use a queue's 'analysis' scope
COUNT_STATUSES = ("running", "defined", "assigned", "activated", "starting", "transferring")


@dataclass(frozen=True)
class QueueArrays:
    """Every queue column as a numpy array, plus each queue's site role and storages."""

    name: np.ndarray
    index: dict[str, int]
    col: dict[str, np.ndarray]
    site_is_nucleus: np.ndarray
    name_has_test: np.ndarray
    out_endpoint: np.ndarray  # index into EndpointArrays, -1 when none (relations of scope 'default')
    rel_queue: np.ndarray  # queue index of each panda_ddm_relation row (sorted by queue)
    rel_endpoint: np.ndarray  # endpoint index of each relation row
    laststart_hours: np.ndarray  # hours since laststart (inf when never)
    lastpilot_hours: np.ndarray  # hours since the last pilot (NaN when the snapshot does not say)
    # output endpoint of analysis jobs: the 'analysis' scope's default write where the queue has that scope, else
    # out_endpoint (PanDA's select_scope for prodSourceLabel user/panda)
    out_endpoint_analysis: np.ndarray
    # input relations of analysis jobs (sorted by queue): the 'analysis' scope's where the queue has that scope, else
    # the 'default' scope's (select_scope's scope_input)
    rel_queue_analysis: np.ndarray
    rel_endpoint_analysis: np.ndarray

    @property
    def n(self) -> int:
        """Number of queues."""
        return len(self.name)

    def __getitem__(self, column: str) -> np.ndarray:
        return self.col[column]


@dataclass(frozen=True)
class EndpointArrays:
    """DDM endpoint columns as numpy arrays."""

    name: np.ndarray
    index: dict[str, int]
    col: dict[str, np.ndarray]

    def __getitem__(self, column: str) -> np.ndarray:
        return self.col[column]


def queue_arrays(cache: GridCache) -> QueueArrays:
    """Numpy view of the queues table (built once per snapshot).

    Usage: ``qa = queue_arrays(GridCache(snap)); qa["corecount"]``
    """
    return cache.get("queue_arrays", lambda: _build_queue_arrays(cache))


def pseudo_queue_arrays(cache: GridCache, resource_type: str) -> QueueArrays:
    """queue_arrays with each unified queue's corecount/minrss/maxrss those of its RESOURCE_TYPE pseudo queue.

    Built once per snapshot and resource type; the very queue_arrays when the grid has no unified queue.
    Usage: ``pseudo_queue_arrays(cache, task_resource_type(task))["maxrss"]``
    """

    def build() -> QueueArrays:
        qa = queue_arrays(cache)
        if not (qa["capability"] == UNIFIED_CAPABILITY).any():
            return qa
        return dataclasses.replace(qa, col=pseudo_queue_columns(qa.col, resource_type))

    return cache.get(("queue_arrays", resource_type), build)


def endpoint_arrays(cache: GridCache) -> EndpointArrays:
    """Numpy view of the ddm_endpoints table (built once per snapshot)."""

    def build() -> EndpointArrays:
        df = cache.snap.ddm_endpoints
        names = df["ddm_endpoint_name"].to_numpy(dtype=object)
        return EndpointArrays(names, {n: i for i, n in enumerate(names)}, {c: df[c].to_numpy() for c in df.columns})

    return cache.get("endpoint_arrays", build)


def _build_queue_arrays(cache: GridCache) -> QueueArrays:
    snapshot = cache.snap
    q = snapshot.queues
    names = q["panda_queue"].to_numpy(dtype=object)
    index = {n: i for i, n in enumerate(names)}
    col: dict[str, Any] = {
        c: q[c].to_numpy(dtype=float) if q[c].dtype.kind in "iuf" else q[c].to_numpy() for c in q.columns
    }
    roles = dict(zip(snapshot.sites["site_name"], snapshot.sites["role"], strict=True))
    site_is_nucleus = np.array([roles.get(s) == "nucleus" for s in col["atlas_site"]], dtype=bool)
    name_has_test = np.array(["test" in n.lower() for n in names], dtype=bool)
    ep = endpoint_arrays(cache)
    rel = snapshot.panda_ddm_relation
    scope = rel["scope"].to_numpy(dtype=object) if "scope" in rel else np.full(len(rel), "default", dtype=object)
    rq = rel["panda_queue"].map(index).to_numpy()
    re_ = rel["ddm_endpoint_name"].map(ep.index).to_numpy()
    ok = ~(pd.isna(rq) | pd.isna(re_))
    analysis = ok & (scope == "analysis")
    out_analysis = _default_write(rq[analysis], re_[analysis], rel["default_write"].to_numpy()[analysis], len(names))
    ok &= scope == "default"
    an_q, an_e = _analysis_inputs(rq, re_, analysis, ok, len(names))
    rq = rq[ok].astype(np.int64)
    re_ = re_[ok].astype(np.int64)
    dw = rel["default_write"].to_numpy()[ok]
    order = np.argsort(rq, kind="stable")
    out_ep = _default_write(rq, re_, dw, len(names))
    out_analysis = np.where(out_analysis >= 0, out_analysis, out_ep)
    taken = pd.Timestamp(snapshot.taken_at)
    hours = ((taken - q["laststart"]).dt.total_seconds() / 3600.0).to_numpy(dtype=float, na_value=np.inf)
    pilot = pd.to_datetime(q["lastpilot"], utc=True) if "lastpilot" in q else pd.Series(pd.NaT, index=q.index)
    pilot_hours = ((taken - pilot).dt.total_seconds() / 3600.0).to_numpy(dtype=float, na_value=np.nan)
    return QueueArrays(
        names,
        index,
        col,
        site_is_nucleus,
        name_has_test,
        out_ep,
        rq[order],
        re_[order],
        hours,
        pilot_hours,
        out_analysis,
        an_q,
        an_e,
    )


def _analysis_inputs(
    rq: np.ndarray, re_: np.ndarray, analysis: np.ndarray, default: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Analysis jobs' input relations, sorted by queue: the ANALYSIS-scope rows of the N queues that have any, the
    DEFAULT-scope rows of the others (RQ/RE_ queue and endpoint index per relation row)."""
    has_analysis = np.zeros(n, dtype=bool)
    has_analysis[rq[analysis].astype(np.int64)] = True
    default = default & ~has_analysis[np.where(default, rq, 0).astype(np.int64)]
    keep = analysis | default
    q, e = rq[keep].astype(np.int64), re_[keep].astype(np.int64)
    order = np.argsort(q, kind="stable")
    return q[order], e[order]


def input_relations(qa: QueueArrays, prodsourcelabel: Any) -> tuple[np.ndarray, np.ndarray]:
    """(queue index, endpoint index) of the relations a task of PRODSOURCELABEL reads input from, sorted by queue:
    for analysis labels (user, panda) a queue's 'analysis' scope where it has one, else its 'default' scope (PanDA's
    select_scope, scope_input, as getSiteInputStorageEndpointMap reads it).

    Usage: ``rq, re_ = input_relations(qa, "user")``
    """
    if prodsourcelabel in ANALYSIS_SOURCES:
        return qa.rel_queue_analysis, qa.rel_endpoint_analysis
    return qa.rel_queue, qa.rel_endpoint


def _default_write(rq: np.ndarray, re_: np.ndarray, dw: np.ndarray, n: int) -> np.ndarray:
    """Per queue the endpoint of its first default_write relation (RQ/RE_ queue and endpoint index), else -1."""
    out = np.full(n, -1, dtype=np.int64)
    dw = dw.astype(bool)
    for qi, ei in zip(rq[dw][::-1], re_[dw][::-1], strict=True):
        out[int(qi)] = int(ei)
    return out


def without_pilots(qa: QueueArrays, no_pilot_hours: float) -> np.ndarray:
    """Queues without pilots for the last NO_PILOT_HOURS: the last pilot is older than that when the snapshot
    knows it (lastpilot), else no pilot was counted (npilot = 0).

    Usage: ``without_pilots(queue_arrays(snap), config["NO_PILOT_HOURS"])``
    """
    known = ~np.isnan(qa.lastpilot_hours)
    return np.where(known, qa.lastpilot_hours > no_pilot_hours, qa["npilot"] <= 0)


def no_pilot_reasons(qa: QueueArrays, no_pilot_hours: float) -> Callable[[np.ndarray], list[str]]:
    """Sentences for queues without pilots (rows IDX), naming the last pilot's age when known."""

    def reasons(idx: np.ndarray) -> list[str]:
        limit = f"{no_pilot_hours:g}"
        return [
            f"no pilot for the last {limit} hours (npilot=0)" if h != h else f"last pilot {h:.1f} h ago > {limit} h"
            for h in qa.lastpilot_hours[idx].tolist()
        ]

    return reasons


def job_counts(cache: GridCache, gshare: str | None, vo: str = DEFAULT_VO) -> dict[str, np.ndarray]:
    """Jobs per queue by status of VO (JEDI's getJobStatisticsByGlobalShare(vo) counts one VO's jobs) for one global
    share (all shares when GSHARE is None). The ATLAS brokers' own counts are VO atlas'.

    Usage: ``job_counts(cache, "MC Simulation", "atlas")["running"]``
    """

    def build() -> dict[str, np.ndarray]:
        qa = queue_arrays(cache)
        jc = cache.snap.job_counts
        keep = (jc["vo"] == vo).to_numpy(dtype=bool) if "vo" in jc else np.full(len(jc), vo == DEFAULT_VO)
        if gshare is not None:
            keep = keep & (jc["gshare"] == gshare).to_numpy(dtype=bool)
        jc = jc[keep]
        qi = jc["panda_queue"].map(qa.index).to_numpy()
        ok = ~pd.isna(qi)
        qi = qi[ok].astype(np.int64)
        status = jc["jobstatus"].to_numpy()[ok]
        njobs = jc["njobs"].to_numpy(dtype=float)[ok]
        out = {}
        for s in COUNT_STATUSES:
            m = status == s
            out[s] = np.bincount(qi[m], weights=njobs[m], minlength=qa.n)
            out[s].flags.writeable = False
        return out

    return cache.get(("job_counts", gshare, vo), build)


def task_vo(task: dict[str, Any]) -> str:
    """The VO of TASK (JEDI_TASKS.VO; atlas when it names none).

    Usage: ``task_vo({"vo": "wlcg"}) == "wlcg"``
    """
    return str(task.get("vo") or DEFAULT_VO)


def user_counts_vo(task: dict[str, Any], config: Any) -> str | None:
    """The VO whose user job counts TASK's user caps and Stabilizer read: the task's (a user is a (USERNAME, VO)
    pair), or None (every VO) under the switch ``anal_user_counts_every_vo``.

    Usage: ``user_counts(cache, user_counts_vo(task, Config()))``
    """
    return None if rule(config, "anal_user_counts_every_vo") else task_vo(task)


def user_counts(cache: GridCache, vo: str | None) -> pd.DataFrame:
    """The user job counts of VO (a user is a (USERNAME, VO) pair; rows naming no VO are atlas'), or of every VO
    summed when VO is None (PanDA 1.0.4's getUsersJobsStats_JEDI and countJobsPerTarget_JEDI select no VO).

    Usage: ``user_counts(cache, "atlas").groupby("produsername")["njobs"].sum()``
    """

    def build() -> pd.DataFrame:
        u = cache.snap.user_job_counts
        if vo is None:
            return u
        keep = (u["vo"].fillna(DEFAULT_VO) == vo) if "vo" in u else pd.Series(vo == DEFAULT_VO, index=u.index)
        return u[keep.to_numpy(dtype=bool)].reset_index(drop=True)

    return cache.get(("user_counts", vo), build)


def available_at_queues(cache: GridCache, jeditaskid: int, master_only: bool = False) -> dict[str, Any]:
    """Input data of one task at every queue: size and files locally available (best endpoint per dataset), at the
    endpoints the task reads from (``input_relations``: analysis tasks read a queue's 'analysis' scope).

    Returns totals (``total_gb``, ``total_files``) and per-queue arrays ``avail_gb``, ``avail_files``,
    ``disk_gb`` (on disk endpoints only) and ``missing_files``.
    Usage: ``available_at_queues(cache, 123)["avail_gb"]``
    """
    return cache.get(("avail", int(jeditaskid), bool(master_only)), lambda: _available(cache, jeditaskid, master_only))


@dataclass(frozen=True)
class ReplicaIndex:
    """Datasets and replicas of every task as arrays sorted by task, so one task is a slice."""

    ds_task: np.ndarray
    ds_id: np.ndarray
    ds_master: np.ndarray
    ds_files: np.ndarray
    ds_size: np.ndarray
    ds_start: dict[int, tuple[int, int]]
    rep_dataset: np.ndarray  # (task, dataset) key per replica row
    rep_endpoint: np.ndarray
    rep_files: np.ndarray
    rep_size: np.ndarray
    rep_start: dict[int, tuple[int, int]]


def _slices(keys: np.ndarray) -> dict[int, tuple[int, int]]:
    if len(keys) == 0:
        return {}
    change = np.flatnonzero(np.diff(keys)) + 1
    starts = np.concatenate([[0], change])
    ends = np.concatenate([change, [len(keys)]])
    return {int(keys[a]): (int(a), int(b)) for a, b in zip(starts, ends, strict=True)}


def replica_index(cache: GridCache) -> ReplicaIndex:
    """Per-snapshot index of datasets and replicas by task (built once)."""

    def build() -> ReplicaIndex:
        snapshot = cache.snap
        ep = endpoint_arrays(cache)
        ds = snapshot.datasets.sort_values(["jeditaskid", "datasetid"], kind="stable")
        rep = snapshot.dataset_replicas.sort_values(["jeditaskid", "datasetid"], kind="stable")
        e = rep["ddm_endpoint_name"].map(ep.index).to_numpy()
        ok = ~pd.isna(e)
        rep = rep[ok]
        rtask = rep["jeditaskid"].to_numpy(dtype=np.int64)
        return ReplicaIndex(
            ds_task=ds["jeditaskid"].to_numpy(dtype=np.int64),
            ds_id=ds["datasetid"].to_numpy(dtype=np.int64),
            ds_master=ds["is_master"].to_numpy(dtype=bool),
            ds_files=ds["nfiles"].to_numpy(dtype=float),
            ds_size=ds["size_gb"].to_numpy(dtype=float),
            ds_start=_slices(ds["jeditaskid"].to_numpy(dtype=np.int64)),
            rep_dataset=rep["datasetid"].to_numpy(dtype=np.int64),
            rep_endpoint=e[ok].astype(np.int64),
            rep_files=rep["nfiles"].to_numpy(dtype=float),
            rep_size=rep["size_gb"].to_numpy(dtype=float),
            rep_start=_slices(rtask),
        )

    return cache.get("replica_index", build)


def _available(cache: GridCache, jeditaskid: int, master_only: bool) -> dict[str, Any]:
    qa = queue_arrays(cache)
    ep = endpoint_arrays(cache)
    ri = replica_index(cache)
    a, b = ri.ds_start.get(int(jeditaskid), (0, 0))
    keep = ri.ds_master[a:b] if master_only else np.ones(b - a, dtype=bool)
    ds_ids = ri.ds_id[a:b][keep]
    total_gb = float(ri.ds_size[a:b][keep].sum())
    total_files = float(ri.ds_files[a:b][keep].sum())
    avail_gb = np.zeros(qa.n)
    avail_files = np.zeros(qa.n)
    disk_gb = np.zeros(qa.n)
    ra, rb = ri.rep_start.get(int(jeditaskid), (0, 0))
    label = cache.get("task_records", lambda: _task_records(cache.snap)).get(int(jeditaskid), {}).get("prodsourcelabel")
    rel_queue, rel_endpoint = input_relations(qa, label)
    if rb > ra and len(rel_queue):
        n_ep = len(ep.name)
        not_tape = ~ep["is_tape"].astype(bool)
        rds = ri.rep_dataset[ra:rb]
        for d in ds_ids:
            m = rds == d
            if not m.any():
                continue
            e = ri.rep_endpoint[ra:rb][m]
            size = np.zeros(n_ep)
            files = np.zeros(n_ep)
            np.maximum.at(size, e, ri.rep_size[ra:rb][m])
            np.maximum.at(files, e, ri.rep_files[ra:rb][m])
            # best related endpoint of each queue for this dataset
            for target, source in ((avail_gb, size), (avail_files, files), (disk_gb, size * not_tape)):
                best = np.zeros(qa.n)
                np.maximum.at(best, rel_queue, source[rel_endpoint])
                target += best
    return {
        "total_gb": total_gb,
        "total_files": total_files,
        "avail_gb": np.minimum(avail_gb, total_gb),
        "avail_files": np.minimum(avail_files, total_files),
        "disk_gb": np.minimum(disk_gb, total_gb),
        "missing_files": np.maximum(total_files - avail_files, 0.0),
        "missing_gb": np.maximum(total_gb - avail_gb, 0.0),
    }


def task_row(cache: GridCache, jeditaskid: int) -> dict[str, Any]:
    """One task as a dict of JEDI_TASKS fields; UnknownIdError (a KeyError) naming the id when unknown.

    Usage: ``task_row(cache, 4242)["corecount"]``
    """
    records = cache.get("task_records", lambda: _task_records(cache.snap))
    try:
        return dict(records[int(jeditaskid)])
    except KeyError:
        raise UnknownIdError(f"unknown task {jeditaskid}: not in the snapshot ({len(records)} tasks)") from None


# cell types pandas' to_dict("records") leaves as they are (its maybe_box_native is the identity on them)
_NATIVE = frozenset({str, np.str_, type(None), int, float, bool})


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """``df.to_dict("records")``, equal cell for cell, without boxing the object columns that hold only native
    cells (about 20x faster on a task table: the per-cell boxing was most of the simulator's cache rebuilds)."""
    columns = df.columns.tolist()
    rows = [dict(zip(columns, t, strict=True)) for t in df.itertuples(index=False, name=None)]
    for i, (column, dtype) in enumerate(df.dtypes.items()):
        if dtype == np.dtype(object):
            if set(map(type, df.iloc[:, i].to_numpy())) <= _NATIVE:
                continue
        elif not isinstance(dtype, pd.api.extensions.ExtensionDtype):
            continue
        for row in rows:
            row[column] = maybe_box_native(row[column])
    return rows


def _task_records(snapshot: Any) -> dict[int, dict[str, Any]]:
    return _rows_by_id(snapshot.tasks)


def _rows_by_id(df: pd.DataFrame) -> dict[int, dict[str, Any]]:
    rows = _records(df)
    for column in df.columns:
        # only rows whose column pandas calls missing can hold a null (None, NaN, NaT)
        for i in np.flatnonzero(df[column].isna().to_numpy()).tolist():
            if _isnull(rows[i][column]):
                rows[i][column] = None
    return {int(r["jeditaskid"]): r for r in rows}


def carry_task_records(cache: GridCache, prev: GridCache) -> None:
    """Give CACHE the task records PREV built, when CACHE's task table is PREV's with rows appended and some rows
    edited (same columns and dtypes, the same tasks first): only the appended and the changed rows (a value, or the
    type of an object cell, differs) are built again, so the records equal a build from scratch.

    Usage: ``carry_task_records(derived_cache(base, snap2), cache)``
    """
    old = prev.peek("task_records")
    new_df, old_df = cache.snap.tasks, prev.snap.tasks
    if old is None or len(old) != len(old_df) or len(new_df) < len(old_df):
        return
    if new_df.columns.tolist() != old_df.columns.tolist() or not new_df.dtypes.equals(old_df.dtypes):
        return
    n = len(old_df)
    if not np.array_equal(new_df["jeditaskid"].to_numpy()[:n], old_df["jeditaskid"].to_numpy()):
        return
    differ = np.zeros(n, bool)
    for i in range(len(new_df.columns)):
        a, b = new_df.iloc[:n, i], old_df.iloc[:, i]
        same = (a.to_numpy() == b.to_numpy()) | (a.isna().to_numpy() & b.isna().to_numpy())
        if a.dtype == np.dtype(object):
            same &= np.fromiter(map(type, a.to_numpy()), object, n) == np.fromiter(map(type, b.to_numpy()), object, n)
        differ |= ~same
    redo = np.r_[np.flatnonzero(differ), np.arange(n, len(new_df))]
    records = dict(old)
    records.update(_rows_by_id(new_df.iloc[redo]))
    cache.put("task_records", records)


def _isnull(v: Any) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NaT


def nucleus_queues(cache: GridCache, nucleus: str | None) -> np.ndarray:
    """Mask of queues at the nucleus site (the queues associated with the nucleus); built once per nucleus, read-only."""

    def build() -> np.ndarray:
        qa = queue_arrays(cache)
        out = qa["atlas_site"] == nucleus if nucleus else np.zeros(qa.n, dtype=bool)
        out.flags.writeable = False
        return out

    return cache.get(("nucleus_queues", nucleus or ""), build)


def frozen(a: np.ndarray) -> np.ndarray:
    """A read-only A (arrays shared by many tasks must not be changed by one).

    Usage: ``frozen(np.ones(3)).flags.writeable is False``
    """
    a.flags.writeable = False
    return a
