"""The simulator's job table: one row per PanDA job in growable numpy columns, PanDA's column names."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from brokerage.sim.status_index import StatusIndex

# PanDA job statuses (jedi-lifecycle.md §2); the code of a status is its index
STATUSES: tuple[str, ...] = (
    "defined", "assigned", "activated", "throttled", "sent", "starting", "running", "holding", "transferring",
    "merging", "finished", "failed", "cancelled", "closed", "pending",
)  # fmt: skip
S = {name: i for i, name in enumerate(STATUSES)}
FINAL = np.array([S["finished"], S["failed"], S["cancelled"], S["closed"]])
# queued as the brokers count it (brokers.analysis.QUEUED), and fast rebrokerage's nq
QUEUED = np.array([S["defined"], S["assigned"], S["activated"], S["starting"]])
# not taken by a pilot yet: what a task command cancels or closes (a throttled job waits too; starting is taken)
UNDISPATCHED = np.array([S["defined"], S["assigned"], S["activated"], S["throttled"]])
NOT_RUN = np.array([S["assigned"], S["activated"], S["starting"]])  # the throttler's nNotRun
DEFINED_TABLE = np.array([S["defined"], S["assigned"], S["pending"]])  # jobsDefined4 (waiting is not simulated)
ACTIVE_TABLE = np.array([S[s] for s in ("activated", "throttled", "sent", "starting", "running", "holding",
                                        "transferring", "merging")])  # fmt: skip

COLUMNS: dict[str, Any] = {
    "PandaID": np.int64, "jediTaskID": np.int64, "computingSite": np.int32, "jobStatus": np.int8,
    "jobSubStatus": np.int8, "gshare": np.int16, "workQueue": np.int16, "resource_type": np.int16, "prodSourceLabel": np.int8,
    "currentPriority": np.float64, "attemptNr": np.int16, "coreCount": np.int16, "fileID": np.int64,
    "creationTime": np.float64, "modificationTime": np.float64, "stateChangeTime": np.float64,
    "activationTime": np.float64, "startTime": np.float64, "endTime": np.float64, "runSeconds": np.float64,
    "willFail": np.bool_, "errorCode": np.int16, "errorSource": np.int8, "maxPSS": np.float32,
    "ramCount": np.float32, "isScout": np.bool_, "nucleus": np.int16, "vo": np.int8,
}  # fmt: skip
"""Times are seconds since the run's start (NaN: never); computingSite, gshare and resource_type index the run's
queue, share and resource-type lists, workQueue the run's aligned work queues (the share leaves, then the
Resource work queues); prodSourceLabel is 1 for user (analysis) jobs, 0 otherwise; jediTaskID is -1
for the jobs the snapshot already held (their task is not known); maxPSS is the payload's memory peak (MB), ramCount the memory its
chunk was brokered with (the task's unit: MB, or MB per core), errorSource indexes retry.SOURCES + 1 (0: no error)
isScout marks a scouting task's jobs and nucleus indexes the run's nuclei (0: none, as for the snapshot's own jobs
and analysis tasks; else 1 + the position of the task's nucleus); vo indexes the run's VOs (SimGrid.vos: the task's VO,
or the VO of the snapshot's job count the job came from)."""

SUB_NONE, SUB_TOREASSIGN = 0, 1


def status_mask(codes: np.ndarray | list[int]) -> np.ndarray:
    """A lookup table over status codes: ``status_mask(FINAL)[st]`` equals ``np.isin(st, FINAL)``, several times
    faster on the live jobs' statuses (one gather instead of a sort-based membership test).

    Usage: ``final = status_mask(FINAL)[table["jobStatus"]]``
    """
    mask = np.zeros(len(STATUSES), bool)
    mask[np.asarray(codes, np.int64)] = True
    return mask


IS_FINAL, IS_QUEUED, IS_NOT_RUN = status_mask(FINAL), status_mask(QUEUED), status_mask(NOT_RUN)
# a column's value when a new row does not give it: NaN for times and floats, -1 for fileID (no input), else 0
DEFAULTS: dict[str, Any] = {
    k: np.nan if np.dtype(t).kind == "f" else (-1 if k == "fileID" else 0) for k, t in COLUMNS.items()
}


@dataclass
class JobTable:
    """Columns of equal length ``n`` (capacity may be larger); rows are never deleted, final jobs stay."""

    cols: dict[str, np.ndarray] = field(default_factory=dict)
    rows_n: int = 0
    next_id: int = 1
    index: StatusIndex | None = None  # kept by append when set (the simulator's live counts and rows per status)
    cut: int = 0  # times the table was cut short (tests start from an empty table)

    @property
    def n(self) -> int:
        """The number of rows."""
        return self.rows_n

    @n.setter
    def n(self, value: int) -> None:
        if value < self.rows_n:
            self.cut += 1
        self.rows_n = value
        if self.index is not None and value < self.index.rows_n:  # rows cut off (tests start from an empty table)
            c, first = self.cols, slice(0, value)
            self.index.reset()
            self.index.added(np.arange(value), c["jobStatus"][first], c["computingSite"][first], c["gshare"][first],
                             c["workQueue"][first], c["resource_type"][first], c["vo"][first])  # fmt: skip

    @classmethod
    def empty(cls, capacity: int = 1024) -> JobTable:
        """A table with room for CAPACITY rows.

        Usage: ``JobTable.empty().n == 0``
        """
        return cls({k: np.zeros(capacity, dtype=t) for k, t in COLUMNS.items()})

    def __getitem__(self, name: str) -> np.ndarray:
        return self.cols[name][: self.n]

    def append(self, **values: Any) -> np.ndarray:
        """Add rows (every column a scalar or an array of one length); returns the new rows' indices.

        Usage: ``rows = table.append(jobStatus=S["activated"], computingSite=np.array([3, 4]), ...)``
        """
        # the first array's length (the arrays have one length)
        k = next((len(v) for v in values.values() if type(v) is np.ndarray and v.ndim > 0), 0)
        if k == 0:  # no arrays: lists, or one row of scalars
            k = max((np.size(v) for v in values.values() if np.ndim(v) > 0), default=1)
        start = self.rows_n
        end = start + k
        c = self.cols
        if end > len(c["PandaID"]):
            cap = max(2 * len(c["PandaID"]), end)
            for name, col in c.items():
                grown = np.zeros(cap, dtype=col.dtype)
                grown[:start] = col[:start]
                c[name] = grown
        for name, col in c.items():  # a slice, not the rows: the same values, without the fancy indexing
            col[start:end] = values.get(name, DEFAULTS[name])
        c["PandaID"][start:end] = np.arange(self.next_id, self.next_id + k)
        self.next_id += k
        self.rows_n = end
        rows = np.arange(start, end)
        if self.index is not None:
            new = slice(start, end)
            self.index.added(rows, c["jobStatus"][new], c["computingSite"][new], c["gshare"][new],
                             c["workQueue"][new], c["resource_type"][new], c["vo"][new])  # fmt: skip
        return rows

    def frame(self, queues: list[str], shares: list[str], rtypes: list[str]) -> pd.DataFrame:
        """The table as a DataFrame with names instead of indices (for tests and the contract with task rules).

        Usage: ``table.frame(queues, shares, rtypes).jobStatus.value_counts()``
        """
        df = pd.DataFrame({k: self[k] for k in self.cols})
        df["computingSite"] = np.asarray(queues, dtype=object)[df["computingSite"]] if queues else ""
        df["gshare"] = np.asarray(shares, dtype=object)[df["gshare"]] if shares else ""
        df["resource_type"] = np.asarray(rtypes, dtype=object)[df["resource_type"]] if rtypes else ""
        df["jobStatus"] = np.asarray(STATUSES, dtype=object)[df["jobStatus"]]
        df["prodSourceLabel"] = np.where(df["prodSourceLabel"] == 1, "user", "managed")
        return df.set_index("PandaID")
