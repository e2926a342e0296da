"""Task queues: waiting jobs grouped by exactly equal requirements, bucketed (split at DIRAC_MAX_JOBS_IN_TQ by switch)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from brokerage.dirac.buckets import fit_cpu_time
from brokerage.dirac.priorities import STEPS as PRIORITY_STEPS
from brokerage.dirac.priorities import PriorityInputs, group_shares, real_priority, tq_priorities
from brokerage.framework import Reads, Step, keys_of
from brokerage.model.errors import UnknownIdError
from brokerage.model.gdpconfig import Config
from brokerage.model.profiles import rule
from brokerage.model.snapshot import GridSnapshot

# TaskQueueDB.multiValueDefFields, in DIRAC's order
MULTI_FIELDS: tuple[str, ...] = ("Sites", "GridCEs", "BannedSites", "Platforms", "JobTypes", "Tags")
# TaskQueueDB.priorityIgnoredFields: task queues differing only in these share one Priority
PRIORITY_IGNORED: tuple[str, ...] = ("Sites", "BannedSites")
WAITING = "Waiting"
MATCHED = "Matched"  # just matched: its task queue may be left empty until DIRAC's deletion check
_SEP = "\x1f"


@dataclass(eq=False)
class MultiField:
    """One multi-valued requirement over the task queues: a value vocabulary and a membership matrix.

    ``member[t, v]`` says whether task queue row t lists ``vocab[v]``; columns are contiguous (Fortran order) so
    one pilot value is one column read.
    """

    vocab: np.ndarray
    index: dict[str, int]
    member: np.ndarray
    count: np.ndarray

    def has(self, value: str) -> np.ndarray:
        """Rows listing VALUE."""
        j = self.index.get(value)
        if j is None:
            return np.zeros(len(self.count), dtype=bool)
        return self.member[:, j]

    def values(self, row: int) -> list[str]:
        """The values of task queue ROW, sorted."""
        return self.vocab[self.member[row]].tolist()


@dataclass(eq=False)
class TaskQueues:
    """The task queues of one snapshot under one config, as columns (row i is task queue ``tq_id[i]``).

    Jobs are kept sorted by (task queue row, JobID): the jobs of row i are ``job_*[job_start[i]:job_start[i+1]]``.
    Usage: ``tqs = build(snap, Config()); tqs.tq_id[0], tqs.fields["Sites"].values(0)``
    """

    tq_id: np.ndarray
    owner: np.ndarray
    group: np.ndarray
    owner_names: np.ndarray
    owner_code: np.ndarray
    group_names: np.ndarray
    group_code: np.ndarray
    vo: np.ndarray
    cpu_time: np.ndarray
    njobs: np.ndarray
    priority: np.ndarray
    why: PriorityInputs
    fields: dict[str, MultiField]
    job_id: np.ndarray
    job_priority: np.ndarray
    job_real: np.ndarray
    job_start: np.ndarray
    buckets: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.tq_id)

    @cached_property
    def names(self) -> np.ndarray:
        """Task queue ids as strings (candidate names for skips and funnels), built once."""
        return self.tq_id.astype(str).astype(object)

    def row_of(self, tq_id: int) -> int:
        """Row of task queue TQ_ID (KeyError if unknown)."""
        rows = np.flatnonzero(self.tq_id == tq_id)
        if not len(rows):
            raise UnknownIdError(f"unknown task queue {tq_id}")
        return int(rows[0])

    def jobs_of(self, row: int) -> slice:
        """Slice of the job arrays holding the jobs of ROW."""
        return slice(int(self.job_start[row]), int(self.job_start[row + 1]))

    def definition(self, row: int) -> dict[str, object]:
        """Task queue ROW as DIRAC's retrieveTaskQueues reports it (plus VO and job count)."""
        out: dict[str, object] = {
            "id": int(self.tq_id[row]),
            "Owner": str(self.owner[row]),
            "OwnerGroup": str(self.group[row]),
            "VO": str(self.vo[row]),
            "CPUTime": int(self.cpu_time[row]),
            "Jobs": int(self.njobs[row]),
            "Priority": None if np.isnan(self.priority[row]) else float(self.priority[row]),
        }
        for name, f in self.fields.items():
            out[name] = f.values(row)
        return out


def _canonical(raw: list[object]) -> tuple[np.ndarray, np.ndarray]:
    """Codes of the value sets in RAW (lists) and their canonical strings (sorted, deduplicated, blanks dropped)."""
    joined = [_SEP.join(x) if x else "" for x in raw]
    codes, uniques = pd.factorize(pd.Series(joined, dtype=object), sort=False)
    canon = np.array([_SEP.join(sorted({v for v in u.split(_SEP) if v})) for u in uniques.tolist()], dtype=object)
    ccodes, cuniq = pd.factorize(canon, sort=True)
    return ccodes[codes], np.asarray(cuniq, dtype=object)


def _combine(*codes: np.ndarray) -> np.ndarray:
    """One dense code per distinct combination of the integer CODES (kept small by re-factorising)."""
    key = np.zeros(len(codes[0]), dtype=np.int64)
    for c in codes:
        c = np.asarray(c, dtype=np.int64)
        key = key * (int(c.max(initial=0)) + 1) + c
        key = pd.factorize(key, sort=False)[0].astype(np.int64)
    return key


def _multi_field(tq_codes: np.ndarray, strings: np.ndarray) -> MultiField:
    """The membership matrix of one field from each task queue's canonical-string code."""
    sets = [s.split(_SEP) if s else [] for s in strings.tolist()]
    vocab = np.array(sorted({v for s in sets for v in s}), dtype=object)
    index = {v: i for i, v in enumerate(vocab.tolist())}
    per_code = np.zeros((len(sets), len(vocab)), dtype=bool)
    for i, s in enumerate(sets):
        per_code[i, [index[v] for v in s]] = True
    member = np.asfortranarray(per_code[tq_codes]) if len(tq_codes) else np.zeros((0, len(vocab)), bool, order="F")
    return MultiField(vocab, index, member, member.sum(axis=1).astype(np.int64))


def _waiting_queues(key: np.ndarray, waiting: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray]:
    """The waiting jobs' rows and their task queue index: ranked within their KEY in JobID order, one task queue
    per CAP jobs of a key, numbered in order of creation."""
    w_idx = np.flatnonzero(waiting)
    w_key = key[w_idx]
    order = np.argsort(w_key, kind="stable")
    sorted_key = w_key[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_key)) + 1] if len(order) else np.zeros(0, np.int64)
    rank_sorted = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = rank_sorted
    w_tq = pd.factorize(_combine(w_key, rank // cap), sort=False)[0] if len(w_idx) else np.zeros(0, np.int64)
    return w_idx, w_tq


def _matched_only(key: np.ndarray, status: np.ndarray, w_idx: np.ndarray) -> np.ndarray:
    """Definitions seen only on Matched jobs (no waiting job W_IDX has their KEY): the row of each one's first job,
    in JobID order; they become empty task queues after the others."""
    m_idx = np.flatnonzero(status == MATCHED)
    m_idx = m_idx[~np.isin(key[m_idx], key[w_idx])]
    _, m_first = np.unique(key[m_idx], return_index=True)
    return m_idx[np.sort(m_first)]


NO_SPLIT = 2**62  # the seed's task queue takes every job of its requirements


def max_jobs_in_tq(config: Config) -> int:
    """Jobs a task queue takes before a new one opens. Seed 004: "All jobs with identical requirements are grouped
    in one TaskQueue" (no limit); DIRAC's code (switch tq_split_as_dirac) and an explicit DIRAC_MAX_JOBS_IN_TQ
    split at DIRAC_MAX_JOBS_IN_TQ (5000).

    Usage: ``max_jobs_in_tq(Config()) == NO_SPLIT``
    """
    explicit = "DIRAC_MAX_JOBS_IN_TQ" in {*config.stored, *config.overrides}
    if explicit or rule(config, "tq_split_as_dirac"):
        return int(config["DIRAC_MAX_JOBS_IN_TQ"])
    return NO_SPLIT


def build_task_queues(
    jobs: pd.DataFrame, shares_table: pd.DataFrame, config: Config
) -> TaskQueues:  # fmt: skip
    """Group JOBS (dirac_jobs rows) into task queues as TaskQueueDB.insertJob would, inserting them in JobID order.

    Key = (Owner, OwnerGroup, CPUTime bucket, the set of each multi-valued field); one queue per key (seed), or a
    queue full at max_jobs_in_tq jobs makes the next jobs of its key open a new one; ids follow creation order.
    A definition seen only on Matched jobs is an empty task queue. Priorities come from the shares (§4.2).
    Usage: ``tqs = build_task_queues(snap.tables["dirac_jobs"], snap.tables["dirac_group_shares"], Config())``
    """
    buckets = tuple(int(b) for b in config["DIRAC_CPU_BUCKETS"])
    cap = max_jobs_in_tq(config)
    df = jobs.sort_values("JobID", kind="stable") if len(jobs) else jobs
    status = df["Status"].to_numpy(dtype=object)
    waiting = status == WAITING
    owner_c, owner_u = pd.factorize(df["Owner"].to_numpy(dtype=object))
    group_c, group_u = pd.factorize(df["OwnerGroup"].to_numpy(dtype=object))
    bucket = fit_cpu_time(df["CPUTime"].to_numpy(dtype=np.float64), buckets)
    bucket_c, bucket_u = pd.factorize(bucket)
    field_codes: dict[str, np.ndarray] = {}
    field_strings: dict[str, np.ndarray] = {}
    for name in MULTI_FIELDS:
        field_codes[name], field_strings[name] = _canonical(df[name].tolist())
    key = _combine(owner_c, group_c, bucket_c, *field_codes.values())

    w_idx, w_tq = _waiting_queues(key, waiting, cap)
    n_full = int(w_tq.max(initial=-1)) + 1
    m_rows = _matched_only(key, status, w_idx)
    first_row = np.r_[w_idx[np.unique(w_tq, return_index=True)[1]], m_rows].astype(np.int64)
    n = len(first_row)

    njobs = np.r_[np.bincount(w_tq, minlength=n_full), np.zeros(len(m_rows), np.int64)].astype(np.int64)
    job_order = np.lexsort((df["JobID"].to_numpy()[w_idx], w_tq))
    job_rows = w_idx[job_order]
    job_priority = df["Priority"].to_numpy(dtype=np.int64)[job_rows]
    job_real = real_priority(job_priority)
    job_start = np.r_[0, np.cumsum(njobs)].astype(np.int64)
    real_sum = np.r_[np.bincount(w_tq, weights=real_priority(df["Priority"].to_numpy()[w_idx]), minlength=n_full),
                     np.zeros(len(m_rows))]  # fmt: skip

    owner = np.asarray(owner_u, dtype=object)[owner_c[first_row]]
    group = np.asarray(group_u, dtype=object)[group_c[first_row]]
    cpu = np.asarray(bucket_u, dtype=np.int64)[bucket_c[first_row]] if n else np.zeros(0, np.int64)
    fields = {name: _multi_field(field_codes[name][first_row], field_strings[name]) for name in MULTI_FIELDS}
    kept = [field_codes[f][first_row] for f in MULTI_FIELDS if f not in PRIORITY_IGNORED]
    variant = _combine(owner_c[first_row], group_c[first_row], bucket_c[first_row], *kept) if n else np.zeros(0)
    shares = group_shares(shares_table, config, sorted(set(group.tolist())))
    priority, why = tq_priorities(owner, group, variant, njobs, real_sum, shares, config)
    return TaskQueues(
        tq_id=np.arange(1, n + 1, dtype=np.int64),
        owner=owner,
        group=group,
        owner_names=np.asarray(owner_u, dtype=object),
        owner_code=owner_c[first_row].astype(np.int64),
        group_names=np.asarray(group_u, dtype=object),
        group_code=group_c[first_row].astype(np.int64),
        vo=df["VO"].to_numpy(dtype=object)[first_row],
        cpu_time=cpu,
        njobs=njobs,
        priority=priority,
        why=why,
        fields=fields,
        job_id=df["JobID"].to_numpy(dtype=np.int64)[job_rows],
        job_priority=job_priority,
        job_real=job_real,
        job_start=job_start,
        buckets=buckets,
    )


STEPS: tuple[Step, ...] = (
    Step("buckets", Reads(config=("DIRAC_CPU_BUCKETS",))),
    Step("taskqueues", Reads(config=("DIRAC_MAX_JOBS_IN_TQ", "RULES"))),
)
"""The gdpconfig keys building the task queues reads (build_task_queues); the priorities' are in priorities.STEPS."""
BUILD_KEYS = keys_of((*STEPS, *PRIORITY_STEPS))  # a build is shared under the values of these


def build_key(config: Config) -> tuple[object, ...]:
    """What a TaskQueues build depends on in CONFIG (every share override included)."""
    shares = sorted((k, config[k]) for k in {*config.stored, *config.overrides} if k.startswith("DIRAC_JOB_SHARE_"))
    return (*[str(config[k]) for k in BUILD_KEYS], tuple(shares))


def build(snap: GridSnapshot, config: Config) -> TaskQueues:
    """The task queues of SNAP under CONFIG.

    Usage: ``tqs = build(snap, Config())``
    """
    return build_task_queues(snap.tables["dirac_jobs"], snap.tables["dirac_group_shares"], config)
