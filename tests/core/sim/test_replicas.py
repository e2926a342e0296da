"""Replicated comparisons: paired summaries, one-key attribution, sweeps, measures of a run and the CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from brokerage.cli.main import main
from brokerage.model.gdpconfig import Config
from brokerage.runs import engine
from brokerage.sim.measures import pending_stays
from brokerage.sim.replicas import compare, compare_plan, say, summarise, sweep, sweep_plan
from brokerage.sim.sweep import replicate
from tests.core.sim.test_engine import _snap


def _runs(values: list[float], key: str = "jobs_finished") -> list[dict]:
    return [{"meta": {"seed": i}, "headline": {}, "measures": {key: v}} for i, v in enumerate(values)]


def test_compare_attributes_each_key_and_leaves_the_rest_to_interactions() -> None:
    """Per seed: full - stored = (4, 5, 6); A alone (2, 1, 3); B alone (0, 2, 1); interactions (2, 2, 2)."""
    runs = {"stored": _runs([10, 20, 30]), "what-if": _runs([14, 25, 36]),
            "only A": _runs([12, 21, 33]), "only B": _runs([10, 22, 31])}  # fmt: skip
    (row,) = compare(runs, ["A", "B"])
    half = 4.303 / math.sqrt(3)
    assert row["means"] == {"stored": 20, "what-if": 25, "only A": 22, "only B": 21}
    assert row["difference"] == 5 and row["interval"] == [round(5 - half, 6), round(5 + half, 6)]
    assert row["significant"]
    a, b, rest = row["attribution"]
    assert (a["key"], a["difference"], a["significant"]) == ("A", 2, False)  # 2 ± 2.484 includes 0
    assert (b["key"], b["difference"]) == ("B", 1)
    assert (rest["key"], rest["difference"], rest["interval"], rest["significant"]) == (
        "(interactions)", 2, [2, 2], True)  # fmt: skip


def test_verdict_says_which_differences_are_real() -> None:
    """A real difference is said with its direction and interval; one whose interval includes 0 is 'no real'."""
    runs = {"stored": _runs([10, 20, 30]), "what-if": _runs([14, 25, 36])}
    assert say(compare(runs)[0]).startswith("jobs finished: 5 more under the what-if (95 % interval")
    flat = {"stored": _runs([10, 20, 30]), "what-if": _runs([11, 23, 32])}
    assert "no real difference" in say(compare(flat)[0])


def test_sweep_gives_each_value_its_mean_interval_and_difference() -> None:
    """Sweep of K over (1, 2): value 2's runs (12, 14, 16) have mean 14 ± 4.303 · 2 / √3 and differ by 2 (0 width)."""
    plan = sweep_plan(Config(), "THROTTLE_THRESHOLD", [1.0, 2.0])
    runs = {"stored": _runs([10, 12, 14]), plan.labels[1]: _runs([10, 12, 14]), plan.labels[2]: _runs([12, 14, 16])}
    (row,) = sweep(runs, plan)
    p1, p2 = row["points"]
    half = 4.303 * 2 / math.sqrt(3)
    assert p2["mean"] == 14 and p2["interval"] == [round(14 - half, 6), round(14 + half, 6)]
    assert p2["difference"]["difference"] == 2 and p2["difference"]["significant"]
    assert not p1["difference"]["significant"] and row["stored"]["mean"] == 12
    doc = summarise(plan, runs, 2.0, [0, 1, 2])
    assert doc["kind"] == "sweep" and doc["values"] == [1.0, 2.0] and len(doc["runs"]) == 9


def test_pending_stays_count_from_entry_or_start_to_exit_or_end() -> None:
    """Task 1 pending from the start until 100 s; task 2 enters at 50 s and stays to the end (300 s): 100 and 250."""
    initial = pd.Series({1: "pending", 2: "running", 3: "ready"})
    causes = [(100.0, 1, "pending", "running", "x"), (50.0, 2, "running", "pending", "y")]
    assert sorted(pending_stays(initial, causes, 300.0)) == [100.0, 250.0]


def test_a_real_edit_is_found_and_attributed_to_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """TIMEOUT_defined 0.1 h (rule R6 closes defined jobs sooner) with THROTTLE_THRESHOLD: more closed jobs, a real
    difference, all of it attributed to TIMEOUT_defined, none to interactions."""
    from brokerage.synth.demo import demo_snapshot

    monkeypatch.setattr(engine, "_engine", engine._Engine(workers=0))
    snap = demo_snapshot(seed=0, queues=8, tasks=12)
    plan = compare_plan(Config(), {"TIMEOUT_defined": 0.1, "THROTTLE_THRESHOLD": 0.01})
    doc = replicate(snap, plan, 1, 4)
    row = next(r for r in doc["measures"] if r["measure"] == "jobs_closed_reassigned")
    assert row["significant"] and row["difference"] > 0
    parts = {p["key"]: p for p in row["attribution"]}
    assert parts["TIMEOUT_defined"]["significant"] and not parts["THROTTLE_THRESHOLD"]["significant"]
    assert not parts["(interactions)"]["significant"]
    assert [r["seed"] for r in doc["runs"] if r["label"] == "only TIMEOUT_defined"] == [0, 1, 2, 3]


@pytest.fixture(autouse=True)
def _own_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test configures its own engine: a client an earlier test left running cannot be re-configured."""
    monkeypatch.setattr(engine, "_engine", engine._Engine())


def _cli(path: Path, *args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, ["simulate", "--snapshot", str(path), "--workers", "0", *args])
    return r.exit_code, r.output


def test_cli_no_op_edit_gives_no_real_difference_and_same_seeds_same_output(tmp_path: Path) -> None:
    """simulate --compare --replicas 10 with a no-op --set: per measure both means, the difference, its interval and
    significant; no measure differs significantly; the same seeds give byte-identical output."""
    path = tmp_path / "g.json"
    _snap().to_json(path)
    args = ["--hours", "2", "--compare", "--replicas", "10", "--set", "THROTTLE_THRESHOLD=2.0", "--json"]
    assert Config()["THROTTLE_THRESHOLD"] == 2.0  # the edit is a no-op
    code, out = _cli(path, *args)
    assert code == 0, out
    doc = json.loads(out)
    assert doc["seeds"] == list(range(10)) and len(doc["measures"]) >= 11
    for row in doc["measures"]:
        assert set(row) >= {"means", "difference", "interval", "significant"} and not row["significant"], row
        assert set(row["means"]) == {"stored", "what-if"}
    spread = next(r for r in doc["measures"] if r["measure"] == "jobs_finished")
    assert len({r["measures"]["jobs_finished"] for r in doc["runs"]}) > 1, spread  # the seeds do vary the runs
    assert _cli(path, *args) == (code, out)


def test_cli_refuses_replicas_and_sweeps_that_do_not_fit(tmp_path: Path) -> None:
    """--replicas without --compare or --sweep, a sweep without values, an unknown swept key and --sweep with
    --compare exit 2 with a message naming the option; a sweep prints each value's mean and interval."""
    path = tmp_path / "g.json"
    _snap().to_json(path)
    for args, words in ((["--replicas", "3"], "--replicas needs --compare"),
                        (["--sweep", "THROTTLE_THRESHOLD="], "--sweep: 'THROTTLE_THRESHOLD='"),
                        (["--sweep", "NO_SUCH=1,2"], "NO_SUCH"),
                        (["--sweep", "THROTTLE_THRESHOLD=1", "--compare", "--set", "NQUEUED_SAT_CAP=3"],
                         "leave out --compare")):  # fmt: skip
        code, out = _cli(path, "--hours", "1", *args)
        assert code == 2 and words in out and "Traceback" not in out, out
    code, out = _cli(path, "--hours", "1", "--sweep", "THROTTLE_THRESHOLD=1,3", "--replicas", "2", "--quiet")
    assert code == 0 and "per value of THROTTLE_THRESHOLD" in out and "jobs finished" in out, out


def test_replicas_on_the_cluster_equal_serial_runs_and_cancel_stops_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """simulate_replicas on a 2-worker LocalCluster gives, per config and seed, the run made in this process; in
    process the progress counts every run's minutes and cancel() raises Cancelled."""
    from distributed import Client, LocalCluster

    from brokerage.runs.chunks import Cancelled
    from brokerage.sim.sweep import simulate_replicas

    snap = _snap()
    configs = [Config(), Config().with_overrides({"THROTTLE_THRESHOLD": 0.5})]
    monkeypatch.setattr(engine, "_engine", engine._Engine(workers=0))
    seen: list[tuple[int, int]] = []
    serial = simulate_replicas(snap, configs, 1, [3, 4], progress=lambda d, t: seen.append((d, t)))
    assert [[r["meta"]["seed"] for r in runs] for runs in serial] == [[3, 4], [3, 4]]
    assert seen[-1] == (240, 240)
    with pytest.raises(Cancelled):
        simulate_replicas(snap, configs, 1, [0, 1], cancel=lambda: True)
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None) as lc,
        Client(lc, set_as_default=False) as client,
    ):
        parallel = simulate_replicas(snap, configs, 1, [3, 4], client=client)
    assert json.dumps(parallel, sort_keys=True, default=str) == json.dumps(serial, sort_keys=True, default=str)
