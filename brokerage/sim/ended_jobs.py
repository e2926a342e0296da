"""The run's ended jobs per (task, queue, status, hour), kept as they end (task_job_counts without a table scan)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from brokerage.sim.jobs import STATUSES, JobTable, S, status_mask

ENDED = ("finished", "failed", "closed")  # what task_job_counts holds (cancelled jobs are not counted)
IS_ENDED = status_mask([S[x] for x in ENDED])
KEYS = ["jeditaskid", "panda_queue", "jobstatus", "hour"]


class EndedGroups:
    """Per (jediTaskID, queue, ended status, hour of the end): the jobs of the run's tasks that ended so, and the
    last end (modificationTime). ``moved`` takes the rows each move made final; ``frame`` adds those and the rows
    appended since its last call (a table cut short, as tests do, is read again from its start).

    Usage: ``groups = EndedGroups(); groups.moved(rows); groups.frame(jobs, queues)``
    """

    def __init__(self) -> None:
        self._cut = 0  # the table's cuts seen
        self._reset()

    def _reset(self) -> None:
        self.groups: dict[tuple[int, int, int, float], tuple[int, float]] = {}
        self._moved: list[np.ndarray] = []
        self._counted = np.zeros(0, bool)  # per row: in the groups already
        self._seen = 0  # rows of the table read so far

    def moved(self, rows: np.ndarray) -> None:
        """ROWS became final (by a move)."""
        self._moved.append(rows)

    def _update(self, j: JobTable) -> None:
        n = j.n
        if j.cut != self._cut:
            self._reset()
            self._cut = j.cut
        cand = np.concatenate([*self._moved, np.arange(self._seen, n)])
        self._moved = []
        cand = np.unique(cand[cand < n])
        if len(self._counted) < n:
            self._counted = np.concatenate([self._counted, np.zeros(max(n - len(self._counted), n // 4), bool)])
        st, tid = j["jobStatus"][cand], j["jediTaskID"][cand]
        rows = cand[IS_ENDED[st] & (tid >= 0) & ~self._counted[cand]]
        self._counted[rows] = True
        self._seen = n
        if len(rows) == 0:
            return
        end = j["modificationTime"][rows]
        df = pd.DataFrame({"t": j["jediTaskID"][rows], "q": j["computingSite"][rows].astype(np.int64),
                           "s": j["jobStatus"][rows].astype(np.int64), "h": np.floor(end / 3600.0), "end": end})  # fmt: skip
        agg = df.groupby(["t", "q", "s", "h"]).agg(n=("end", "size"), end=("end", "max"))
        groups = self.groups
        for key, k, e in zip(agg.index.tolist(), agg["n"].tolist(), agg["end"].tolist(), strict=True):
            had = groups.get(key)
            groups[key] = (k, e) if had is None else (had[0] + k, max(had[1], e))

    def frame(self, j: JobTable, queues: list[str]) -> pd.DataFrame:
        """The groups as task_job_counts's rows, by (jeditaskid, panda_queue, jobstatus, hour): those KEYS, njobs
        and end (seconds, the run's clock); rows of table J ended since the last call are added first.

        Usage: ``groups.frame(sim.jobs, sim.g.queues)``
        """
        self._update(j)
        keys = list(self.groups)
        if not keys:
            return pd.DataFrame(columns=[*KEYS, "njobs", "end"])
        t, q, s, h = (np.array(c) for c in zip(*keys, strict=True))
        values = list(self.groups.values())
        df = pd.DataFrame({
            "jeditaskid": t.astype(np.int64), "panda_queue": np.asarray(queues, dtype=object)[q],
            "jobstatus": np.asarray(STATUSES, dtype=object)[s], "hour": h.astype(np.float64),
            "njobs": np.array([v[0] for v in values], np.int64), "end": np.array([v[1] for v in values], np.float64),
        })  # fmt: skip
        return df.sort_values(KEYS, kind="stable").reset_index(drop=True)
