"""Live job counts and rows per job status, kept by every move (no agent re-reads the whole job table to count)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

RT_SLOTS = 64  # resource types per work queue in the (work queue, resource type) keys


class StatusIndex:
    """For NSTATUS job statuses: the rows in each status in row (PandaID) order, and the jobs per (status, VO x
    queue x share) and per (status, work queue x resource type) for NVO VOs, NQ queues, NS shares and NW work queues;
    the table's moves keep both (``added``, ``moved``, ``rekeyed``), so a count equals a ``bincount`` over the whole
    table. The (VO, queue, share) key is ``(vo * NQ + queue) * NS + share``, as the brokers' counts are keyed.

    Usage: ``idx = StatusIndex(15, 700, 12, 30); idx.added(rows, st, q, s, w, r, v); idx.rows(2, st_column)``
    """

    def __init__(
        self, nstatus: int, nq: int, ns: int, nw: int, tracked: Sequence[int] | None = None, nvo: int = 1
    ) -> None:
        self.nq, self.ns, self.nvo, self.nstatus = nq, ns, nvo, nstatus
        # the statuses whose rows are kept (all by default): rows of the others (final ones) would only pile up
        self.tracked = np.zeros(nstatus, bool)
        self.tracked[list(range(nstatus)) if tracked is None else list(tracked)] = True
        self.qs_size = nvo * nq * ns
        self.wr_size = (nw + 1) * RT_SLOTS
        self.reset()

    def reset(self) -> None:
        """No rows."""
        nstatus = self.nstatus
        self.rows_n = 0  # rows added so far (the table's length)
        self.by_qs = np.zeros((nstatus, self.qs_size), np.int64)  # jobs per (status, (vo * nq + queue) * ns + share)
        self.by_wr = np.zeros((nstatus, self.wr_size), np.int64)  # jobs per (status, work queue * RT_SLOTS + rtype)
        self._parts: list[list[np.ndarray]] = [[] for _ in range(nstatus)]  # row arrays, each sorted
        self._ordered = [True] * nstatus  # the parts, one after the other, are in row order
        self._gone: list[list[np.ndarray]] = [[] for _ in range(nstatus)]  # rows that left it since the last clean

    def queue_share(self) -> np.ndarray:
        """Jobs per (status, queue x share), all VOs together (a view when the run has one VO).

        Usage: ``idx.queue_share()[S["running"]]``
        """
        if self.nvo == 1:
            return self.by_qs
        return self.by_qs.reshape(self.nstatus, self.nvo, -1).sum(axis=1)

    def key(self, v: np.ndarray | int, q: np.ndarray, s: np.ndarray | int) -> np.ndarray:
        """The flat (VO, queue, share) index of VOs V, queues Q and shares S in a status's row of ``by_qs``.

        Usage: ``idx.by_qs[S["running"]][idx.key(0, np.array([3]), 2)]``
        """
        return (np.asarray(v, np.int64) * self.nq + np.asarray(q, np.int64)) * self.ns + s

    def _count(self, sign: int, st: np.ndarray, q: np.ndarray, s: np.ndarray, w: np.ndarray, r: np.ndarray,
               v: np.ndarray) -> None:  # fmt: skip
        st = st.astype(np.int64)
        np.add.at(self.by_qs.reshape(-1), st * self.qs_size + self.key(v, q, s), sign)
        np.add.at(self.by_wr.reshape(-1), st * self.wr_size + w.astype(np.int64) * RT_SLOTS + r, sign)

    def _push(self, code: int, rows: np.ndarray) -> None:
        if len(rows) == 0 or not self.tracked[code]:
            return
        parts = self._parts[code]
        if parts and self._ordered[code] and rows[0] <= parts[-1][-1]:
            self._ordered[code] = False
        rows.flags.writeable = False  # a copy of the caller's rows, handed out by rows(): never changed in place
        parts.append(rows)

    def added(self, rows: np.ndarray, st: np.ndarray, q: np.ndarray, s: np.ndarray, w: np.ndarray,
              r: np.ndarray, v: np.ndarray) -> None:  # fmt: skip
        """New ROWS (ascending) with statuses ST at queues Q, shares S, work queues W, resource types R, VOs V."""
        if len(rows) == 0:
            return
        self.rows_n = max(self.rows_n, int(rows[-1]) + 1)
        self._count(1, st, q, s, w, r, v)
        first = int(st[0])
        if (st == first).all():  # JobGenerator's jobs: all activated
            self._push(first, rows.copy())
            return
        for code in np.unique(st).tolist():
            self._push(code, rows[st == code])

    def moved(self, rows: np.ndarray, old: np.ndarray, new: int, q: np.ndarray, s: np.ndarray, w: np.ndarray,
              r: np.ndarray, v: np.ndarray) -> None:  # fmt: skip
        """ROWS moved from statuses OLD to status NEW (their keys Q, S, W, R, V unchanged)."""
        if len(rows) == 0:
            return
        self._count(-1, old, q, s, w, r, v)
        self._count(1, np.full(len(rows), new), q, s, w, r, v)
        first = int(old[0])
        if (old == first).all():
            if self.tracked[first]:
                self._gone[first].append(rows)
        else:
            for code in np.unique(old).tolist():
                if self.tracked[code]:
                    self._gone[code].append(rows[old == code])
        self._push(new, np.sort(rows))

    def rekeyed(self, st: np.ndarray, q: np.ndarray, old: tuple[np.ndarray, np.ndarray], new: tuple[int, int],
                r: np.ndarray, v: np.ndarray) -> None:  # fmt: skip
        """Jobs with statuses ST at queues Q, resource types R and VOs V moved from (share, work queue) OLD to NEW."""
        if len(st) == 0:
            return
        self._count(-1, st, q, old[0], old[1], r, v)
        full = lambda x: np.full(len(st), x, np.int64)  # noqa: E731
        self._count(1, st, q, full(new[0]), full(new[1]), r, v)

    def rows(self, code: int, status: np.ndarray) -> np.ndarray:
        """The rows in status CODE, ascending; STATUS: the table's jobStatus column (to drop the rows that left).

        Usage: ``idx.rows(S["running"], jobs["jobStatus"])``
        """
        if not self.tracked[code]:
            raise ValueError(f"status code {code}: its rows are not kept (kept: {np.flatnonzero(self.tracked)})")
        parts = self._parts[code]
        if not parts:
            return np.zeros(0, np.int64)
        gone = self._gone[code]
        if len(parts) == 1 and not gone:
            return parts[0]
        a = np.concatenate(parts) if len(parts) > 1 else parts[0]
        if not self._ordered[code]:
            a.sort(kind="stable")  # a few sorted runs: the run-merging sort is about linear
            a = a[np.r_[True, a[1:] != a[:-1]]] if len(a) else a  # a row back in the status is in two runs
        if gone:
            # every row held here that is no longer in the status left it by a move since the last clean
            out = np.unique(np.concatenate(gone))
            out = out[status[out] != code]
            pos = np.searchsorted(a, out)
            hit = pos < len(a)
            hit[hit] = a[pos[hit]] == out[hit]
            keep = np.ones(len(a), bool)
            keep[pos[hit]] = False
            a = a[keep]
        a.flags.writeable = False
        self._parts[code], self._ordered[code], self._gone[code] = ([a] if len(a) else []), True, []
        return a
