"""Decision, Skip and funnel: what a broker decided and why, for every candidate."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np


class LazyTexts:
    """Reason sentences of one filter's removed rows, built together on first use.

    Brokers decide with criteria codes; the sentences are only needed when someone reads the
    explanation, so formatting them is deferred until then.
    """

    __slots__ = ("_build", "_idx", "_texts")

    def __init__(self, build: Callable[[Any], list[str]], idx: Any) -> None:
        self._build = build
        self._idx = idx
        self._texts: list[str] | None = None

    def all(self) -> list[str]:
        """Every sentence, in row order."""
        if self._texts is None:
            self._texts = self._build(self._idx)
        return self._texts

    def __getitem__(self, k: int) -> str:
        return self.all()[k]


class Skip:
    """A candidate removed by a filter: JEDI criteria code, the filter, a sentence, and whether it may pass later."""

    __slots__ = ("_reason", "candidate", "criteria", "stage", "temporary")

    def __init__(
        self, candidate: str, criteria: str, reason: str | tuple[LazyTexts, int], stage: str, temporary: bool = False
    ) -> None:
        self.candidate = candidate
        self.criteria = criteria
        self._reason = reason
        self.stage = stage
        self.temporary = temporary

    @property
    def reason(self) -> str:
        """The sentence explaining the skip."""
        r = self._reason
        if not isinstance(r, str):
            r = self._reason = r[0][r[1]]
        return r

    def _key(self) -> tuple[str, str, str, str, bool]:
        return (self.candidate, self.criteria, self.reason, self.stage, self.temporary)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Skip) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __reduce__(self) -> tuple[Any, ...]:
        # the lazy sentence builder is a closure: pickle the sentence itself
        return (Skip, self._key())

    def __repr__(self) -> str:
        c, code, reason, stage, temp = self._key()
        return f"Skip(candidate={c!r}, criteria={code!r}, reason={reason!r}, stage={stage!r}, temporary={temp!r})"

    def to_dict(self, label: str = "queue") -> dict[str, Any]:
        """JSON form; LABEL names the candidate key (queue or nucleus)."""
        return {
            label: self.candidate,
            "criteria": self.criteria,
            "reason": self.reason,
            "stage": self.stage,
            "temporary": self.temporary,
        }


# one filter's removed rows: (candidate names of the table, row indices, code or codes of those rows,
# sentence or lazy sentences of those rows, stage, temporary); or a list of ready Skip objects
_Block = tuple[np.ndarray, np.ndarray, "str | np.ndarray", "str | LazyTexts", str, bool] | list[Skip]


class SkipList(Sequence[Skip]):
    """A decision's skips, kept as the filters' masks (row indices per filter) until someone reads them.

    Reads like a list of Skip (len, iteration, indexing, equality with a list); Skip objects and their
    sentences are built on first use, and ``to_dicts`` / ``criteria_counts`` work without building them.
    Usage: ``skips = SkipList(); skips.add(names, idx, "-status", texts, "status check"); len(skips)``
    """

    __slots__ = ("_blocks", "_items", "_n")

    def __init__(self, skips: Iterable[Skip] = ()) -> None:
        self._blocks: list[_Block] = []
        self._items: list[Skip] | None = None
        self._n = 0
        items = list(skips)
        if items:
            self._blocks.append(items)
            self._n = len(items)

    def add(
        self, names: np.ndarray, idx: np.ndarray, codes: str | np.ndarray, texts: str | LazyTexts, stage: str,
        temporary: bool = False,
    ) -> None:  # fmt: skip
        """Record rows IDX of the candidate table NAMES as removed by STAGE (CODES / TEXTS: one or per row)."""
        if len(idx) == 0:
            return
        self._blocks.append((names, idx, codes, texts, stage, bool(temporary)))
        self._n += len(idx)
        self._items = None

    def append(self, skip: Skip) -> None:
        """Add one ready Skip at the end."""
        self.extend((skip,))

    def extend(self, skips: Iterable[Skip]) -> None:
        """Add ready Skips at the end."""
        items = list(skips)
        if not items:
            return
        last = self._blocks[-1] if self._blocks else None
        if isinstance(last, list):
            last.extend(items)
        else:
            self._blocks.append(items)
        self._n += len(items)
        if self._items is not None:
            self._items.extend(items)

    def forget(self, candidates: Iterable[str]) -> None:
        """Take back the skips of CANDIDATES (a later rule let them through after all)."""
        drop = set(candidates)
        kept = [s for s in self._materialise() if s.candidate not in drop]
        self._blocks = [kept] if kept else []
        self._items = None
        self._n = len(kept)

    def _materialise(self) -> list[Skip]:
        items = self._items
        if items is None:
            items = []
            for b in self._blocks:
                if isinstance(b, list):
                    items.extend(b)
                    continue
                names, idx, codes, texts, stage, temp = b
                cands = names[idx].tolist()
                code_list = [codes] * len(cands) if isinstance(codes, str) else codes.tolist()
                if isinstance(texts, str):
                    items.extend(Skip(c, k, texts, stage, temp) for c, k in zip(cands, code_list, strict=True))
                else:
                    items.extend(
                        Skip(c, k, (texts, j), stage, temp)
                        for j, (c, k) in enumerate(zip(cands, code_list, strict=True))
                    )
            self._items = items
        return items

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> Skip: ...

    @overload
    def __getitem__(self, i: slice) -> list[Skip]: ...

    def __getitem__(self, i: int | slice) -> Skip | list[Skip]:
        return self._materialise()[i]

    def __iter__(self) -> Iterator[Skip]:
        return iter(self._materialise())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SkipList | list | tuple):
            return len(self) == len(other) and self._materialise() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._materialise())

    def __reduce__(self) -> tuple[Any, ...]:
        return (SkipList, (self._materialise(),))

    def criteria_counts(self) -> dict[str, int]:
        """How many candidates each criteria code removed (without building Skip objects)."""
        counts: dict[str, int] = {}
        for b in self._blocks:
            if isinstance(b, list):
                for s in b:
                    counts[s.criteria] = counts.get(s.criteria, 0) + 1
                continue
            codes = b[2]
            if isinstance(codes, str):
                counts[codes] = counts.get(codes, 0) + len(b[1])
            else:
                for k in codes.tolist():
                    counts[k] = counts.get(k, 0) + 1
        return counts

    def criteria_by_candidate(self) -> dict[str, str]:
        """Each skipped candidate's criteria code (a later skip of the same candidate wins), without Skip objects.

        Usage: ``decision.skipped.criteria_by_candidate()["CERN-PROD"] == "-status"``
        """
        out: dict[str, str] = {}
        for b in self._blocks:
            if isinstance(b, list):
                out.update((s.candidate, s.criteria) for s in b)
                continue
            names, idx, codes, _texts, _stage, _temp = b
            cands = names[idx].tolist()
            out.update(zip(cands, [codes] * len(cands) if isinstance(codes, str) else codes.tolist(), strict=True))
        return out

    def of(self, candidates: Iterable[str]) -> dict[str, Skip]:
        """The Skip of each of CANDIDATES that was removed (a later skip wins), building no other Skip.

        Usage: ``decision.skipped.of(["CERN-PROD"]).get("CERN-PROD")``
        """
        wanted = set(candidates)
        out: dict[str, Skip] = {}
        if not wanted:
            return out
        for b in self._blocks:
            if isinstance(b, list):
                out.update((s.candidate, s) for s in b if s.candidate in wanted)
                continue
            names, idx, codes, texts, stage, temp = b
            for j, c in enumerate(names[idx].tolist()):
                if c in wanted:
                    code = codes if isinstance(codes, str) else str(codes[j])
                    out[c] = Skip(c, code, texts if isinstance(texts, str) else (texts, j), stage, temp)
        return out

    def to_dicts(self, label: str = "queue") -> list[dict[str, Any]]:
        """Every skip's JSON form (as Skip.to_dict), built straight from the stored masks."""
        out: list[dict[str, Any]] = []
        for b in self._blocks:
            if isinstance(b, list):
                out.extend(s.to_dict(label) for s in b)
                continue
            names, idx, codes, texts, stage, temp = b
            cands = names[idx].tolist()
            n = len(cands)
            code_list = [codes] * n if isinstance(codes, str) else codes.tolist()
            text_list = [texts] * n if isinstance(texts, str) else texts.all()
            out.extend(
                {label: c, "criteria": k, "reason": r, "stage": stage, "temporary": temp}
                for c, k, r in zip(cands, code_list, text_list, strict=True)
            )
        return out


@dataclass(slots=True)
class FunnelStep:
    """How many candidates a filter saw and let through (JEDI's brokerage summary lines)."""

    filter: str
    before: int
    after: int

    @property
    def cut_percent(self) -> int:
        """Share removed, rounded up as in JEDI's summary."""
        return 0 if self.before == 0 else math.ceil((self.before - self.after) * 100 / self.before)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"filter": self.filter, "before": self.before, "after": self.after}


@dataclass(frozen=True)
class Note:
    """Something the broker could not judge for a candidate (e.g. a check not implemented), shown, never hidden."""

    candidate: str
    check: str
    text: str


@dataclass
class Candidate:
    """A surviving candidate with its rank, weight and the factors that multiply into the weight."""

    name: str
    rank: int
    weight: float
    factors: dict[str, float]
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, label: str = "queue") -> dict[str, Any]:
        """JSON form; LABEL names the candidate key (queue or nucleus)."""
        out: dict[str, Any] = {label: self.name, "rank": self.rank, "weight": self.weight, "factors": self.factors}
        out.update(self.details)
        return out


@dataclass
class Decision:
    """The full result of one brokerage call: ranked candidates, skips, funnel and effective config.

    Usage: ``decision.to_dict()["candidates"][0]["queue"]``
    """

    broker: str
    task: int
    status: str  # "ok" or "pending"
    candidates: list[Candidate]
    skipped: Sequence[Skip]  # a SkipList from the brokers; any list of Skip works
    funnel: list[FunnelStep]
    config: dict[str, Any]
    label: str = "queue"
    pending_minutes: int | None = None
    message: str = ""
    notes: list[Note] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ranked_names(self) -> list[str]:
        """Candidate names, best first."""
        return [c.name for c in self.candidates]

    def skip_of(self, name: str) -> Skip | None:
        """Why NAME was removed, or None if it was not."""
        for s in self.skipped:
            if s.candidate == name:
                return s
        return None

    def criteria_counts(self) -> dict[str, int]:
        """How many candidates each criteria code removed."""
        if isinstance(self.skipped, SkipList):
            return self.skipped.criteria_counts()
        counts: dict[str, int] = {}
        for s in self.skipped:
            counts[s.criteria] = counts.get(s.criteria, 0) + 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        """The JSON object printed by ``brokerage jobs --json`` / ``brokerage nucleus --json``."""
        out: dict[str, Any] = {
            "broker": self.broker,
            "task": self.task,
            "status": self.status,
            "candidates": [c.to_dict(self.label) for c in self.candidates],
            "skipped": self.skipped.to_dicts(self.label)
            if isinstance(self.skipped, SkipList)
            else [s.to_dict(self.label) for s in self.skipped],
            "funnel": [f.to_dict() for f in self.funnel],
            "config": self.config,
        }
        if self.pending_minutes is not None:
            out["pending_minutes"] = self.pending_minutes
        if self.message:
            out["message"] = self.message
        if self.notes:
            out["notes"] = [{self.label: n.candidate, "check": n.check, "text": n.text} for n in self.notes]
        out.update(self.extra)
        return out

    def summary_lines(self) -> list[str]:
        """JEDI-style brokerage summary block."""
        title = "Task" if self.label == "nucleus" else "Job"
        lines = [f"===== {title} brokerage summary ====="]
        if self.funnel:
            lines.append(f"the number of initial candidates: {self.funnel[0].before}")
        for f in self.funnel:
            if f.after != f.before:
                lines.append(f"{f.before:>5} -> {f.after:>3} candidates, {f.cut_percent:>3}% cut : {f.filter}")
        lines.append(f"the number of final candidates: {len(self.candidates)}")
        return lines


def fmt(x: float, digits: int = 3) -> str:
    """Compact number for reason sentences (integers without decimals)."""
    x = float(x)
    if x != x:  # NaN
        return "n/a"
    if abs(x) < 1e15 and x.is_integer():
        return str(int(x))
    return _plain(x, digits)


def _plain(x: float, digits: int) -> str:
    """X to DIGITS significant figures without scientific notation: 51100.5 → "51,100", 0.0000123 → "0.0000123"."""
    if x != x or x in (math.inf, -math.inf):  # NaN and infinities as Python writes them
        return format(x, f".{digits}g")
    if abs(x) >= 10**digits:
        return f"{round(x, digits - len(str(int(abs(x))))):,.0f}"
    text = f"{x:.{digits}g}"
    if "e" in text:
        text = np.format_float_positional(x, precision=digits, unique=False, fractional=False, trim="-")
    return text


def fmt_many(values: Any, digits: int = 3) -> list[str]:
    """``fmt`` of every value of an array, in one pass.

    Usage: ``fmt_many(np.array([2.0, 0.12345, np.nan])) == ["2", "0.123", "n/a"]``
    """
    v = np.asarray(values, dtype=float)
    if v.size < 8:  # numpy's per-call overhead outweighs the loop
        return [fmt(x, digits) for x in v.tolist()]
    whole = (np.abs(v) < 1e15) & (v == np.trunc(v))
    ints = np.where(whole, v, 0.0).astype(np.int64).tolist()
    return [
        str(i) if w else ("n/a" if x != x else _plain(x, digits))
        for x, i, w in zip(v.tolist(), ints, whole.tolist(), strict=True)
    ]


def sentences(row: Callable[..., str], *columns: np.ndarray, digits: int = 3) -> Callable[[np.ndarray], list[str]]:
    """A reason builder for a Verdict: ROW applied to the formatted values of COLUMNS at the removed rows.

    Usage: ``Verdict(ok, "-diskIO", sentences(lambda a, lim: f"diskIO {a} > limit {lim}", avg, limit))``
    """

    def build(idx: np.ndarray) -> list[str]:
        return [row(*values) for values in zip(*(fmt_many(c[idx], digits) for c in columns), strict=True)]

    return build
