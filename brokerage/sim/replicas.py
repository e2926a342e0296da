"""Replicated stored-vs-proposed runs: paired intervals per measure, one-key-at-a-time attribution, sweeps."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from brokerage.model.gdpconfig import Config, Value
from brokerage.sim.measures import MEASURES, SHARE_PREFIX, describe
from brokerage.sim.paired import CONFIDENCE, METHOD, Interval, mean_interval, paired

STORED, WHATIF, INTERACTIONS = "stored", "what-if", "(interactions)"
Runs = Mapping[str, Sequence[Mapping[str, Any]]]  # label -> one compact run per replica, in seed order


@dataclass(frozen=True)
class Plan:
    """The configs a replicated comparison runs, by label: the stored one first; KEYS are the attributed edits (each
    alone under ``only KEY``), or for a sweep the one swept key with its VALUES."""

    kind: str  # "compare" or "sweep"
    labels: tuple[str, ...]
    configs: tuple[Config, ...]
    overrides: tuple[dict[str, Value], ...]
    keys: tuple[str, ...] = ()
    values: tuple[Value, ...] = ()


def only(key: str) -> str:
    """The label of the run with one key of the edit alone."""
    return f"only {key}"


def compare_plan(stored: Config, edits: Mapping[str, Value], attribute: bool = True) -> Plan:
    """Stored vs stored+EDITS; with two or more keys (and ATTRIBUTE) each key alone too, on the same seeds.

    Usage: ``compare_plan(config, {"THROTTLE_THRESHOLD": 1.5, "NQUEUED_SAT_CAP": 300})``
    """
    labels, configs, overrides = [STORED, WHATIF], [stored, stored.with_overrides(dict(edits))], [{}, dict(edits)]
    keys = tuple(edits) if attribute and len(edits) >= 2 else ()
    for key in keys:
        labels.append(only(key))
        configs.append(stored.with_overrides({key: edits[key]}))
        overrides.append({key: edits[key]})
    return Plan("compare", tuple(labels), tuple(configs), tuple(overrides), keys)


def sweep_plan(stored: Config, key: str, values: Sequence[Value], edits: Mapping[str, Value] | None = None) -> Plan:
    """Stored vs one config per value of KEY (on top of EDITS), on the same seeds.

    Usage: ``sweep_plan(config, "THROTTLE_THRESHOLD", [1.0, 1.5, 2.0])``
    """
    labels, configs, overrides = [STORED], [stored], [{}]
    for v in values:
        edit = {**(edits or {}), key: v}
        labels.append(f"{key}={v}")
        configs.append(stored.with_overrides(edit))
        overrides.append(edit)
    return Plan("sweep", tuple(labels), tuple(configs), tuple(overrides), (key,), tuple(values))


def measure_keys(runs: Runs) -> list[str]:
    """The measures of RUNS in reading order: the fixed ones, then the per-share gaps by name."""
    seen = {k for rs in runs.values() for r in rs for k in r["measures"]}
    shares = sorted(k for k in seen if k.startswith(SHARE_PREFIX))
    return [k for k, _, _ in MEASURES if k in seen] + shares


def _col(runs: Runs, label: str, key: str) -> list[float | None]:
    return [r["measures"].get(key) for r in runs[label]]


def _iv(x: Interval) -> dict[str, Any]:
    """A difference with its interval, JSON-ready and rounded."""
    return {"difference": _r(x.mean), "interval": [_r(x.low), _r(x.high)], "significant": x.significant, "n": x.n}


def _r(x: float | None) -> float | None:
    return None if x is None else round(float(x), 6)


def compare(runs: Runs, keys: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Per measure: each config's mean, the paired difference what-if - stored with its 95 % interval and whether it
    is significant; with KEYS, each key alone against the stored config and what is left to interactions (per seed,
    the full difference minus the sum of the one-key differences).

    Usage: ``compare({"stored": runs_a, "what-if": runs_b})[0]["significant"]``
    """
    rows = []
    for key in measure_keys(runs):
        name, unit = describe(key)
        base, full = _col(runs, STORED, key), _col(runs, WHATIF, key)
        row = {"measure": key, "name": name, "unit": unit,
               "means": {label: _r(mean_interval(_col(runs, label, key)).mean) for label in runs},
               **_iv(paired(base, full))}  # fmt: skip
        if keys:
            parts = [paired(base, _col(runs, only(k), key)) for k in keys]
            left = _interaction(base, full, [_col(runs, only(k), key) for k in keys])
            row["attribution"] = [{"key": k, **_iv(p)} for k, p in zip(keys, parts, strict=True)]
            row["attribution"].append({"key": INTERACTIONS, **_iv(left)})
        rows.append(row)
    return rows


def _interaction(base: list[Any], full: list[Any], alone: list[list[Any]]) -> Interval:
    """Per seed: (full - stored) - sum over keys of (key alone - stored); its mean and interval."""
    per_seed: list[float | None] = []
    for i, b in enumerate(base):
        xs = [full[i], *(a[i] for a in alone)]
        if b is None or any(x is None for x in xs):
            per_seed.append(None)
            continue
        per_seed.append((full[i] - b) - sum(a[i] - b for a in alone))
    return mean_interval(per_seed)


def sweep(runs: Runs, plan: Plan) -> list[dict[str, Any]]:
    """Per measure: the stored config's mean with its interval, then per swept value its mean with its interval and
    its paired difference from the stored config with that interval.

    Usage: ``sweep(runs, plan)[0]["points"][1]["interval"]``
    """
    rows = []
    for key in measure_keys(runs):
        name, unit = describe(key)
        base = _col(runs, STORED, key)
        points = []
        for label, value in zip(plan.labels[1:], plan.values, strict=True):
            col = _col(runs, label, key)
            m = mean_interval(col)
            d = paired(base, col)
            points.append({"value": value, "label": label, "mean": _r(m.mean), "interval": [_r(m.low), _r(m.high)],
                           "difference": _iv(d)})  # fmt: skip
        s = mean_interval(base)
        rows.append({"measure": key, "name": name, "unit": unit,
                     "stored": {"mean": _r(s.mean), "interval": [_r(s.low), _r(s.high)]}, "points": points})  # fmt: skip
    return rows


def number(x: float | None, unit: str = "") -> str:
    """A figure as a person reads it: thousands separated, at most 3 significant decimals."""
    if x is None:
        return "-"
    text = f"{x:,.0f}" if abs(x) >= 100 or float(x).is_integer() else f"{x:,.2f}" if abs(x) >= 1 else f"{x:.3g}"
    return f"{text} {unit}".strip() if unit in ("min", "h", "pp") else text


def say(row: Mapping[str, Any], what: str = WHATIF) -> str:
    """One measure's verdict in words: a real difference (its interval excludes 0) or none.

    Usage: ``say(compare(runs)[0])  # 'jobs finished: 1,234 more under the what-if (95 % interval 1,010 to 1,458)'``
    """
    d, (lo, hi), unit = row["difference"], row["interval"], row["unit"]
    if d is None:
        return f"{row['name']}: no value in these runs"
    if lo is None:
        return f"{row['name']}: {number(d, unit)} from one replica; at least 2 are needed for an interval"
    span = f"95 % interval {number(lo, unit)} to {number(hi, unit)}"
    if not row["significant"]:
        return f"{row['name']}: no real difference ({span}, which includes 0)"
    more = "more" if d > 0 else "less" if unit in ("min", "h", "pp") else "fewer"
    return f"{row['name']}: {number(abs(d), unit)} {more} under the {what} ({span})"


def verdict(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """The sentences of the real differences, then the measures with none (by name).

    Usage: ``verdict(compare(runs))["real"]``
    """
    real = [say(r) for r in rows if r["significant"]]
    none = [r["name"] for r in rows if not r["significant"]]
    return {"real": real, "not_real": none}


def summarise(plan: Plan, runs: Runs, hours: float, seeds: Sequence[int]) -> dict[str, Any]:
    """The document of a replicated comparison or sweep from its RUNS (label -> compact runs in seed order).

    Usage: ``summarise(plan, {"stored": [...], "what-if": [...]}, 2, [0, 1])["measures"]``
    """
    doc: dict[str, Any] = {
        "kind": plan.kind, "method": METHOD, "confidence": CONFIDENCE, "hours": hours, "replicas": len(seeds),
        "seeds": list(seeds), "keys": list(plan.keys),
        "configs": [{"label": lb, "overrides": ov} for lb, ov in zip(plan.labels, plan.overrides, strict=True)],
    }  # fmt: skip
    if plan.kind == "sweep":
        doc["values"] = list(plan.values)
        doc["measures"] = sweep(runs, plan)
    else:
        doc["measures"] = compare(runs, plan.keys)
        doc["verdict"] = verdict(doc["measures"])
    doc["runs"] = [{"label": lb, "seed": r["meta"]["seed"], "headline": r["headline"], "measures": r["measures"]}
                   for lb in plan.labels for r in runs[lb]]  # fmt: skip
    return doc
