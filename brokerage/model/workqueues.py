"""JEDI work queues and the global-share tree: criteria matching, aligned queues and the share ordering (§7)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from brokerage.model.errors import InputError

# Criteria name the task attributes JEDI's WorkQueueMapper binds; the value is the snapshot's tasks column.
CRITERIA_COLUMNS = {
    "prodsourcelabel": "prodsourcelabel",
    "workinggroup": "workinggroup",
    "processingtype": "processingtype",
    "corecount": "corecount",
    "eventservice": "eventservice",
    "site": "site",
}
RESOURCE_FUNCTION = "Resource"  # queue_function of a work queue JobGenerator runs on its own (§7.1)
UNPLEDGED_RANK = 1e6  # executing/pledged of a share with no pledge: sorted last

_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<bind>:\w+)|(?P<op><>|!=|>=|<=|=|<|>|\(|\)|,)"
    r"|(?P<word>[A-Za-z_]\w*))"
)
_KEYWORDS = {"AND", "OR", "NOT", "IN", "LIKE", "IS", "NULL"}

Mask = Callable[[Mapping[str, np.ndarray]], np.ndarray]


class CriteriaError(InputError, ValueError):
    """A work queue's criteria cannot be read; the message says where and what is allowed."""


def _tokens(text: str) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise CriteriaError(f"cannot read {text[pos:].strip()[:20]!r} at character {pos + 1}")
        pos = m.end()
        kind = m.lastgroup or ""
        value: Any = m.group(kind)
        if kind == "str":
            value = value[1:-1].replace("''", "'")
        elif kind == "num":
            value = float(value)
        elif kind == "word" and value.upper() in _KEYWORDS:
            kind, value = "kw", value.upper()
        out.append((kind, value))
    return out


def _null(col: np.ndarray) -> np.ndarray:
    return np.array([v is None or v == "" or (isinstance(v, float) and np.isnan(v)) for v in col], dtype=bool)


def _like(pattern: str) -> re.Pattern[str]:
    # SQL LIKE: % any run, _ one character; the rest literal
    return re.compile("".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in pattern) + r"\Z")


class _Parser:
    """Recursive descent over the SQL-like criteria JEDI stores: AND/OR/NOT, =, !=, <>, <, >, IN, LIKE, IS NULL."""

    def __init__(self, text: str, variables: Mapping[str, Any]) -> None:
        self.toks = _tokens(text)
        self.i = 0
        self.variables = {k.lstrip(":").lower(): v for k, v in variables.items()}

    def _peek(self) -> tuple[str, Any] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def _take(self, kind: str, value: Any = None) -> Any:
        tok = self._peek()
        if tok is None or tok[0] != kind or (value is not None and tok[1] != value):
            want = value if value is not None else {"word": "a column", "op": "an operator"}.get(kind, kind)
            raise CriteriaError(f"expected {want} but found {'the end' if tok is None else repr(tok[1])}")
        self.i += 1
        return tok[1]

    def _is(self, kind: str, value: Any) -> bool:
        tok = self._peek()
        return tok is not None and tok == (kind, value)

    def parse(self) -> Mask:
        if not self.toks:
            return lambda cols: np.ones(len(next(iter(cols.values()), ())), dtype=bool)
        mask = self._or()
        if self._peek() is not None:
            raise CriteriaError(f"unexpected {self._peek()[1]!r} after a complete condition")  # type: ignore[index]
        return mask

    def _joined(self, word: str, part: Callable[[], Mask], combine: np.ufunc) -> Mask:
        """PART (WORD PART)*: one mask combining every part's with COMBINE."""
        parts = [part()]
        while self._is("kw", word):
            self.i += 1
            parts.append(part())
        return parts[0] if len(parts) == 1 else lambda cols: combine.reduce([p(cols) for p in parts])

    def _or(self) -> Mask:
        return self._joined("OR", self._and, np.logical_or)

    def _and(self) -> Mask:
        return self._joined("AND", self._not, np.logical_and)

    def _not(self) -> Mask:
        if self._is("kw", "NOT"):
            self.i += 1
            inner = self._not()
            return lambda cols: ~inner(cols)
        if self._is("op", "("):
            self.i += 1
            inner = self._or()
            self._take("op", ")")
            return inner
        return self._predicate()

    def _value(self) -> Any:
        tok = self._peek()
        if tok is None or tok[0] not in ("str", "num", "bind"):
            raise CriteriaError(f"expected a value but found {'the end' if tok is None else repr(tok[1])}")
        self.i += 1
        if tok[0] == "bind":
            name = tok[1][1:].lower()
            if name not in self.variables:
                raise CriteriaError(f"bind variable {tok[1]} is not in the work queue's variables")
            return self.variables[name]
        return tok[1]

    def _predicate(self) -> Mask:
        word = self._take("word")
        name = CRITERIA_COLUMNS.get(word.lower())
        if name is None:
            raise CriteriaError(f"unknown column {word!r}; expected one of {', '.join(CRITERIA_COLUMNS)}")
        negate = False
        if self._is("kw", "IS"):
            self.i += 1
            negate = self._is("kw", "NOT")
            self.i += negate
            self._take("kw", "NULL")
            return lambda cols: _null(cols[name]) ^ negate
        if self._is("kw", "NOT"):
            self.i += 1
            negate = True
        if self._is("kw", "IN"):
            self.i += 1
            self._take("op", "(")
            values = [self._value()]
            while self._is("op", ","):
                self.i += 1
                values.append(self._value())
            self._take("op", ")")
            return lambda cols: _compare(cols[name], "in", values) ^ negate
        if self._is("kw", "LIKE"):
            self.i += 1
            pattern = _like(str(self._value()))
            return lambda cols: _compare(cols[name], "like", pattern) ^ negate
        if negate:
            raise CriteriaError(f"expected IN or LIKE after {word} NOT")
        op = self._take("op")
        if op not in ("=", "!=", "<>", "<", ">", "<=", ">="):
            raise CriteriaError(f"expected a comparison after {word} but found {op!r}")
        value = self._value()
        return lambda cols: _compare(cols[name], op, value)


def _same(a: Any, b: Any) -> bool:
    if isinstance(b, float) and not isinstance(a, str):
        try:
            return float(a) == b
        except (TypeError, ValueError):
            return False
    return str(a) == str(b)


def _compare(col: np.ndarray, op: str, value: Any) -> np.ndarray:
    """Row-wise comparison with JEDI's semantics (it evaluates the criteria in Python): a NULL (None, '' or NaN)
    equals nothing, so =, IN, LIKE and the orderings are false for it and != is true."""
    null = _null(col)
    if op == "in":
        hit = np.array([any(_same(v, x) for x in value) for v in col], dtype=bool)
    elif op == "like":
        hit = np.array([bool(value.match(str(v))) for v in col], dtype=bool)
    elif op in ("=", "!=", "<>"):
        hit = np.array([_same(v, value) for v in col], dtype=bool)
    else:
        try:
            num = np.array([float(v) if not n else np.nan for v, n in zip(col, null, strict=True)], dtype=float)
        except (TypeError, ValueError):
            return np.zeros(len(col), dtype=bool)
        hit = {"<": num < value, ">": num > value, "<=": num <= value, ">=": num >= value}[op]
    hit &= ~null
    return ~hit if op in ("!=", "<>") else hit


def parse_criteria(text: str, variables: Mapping[str, Any] | None = None) -> Mask:
    """A vectorised predicate over task columns (CRITERIA_COLUMNS) from a work queue's SQL-like criteria.

    Usage: ``parse_criteria("processingType IN ('evgen','simul')")({"processingtype": np.array(["evgen"])})``
    """
    return _Parser(text or "", variables or {}).parse()


def criteria_problem(text: str, variables: Mapping[str, Any] | None = None) -> str | None:
    """Why CRITERIA cannot be read, or None.

    Usage: ``criteria_problem("prodSourceLabel = 'managed'") is None``
    """
    try:
        parse_criteria(text, variables)
    except CriteriaError as exc:
        return str(exc)
    return None


PARTITION_ID = -1  # seed 003: PARTITIONID "Set -1 if the record stands for a partition"


def task_work_queues(tasks: pd.DataFrame, work_queues: pd.DataFrame, partitions: bool = False) -> pd.Series:
    """Per task, the first active work queue (in queue_order within its queue_type = prodSourceLabel) whose
    criteria are true; '' when none matches (JEDI's refiner would have broken the task). With PARTITIONS, a
    partition row (partitionid -1) is no candidate: seed 003, "partition queues themselves don't have selection
    criteria" (its sub queues have).

    Usage: ``task_work_queues(snap.tables["tasks"], snap.tables["work_queues"])``
    """
    out = pd.Series("", index=tasks.index, dtype=object)
    if tasks.empty or work_queues.empty:
        return out
    cols = {c: tasks[c].to_numpy(object) for c in CRITERIA_COLUMNS.values() if c in tasks}
    label = tasks["prodsourcelabel"].to_numpy(object)
    wq = work_queues[work_queues["status"] == "active"].sort_values(["queue_order", "queue_id"], kind="stable")
    if partitions and "partitionid" in wq:
        wq = wq[wq["partitionid"] != PARTITION_ID]
    open_ = np.ones(len(tasks), dtype=bool)
    for row in wq.itertuples(index=False):
        hit = open_ & (label == row.queue_type)
        if not hit.any():
            continue
        hit &= parse_criteria(row.criteria, row.variables or {})(cols)
        out.iloc[np.flatnonzero(hit)] = row.queue_name
        open_ &= ~hit
    return out


def partition_of(work_queues: pd.DataFrame) -> dict[str, str]:
    """Sub queue name -> the name of the partition it belongs to (seed 003: "If tasks pass the selection criteria
    of the sub queue, those tasks belong to the sub queue in addition to the partition queue"); a partitionid that
    names no partition row is ignored.

    Usage: ``partition_of(snap.tables["work_queues"]).get("evgen", "")``
    """
    if "partitionid" not in work_queues or work_queues.empty:
        return {}
    heads = work_queues[work_queues["partitionid"] == PARTITION_ID]
    name_of = dict(zip(heads["queue_id"].astype(int), heads["queue_name"].astype(str), strict=True))
    subs = work_queues[work_queues["partitionid"].notna() & (work_queues["partitionid"] != PARTITION_ID)]
    return {
        str(n): name_of[int(p)]
        for n, p in zip(subs["queue_name"], subs["partitionid"], strict=True)
        if int(p) in name_of
    }


@dataclass(frozen=True)
class ShareTree:
    """The global-share tree: per node its parent and its share of the whole grid in % (leaves sum to 100)."""

    names: list[str]
    parent: np.ndarray  # index of the parent node, -1 at the top level
    target: np.ndarray  # normalised value: parent's target x value / sum of the siblings' values
    leaf: np.ndarray  # bool per node
    throttled: np.ndarray  # bool per node: the job throttler limits this share's work queue
    top_down: tuple[int, ...]  # nodes level by level from the top (nodes in a loop are left out)
    children: Mapping[int, tuple[int, ...]]  # node (-1: the root) -> its children in table order
    stretchable: np.ndarray  # bool per node: it (or a node above it) is first to get unused shares (seed 003)

    @property
    def leaves(self) -> list[str]:
        return [n for n, is_leaf in zip(self.names, self.leaf, strict=True) if is_leaf]


def share_tree(gshares: pd.DataFrame) -> ShareTree:
    """Normalise GLOBAL_SHARES (gshare, parent, value, throttled) into targets in % of the grid (§7.2).

    Usage: ``share_tree(snap.tables["gshares"]).target``
    """
    names = [str(x) for x in gshares["gshare"]]
    index = {n: i for i, n in enumerate(names)}
    parent = np.array([index.get(str(p or ""), -1) for p in gshares["parent"]], dtype=np.int64)
    value = gshares["value"].fillna(0).to_numpy(float).clip(min=0)
    target = np.zeros(len(names))
    has_child = np.zeros(len(names), dtype=bool)
    has_child[parent[parent >= 0]] = True
    level = [i for i in range(len(names)) if parent[i] < 0]
    above = {-1: 100.0}
    top_down: list[int] = []
    while level:
        top_down.extend(level)
        sums: dict[int, float] = {}
        for i in level:
            sums[parent[i]] = sums.get(parent[i], 0.0) + value[i]
        for i in level:
            total = sums[parent[i]]
            target[i] = above[parent[i]] * value[i] / total if total > 0 else 0.0
            above[i] = target[i]
        done = set(level)
        level = [i for i in range(len(names)) if parent[i] in done]
    throttled = gshares["throttled"].fillna(True).to_numpy(bool)
    children: dict[int, list[int]] = {}
    for i in range(len(names)):
        children.setdefault(int(parent[i]), []).append(i)
    kids = {k: tuple(v) for k, v in children.items()}
    stretch = gshares.get("stretchable", pd.Series(False, index=gshares.index)).fillna(False).to_numpy(bool).copy()
    for i in top_down:  # a stretchable node's leaves are stretchable
        stretch[i] |= parent[i] >= 0 and bool(stretch[parent[i]])
    return ShareTree(names, parent, target, ~has_child, throttled, tuple(top_down), kids, stretch)


def stretched_targets(tree: ShareTree, active: np.ndarray) -> np.ndarray:
    """Per node its target in % after seed 003's rule: "CPU resources which are originally allocated to a queue can
    be used by other queues if the queue doesn't have active tasks. If queues have the stretchable attribute, they
    are given priority in getting unused CPUs ... distributed among them according on their original shares";
    without one, every ACTIVE leaf gets them by its original share. A parent's target is its children's sum.

    Usage: ``stretched_targets(tree, running_or_queued_per_node > 0)``
    """
    leaf_active = tree.leaf & active
    target = np.where(leaf_active, tree.target, 0.0)
    unused = float(tree.target[tree.leaf & ~active].sum())
    takers = leaf_active & tree.stretchable
    if not takers.any():
        takers = leaf_active
    base = float(tree.target[takers].sum())
    if unused > 0 and base > 0:
        target[takers] += unused * tree.target[takers] / base
    for i in reversed(tree.top_down):  # deepest first: every parent sums its children
        if tree.parent[i] >= 0:
            target[tree.parent[i]] += target[i]
    return target


def sorted_leaves(tree: ShareTree, executing: np.ndarray, target: np.ndarray | None = None) -> np.ndarray:
    """Rank of each node (0 = served first) after JEDI's sort: at every level children by executing / pledged
    ascending, where pledged = total executing x target / 100 (TARGET, default the tree's), flattened depth first
    (§7.2).

    Usage: ``sorted_leaves(tree, running_per_node)[tree.leaf]``
    """
    target = tree.target if target is None else target
    n = len(tree.names)
    total = np.where(tree.leaf, executing, 0.0).astype(float)
    for i in reversed(tree.top_down):  # deepest first: every parent sums its children
        if tree.parent[i] >= 0:
            total[tree.parent[i]] += total[i]
    pledged = total[tree.parent < 0].sum() * target / 100.0
    ratio = np.where(pledged > 0, total / np.maximum(pledged, 1e-12), UNPLEDGED_RANK)
    rank = np.zeros(n, dtype=np.int64)
    stack, k = [-1], 0
    while stack:
        node = stack.pop()
        if node >= 0:
            rank[node] = k
            k += 1
        kids = sorted(tree.children.get(node, ()), key=lambda c: (ratio[c], c))
        stack.extend(reversed(kids))
    return rank
