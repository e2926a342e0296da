"""Viewmodels are pure functions from core results to rows, figures and labels."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from app.viewmodels import network, nuclei, overview, queues, stabilizer, tasks
from brokerage.brokers.batch import run_grid_serial as run_grid
from brokerage.brokers.router import run_job_brokerage
from brokerage.brokers.stabilizer import stabilizer_grid
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.waiting import waiting_task_ids


def test_viewmodels_do_not_import_dash() -> None:
    """Importing the viewmodels pulls in no dash module of their own."""
    import importlib

    for name in ("common", "queues", "overview", "network", "stabilizer", "tasks", "nuclei", "detail"):
        mod = importlib.import_module(f"app.viewmodels.{name}")
        text = Path(mod.__file__).read_text()
        assert "import dash" not in text and "from dash" not in text
    assert "brokerage" in sys.modules


def test_queue_rows_have_job_counts(snap) -> None:
    """Each queue row carries its attributes, site role and job counts summed over shares."""
    rows = queues.queue_rows(snap)
    assert len(rows) == 12
    q0 = next(r for r in rows if r["panda_queue"] == "CERN-PROD_Q0")
    assert q0["site_role"] == "nucleus" and q0["running"] == 20 + 10 and q0["activated"] == 5 + 30


def test_task_options_put_waiting_tasks_first(snap) -> None:
    """The task picker lists waiting tasks before running or done ones, with readable labels."""
    opts = queues.task_options(snap)
    values = [o["value"] for o in opts]
    assert values.index(6) > values.index(8)
    assert opts[0]["label"].startswith("1 · ready · managed")


def test_parse_task_accepts_text_and_rejects_junk() -> None:
    """URL text becomes a task id; junk becomes None instead of an error."""
    assert queues.parse_task("42") == 42 and queues.parse_task(7) == 7
    assert queues.parse_task("abc") is None and queues.parse_task(None) is None


def test_showcase_task_opens_on_a_waiting_production_ranking(snap) -> None:
    """With no task in the URL, the view opens on the first waiting production task with a nucleus keeping at
    least WANT candidates; else the one with most candidates; else the first waiting task."""
    counts = {1: 2, 2: 7, 8: 9, 7: 40}  # 7 is a user task, 3/4 have no nucleus: never picked
    assert queues.showcase_task(snap, lambda t: counts.get(t, 0), want=5) == 2
    assert queues.showcase_task(snap, lambda t: counts.get(t, 0), want=8) == 8
    assert queues.showcase_task(snap, lambda t: counts.get(t, 0), want=50) == 8
    assert queues.showcase_task(snap, lambda t: 0, want=5) == 1  # nobody has candidates: the first waiting task
    # task brokerage: production tasks in 'assigning' without a nucleus (only 4; 3 is pending)
    assert queues.showcase_task(snap, lambda t: {3: 9, 4: 1}.get(t, 0), want=3, stage="nucleus") == 4


def test_url_task_names_an_unusable_permalink(snap) -> None:
    """A ?task= that is not a whole number, or no task of the snapshot, is reported with the value, not dropped."""
    assert queues.url_task(snap, "2") == (2, None) and queues.url_task(snap, None) == (None, None)
    tid, why = queues.url_task(snap, "999")
    assert tid is None and why is not None and "task=999" in why and "no such task" in why
    tid, why = queues.url_task(snap, "abc")
    assert tid is None and why is not None and "task=abc" in why and "whole number" in why


def test_funnel_and_factors_explain_a_decision(snap) -> None:
    """The funnel starts at the initial count and the factor figure has a weight trace and one per factor."""
    d = run_job_brokerage(snap, 1, Config())
    fig = queues.funnel_figure(d)
    assert fig["data"][0]["x"][0] == d.funnel[0].before and fig["data"][0]["x"][-1] == len(d.candidates)
    ff = queues.factor_figure(d)
    assert [t["name"] for t in ff["data"]] == ["weight", *d.candidates[0].factors]
    assert go.Figure(ff).data and go.Figure(fig).data  # the plain dicts are valid plotly figures
    rows = queues.factor_rows(d)
    assert rows[0]["rank"] == 1 and "f_base" in rows[0]


def test_skipped_rows_filter_by_criteria(snap) -> None:
    """Skipped rows can be narrowed to chosen criteria codes and the options count each code."""
    d = run_job_brokerage(snap, 2, Config())
    all_rows = queues.skipped_rows(d)
    only = queues.skipped_rows(d, ["-cpucore"])
    assert len(only) == d.criteria_counts()["-cpucore"] < len(all_rows)
    assert queues.criteria_options(d)[0]["value"] == "-cpucore"


def test_selected_criteria_stay_offered(snap) -> None:
    """A selected criteria code stays among the options even when no queue has it, so a permalink's filter survives."""
    d = run_job_brokerage(snap, 2, Config())
    values = [o["value"] for o in queues.criteria_options(d, ["-nopilot"])]
    assert values[-1] == "-nopilot" and values.count("-nopilot") == 1
    assert [o["value"] for o in queues.criteria_options(d, ["-cpucore"])].count("-cpucore") == 1


def test_query_string_round_trip() -> None:
    """Query strings skip empty values and join lists; split_list reverses the join."""
    assert queues.query_string(task=3, criteria=["-a", "-b"], x="") == "?task=3&criteria=-a%2C-b"
    assert queues.split_list("-a,-b") == ["-a", "-b"] and queues.split_list(None) == []


def test_overview_counts_and_census(snap) -> None:
    """Counts cover queues, nuclei and waiting tasks; the census counts skips per criteria over every waiting task."""
    c = overview.counts(snap)
    assert c["queues"] == 12 and c["nuclei"] == 2 and c["waiting"] == 6
    run = run_grid(snap, Config())
    census = overview.census_from_run(run)
    assert census["analysed"] == 6 and census["failed"] == 0
    assert census["criteria"][0]["skips"] >= census["criteria"][-1]["skips"]
    # the census is the sum of every job decision's criteria counts
    cpu = sum(run_job_brokerage(snap, t, Config()).criteria_counts().get("-cpucore", 0) for t in waiting_task_ids(snap))
    assert {r["criteria"]: r["skips"] for r in census["criteria"]}.get("-cpucore", 0) == cpu
    assert "6 of 6 waiting tasks analysed" in overview.census_sentence(census)


def test_census_reports_failures_instead_of_raising(snap) -> None:
    """A task the broker cannot handle is counted as failed and the others still count."""
    run = run_grid(snap, Config(), task_ids=[1, 2, 99999])
    census = overview.census_from_run(run)
    assert census["failed"] == 1 and census["analysed"] == 2


def test_network_weight_map_sets_links_over_the_cap_apart(snap) -> None:
    """Links over NQUEUED_SAT_CAP are skipped by job brokerage: marked, and their negative 2 - n/cap weight is not
    drawn (with a cap of 1 file, every sample link with queued files is over it; a nucleus to itself never is)."""
    m = network.matrix(GridCache(snap), Config().with_overrides({"NQUEUED_SAT_CAP": 1}), "weight")
    i, j = m["sites"].index("AGLT2"), m["nuclei"].index("CERN-PROD")
    assert m["over_cap"][i][j] and m["z"][i][j] < 0
    same = m["sites"].index("CERN-PROD")
    assert not m["over_cap"][same][j] and m["z"][same][j] == 2.5
    fig = network.heatmap(m)
    assert np.isnan(np.array(fig.data[0].z, dtype=float)[i][j])
    assert "over NQUEUED_SAT_CAP=1 files (link skipped)" in {t.name for t in fig.data[1:]}


def test_tall_network_map_names_the_nuclei_at_the_bottom_too() -> None:
    """Over 40 site rows, the nucleus names are repeated below the map; a short map keeps them on top only."""

    def fake(n: int) -> dict:
        return {"metric": "weight", "sites": [f"S{i}" for i in range(n)], "nuclei": ["A", "B"],
                "z": [[1.0, 1.0]] * n, "blocked": [[False, False]] * n, "missing": [[False, False]] * n,
                "over_cap": [[False, False]] * n, "cap": 150.0}  # fmt: skip

    assert network.heatmap(fake(50)).layout.xaxis2.side == "bottom"
    assert "xaxis2" not in network.heatmap(fake(10)).to_plotly_json()["layout"]


def test_network_matrix_marks_blocked_and_missing(snap) -> None:
    """The blocked AGLT2→BNL link and MWT2's missing throughput are flagged, not shown as numbers."""
    m = network.matrix(GridCache(snap), Config(), "throughput")
    i, j = m["sites"].index("AGLT2"), m["nuclei"].index("BNL-ATLAS")
    assert m["blocked"][i][j]
    k = m["sites"].index("MWT2")
    assert m["missing"][k][0] and m["z"][k][0] is None
    fig = network.heatmap(m)
    assert {t.name for t in fig.data[1:]} == {
        "blocked link (closeness -1)",
        "metric missing",
        "same site (nucleus itself)",
    }


def test_network_cells_without_a_number_say_why_on_hover(snap) -> None:
    """A heatmap cell left out of the colour scale says why on hover (blocked, no data, the nucleus itself), never
    "NaN"; a cell with a value shows it."""
    m = network.matrix(GridCache(snap), Config(), "closeness")
    text = network.heatmap(m).data[0].text
    i, j = m["sites"].index("AGLT2"), m["nuclei"].index("BNL-ATLAS")
    assert text[i][j] == "BLOCKED (closeness -1): -link_unusable"
    same = m["sites"].index("CERN-PROD")
    assert text[same][m["nuclei"].index("CERN-PROD")] == "the nucleus itself"
    k = m["sites"].index("MWT2")
    t = network.heatmap(network.matrix(GridCache(snap), Config(), "throughput")).data[0].text
    assert t[k][0] == "no throughput data"
    assert not any("nan" in cell.lower() for row in text for cell in row)
    assert any(cell.startswith("closeness=") for row in text for cell in row)


def test_link_detail_names_the_rule(snap) -> None:
    """A link without throughput data uses the closeness fallback and says so."""
    d = network.link_detail(GridCache(snap), Config(), "MWT2", "CERN-PROD")
    assert d["rule"] == "no throughput data: closeness fallback" and d["has_link_data"]
    assert network.metric_or_default("bogus") == "weight"


def test_stabilizer_per_queue_and_user(snap) -> None:
    """Per-queue rows keep one nQ_max per PQ and the user figure draws nQ_user against max_q_len."""
    df = stabilizer_grid(GridCache(snap), Config())
    pq = stabilizer.per_queue(df)
    assert len(pq) == 2 and set(pq.columns) >= {"nQ", "nQ_max", "throttled_users"}
    assert stabilizer.users(df)[0] in ("alice", "bob")
    fig = stabilizer.user_figure(df, "alice")
    assert fig.data[1].name == "max_q_len"
    assert all(r["produsername"] == "bob" for r in stabilizer.rows(df, user="bob"))


def test_stabilizer_empty_frame_gives_empty_figure() -> None:
    """With no analysis activity the queue chart explains itself instead of failing."""
    fig = stabilizer.queue_figure(stabilizer.per_queue(pd.DataFrame()))
    assert "no analysis jobs" in fig.layout.annotations[0].text


def test_task_transitions_and_durations(snap) -> None:
    """Transitions count consecutive state pairs and the time-in-state table has medians per state."""
    log = snap.task_status_log
    tr = tasks.transitions(log, snap.taken_at)
    pairs = {(r.source, r.target): r.n for r in tr.itertuples()}
    assert pairs[("registered", "defined")] == 8 and pairs[("ready", "running")] == 2
    recent = tasks.transitions(log, snap.taken_at, "6h")
    assert list(zip(recent["source"], recent["target"], strict=True)) == [("prepared", "done")]
    tis = tasks.time_in_state(tasks.durations(log, snap.taken_at))
    assert "defined" in set(tis["status"])
    # the 6 h window (since 06:00) holds one finished stay, task 6's hour in prepared, and only task 6 moved
    since = tasks.window_start(snap.taken_at, "6h")
    windowed = tasks.time_in_state(tasks.durations(log, snap.taken_at), since)
    assert windowed.set_index("status")["stays"].to_dict() == {"prepared": 1}
    assert windowed.set_index("status")["median_h"]["prepared"] == 1.0
    assert list(tasks.tasks_in_window(snap.tasks, log, since)["jeditaskid"]) == [6]
    assert len(tasks.tasks_in_window(snap.tasks, log, None)) == len(snap.tasks)
    hist = tasks.history(log, snap.taken_at, 6)
    assert [h["status"] for h in hist][-1] == "done" and hist[-1]["current"]
    from app.viewmodels import state_diagram as sdv

    fig = sdv.diagram(tr, sdv.future_transitions([]), tasks.status_counts(snap.tasks), "t")
    heads = [a for a in fig.layout.annotations if a["showarrow"]]  # the others caption the groups of states
    assert all(a["arrowcolor"] == sdv.PAST for a in heads) and len(heads) == len(tr)


def test_state_diagram_draws_simulated_transitions_apart_and_stuck_tasks_longest_first(snap) -> None:
    """The diagram draws each logged transition in slate and each simulated one (from a run's task_changes, counted
    by from -> to, same-status steps left out) in orange, arrow width growing with the count; the stuck table lists
    every task not final, longest in its status first, with the brokerage's reason where one is given."""
    from app.viewmodels import state_diagram as sdv

    log = snap.task_status_log
    future = sdv.future_transitions([
        {"from": "ready", "to": "running"}, {"from": "ready", "to": "running"}, {"from": "running", "to": "running"},
        {"from": "running", "to": "done"}])  # fmt: skip
    assert future.to_dict("records") == [{"source": "ready", "target": "running", "n": 2},
                                         {"source": "running", "target": "done", "n": 1}]  # fmt: skip
    tr = tasks.transitions(log, snap.taken_at)
    fig = sdv.diagram(tr, future, tasks.status_counts(snap.tasks), "t")
    orange = [a for a in fig.layout.annotations if a["showarrow"] and a["arrowcolor"] == sdv.FUTURE]
    assert len(orange) == 2 and orange[0]["arrowwidth"] > orange[1]["arrowwidth"]
    rows = sdv.stuck_rows(snap.tasks, tasks.durations(log, snap.taken_at), {3: "all queues skipped: memory"})
    assert {r["task"] for r in rows} == set(snap.tasks.loc[~snap.tasks["status"].isin(["done"]), "jeditaskid"])
    hours = [r["hours_in_status"] for r in rows]
    assert hours == sorted(hours, reverse=True)
    assert next(r for r in rows if r["task"] == 3)["reason"] == "all queues skipped: memory"
    assert next(r for r in rows if r["task"] == 4)["reason"].startswith("assigning: waits for TaskBroker")


def test_nucleus_rows_flag_storage_and_backlog(snap) -> None:
    """Each nucleus shows storage in TB against DISK_THRESHOLD and its bare-nucleus mode."""
    rows = nuclei.nucleus_rows(GridCache(snap), Config())
    bnl = next(r for r in rows if r["nucleus"] == "BNL-ATLAS")
    assert bnl["bare_nucleus"] == "allow" and bnl["total_TB"] == 1000.0 and bnl["free_TB"] == 500.0
    assert not bnl["below_threshold"] and bnl["active_tasks"] == 2
    fig = nuclei.storage_figure(rows, 100.0)
    assert [t.name for t in fig.data] == ["free", "expired (reclaimable)", "DISK_THRESHOLD 100 TB"]
    assert set(fig.data[2].y) == {100.0} and fig.layout.yaxis.type == "log"
    # a nucleus whose free + expired space is below DISK_THRESHOLD is drawn red, the others green
    red, green = "#dc2626", "#16a34a"
    assert set(nuclei.storage_figure(rows, 1e9).data[0].marker.color) == {red}
    assert set(nuclei.storage_figure(rows, 0.0).data[0].marker.color) == {green}


def test_probability_figure_uses_broker_probability(snap) -> None:
    """Selection probabilities come from candidate details when the broker gives them."""
    from brokerage.model.explain import Candidate, Decision

    d = Decision("task", 1, "ok", [Candidate("A", 1, 3.0, {"w": 3.0}, {"probability": 0.75}),
                                   Candidate("B", 2, 1.0, {"w": 1.0}, {"probability": 0.25})], [], [], {}, label="nucleus")  # fmt: skip
    assert list(nuclei.probability_figure(d).data[0].y) == [0.75, 0.25]


def test_search_tasks_finds_by_id_or_name_and_keeps_the_picked_task(snap) -> None:
    """Typing part of an id or name finds tasks across the whole grid; the current pick stays an option."""
    found = queues.search_tasks(snap, "evgen", keep=6)
    assert [o["value"] for o in found] == [2, 6]
    assert [o["value"] for o in queues.search_tasks(snap, "7")] == [7]
    assert 6 in {o["value"] for o in queues.picker_options(snap, 6, limit=2)}


def test_cache_config_from_env(monkeypatch) -> None:
    """REDIS_URL makes the answer cache Redis (shared by the server processes), else a bounded SimpleCache;
    CACHE_TYPE picks the flask-caching backend with its directory or Redis URL."""
    from app.state import cache_config

    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.delenv("CACHE_TYPE", raising=False)
    assert cache_config()["CACHE_TYPE"] == "SimpleCache" and cache_config()["CACHE_THRESHOLD"] > 0
    monkeypatch.setenv("REDIS_URL", "redis://r:6379/2")
    assert (cache_config()["CACHE_TYPE"], cache_config()["CACHE_REDIS_URL"]) == ("RedisCache", "redis://r:6379/2")
    monkeypatch.delenv("REDIS_URL")
    monkeypatch.setenv("CACHE_TYPE", "FileSystemCache")
    monkeypatch.setenv("CACHE_DIR", "/tmp/x")
    assert cache_config()["CACHE_DIR"] == "/tmp/x"
    monkeypatch.setenv("CACHE_TYPE", "RedisCache")
    monkeypatch.setenv("CACHE_REDIS_URL", "redis://h:1/0")
    assert cache_config()["CACHE_REDIS_URL"] == "redis://h:1/0"
    monkeypatch.delenv("CACHE_TYPE")
    assert cache_config()["CACHE_TYPE"] == "SimpleCache"
