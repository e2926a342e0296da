"""Running a rule family through the job brokers: the production broker against its seed reference, the analysis broker.

Each test module of tests/core/checks builds a small grid, brokers task 1 and compares the criteria codes of the
skipped queues with numbers worked out by hand. Production checks run both the vectorised broker and the scalar
seed reference (``assert_codes``); ``assert_seed_codes`` marks where the broker must follow the seed.
"""

from __future__ import annotations

from typing import Any

import pytest

from brokerage.brokers import analysis, production
from brokerage.model.explain import Decision
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from tests.builders import RECENT, anal_task, grid, queue
from tests.reference import production_reference as ref

THREE_HOURS_AGO = "2026-11-20T09:00:00Z"
TWO_HOURS_AGO = "2026-11-20T10:00:00Z"


class SeedDeviation(AssertionError):
    """The broker decided differently from the seed (the reference)."""


def decide(snap: GridSnapshot, **overrides: Any) -> tuple[Decision, ref.RefResult]:
    """The broker's and the seed reference's decision for task 1."""
    config = Config().with_overrides(overrides)
    return production.broker(snap, 1, config), ref.broker(snap, 1, config)


def codes_of(decision: Decision) -> dict[str, str]:
    """Criteria code of every skipped queue."""
    return {s.candidate: s.criteria for s in decision.skipped}


def assert_codes(snap: GridSnapshot, expected: dict[str, str | None], **overrides: Any) -> Decision:
    """Both implementations skip exactly the queues of EXPECTED with the given codes (None = not skipped)."""
    decision, seed = decide(snap, **overrides)
    want = {q: c for q, c in expected.items() if c is not None}
    assert {q: c for q, c in seed.skips.items() if q in expected} == want, "seed reference"
    assert {q: c for q, c in codes_of(decision).items() if q in expected} == want, "broker"
    return decision


def assert_seed_codes(snap: GridSnapshot, expected: dict[str, str | None], **overrides: Any) -> None:
    """The reference follows the seed; the broker must too, else SeedDeviation."""
    decision, seed = decide(snap, **overrides)
    want = {q: c for q, c in expected.items() if c is not None}
    assert {q: c for q, c in seed.skips.items() if q in expected} == want, "seed reference"
    got = {q: c for q, c in codes_of(decision).items() if q in expected}
    if got != want:
        raise SeedDeviation(f"broker skips {got}, the seed {want}")


def weights_of(snap: GridSnapshot, **overrides: Any) -> dict[str, float]:
    """Candidate weights; the broker's and the reference's must agree."""
    decision, seed = decide(snap, **overrides)
    got = {c.name: c.weight for c in decision.candidates}
    want = {c.name: c.weight for c in seed.candidates}
    assert got.keys() == want.keys()
    for name, w in want.items():
        assert got[name] == pytest.approx(w, rel=1e-12)
    return got


def candidate(decision: Decision, name: str) -> Any:
    """The candidate NAME of DECISION."""
    return next(c for c in decision.candidates if c.name == name)


def net(src: str, dst: str, **values: float) -> list[dict[str, Any]]:
    """Network rows from SRC to DST; keys: closeness, queued, express, mbps_1h, mbps_1d, mbps_1w."""
    names = {
        "closeness": "AGIS_closeness",
        "queued": "Production Output_queued",
        "express": "Express_queued",
        "mbps_1h": "dashb_mbps_1h",
        "mbps_1d": "dashb_mbps_1d",
        "mbps_1w": "dashb_mbps_1w",
    }
    return [{"src": src, "dst": dst, "key": names[k], "value": v, "ts": RECENT} for k, v in values.items()]


def sites(nucleus: str, *satellites: str) -> list[dict[str, Any]]:
    """A nucleus and its satellites."""
    return [{"site_name": nucleus, "role": "nucleus"}] + [{"site_name": s, "role": "satellite"} for s in satellites]


def endpoint(site: str, **kw: Any) -> dict[str, Any]:
    """The DATADISK of SITE with plenty of space; keyword arguments override columns."""
    row = {"ddm_endpoint_name": f"{site}_DATADISK", "site_name": site, "space_total": 1e6, "space_free": 5e5}
    row.update(kw)
    return row


def _nucleus_grid(t: dict[str, Any], network: list[dict[str, Any]], **kw: Any) -> GridSnapshot:
    """Queue QN at nucleus N and queues Q1, Q2 at its satellites S1, S2, with task T."""
    qs = [queue("QN", "N"), queue("Q1", "S1"), queue("Q2", "S2")]
    return grid(qs, [t], sites=sites("N", "S1", "S2"), network=network, **kw)


# --- the analysis broker ---------------------------------------------------------------------------

UA = "User Analysis"
PLATFORM = "x86_64-centos7-gcc8-opt"


def run(snap: GridSnapshot, config: Config | None = None, tid: int = 1) -> Decision:
    """The analysis broker on task TID."""
    return analysis.broker(snap, tid, config or Config())


def codes(d: Decision) -> dict[str, str]:
    """Skip criteria per queue."""
    return {s.candidate: s.criteria for s in d.skipped}


def cfg(**overrides: Any) -> Config:
    """Config with overrides."""
    return Config().with_overrides(overrides)


def with_input(queues: list[dict[str, Any]], holders: dict[str, int], nfiles: int = 10, **kw: Any) -> GridSnapshot:
    """A grid where task 1 reads one dataset of NFILES files; HOLDERS maps a site to the files its DATADISK holds."""
    tasks = kw.pop("tasks", [anal_task(1)])
    return grid(
        queues,
        tasks,
        datasets=[{"jeditaskid": 1, "datasetid": 1, "nfiles": nfiles, "size_gb": 10.0}],
        dataset_replicas=[
            {"jeditaskid": 1, "datasetid": 1, "ddm_endpoint_name": f"{s}_DATADISK", "nfiles": n, "size_gb": 1.0}
            for s, n in holders.items()
        ],
        **kw,
    )
