"""The simulator's agents: dispatch order, attempts, task rules, determinism and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brokerage.cli.main import main
from brokerage.model.gdpconfig import Config
from brokerage.sim import jobgen, pilots, task_agent, timeouts
from brokerage.sim.engine import Files, Simulation
from brokerage.sim.jobs import FINAL, S
from brokerage.sim.propagate import end_jobs
from tests.builders import counts, dataset, queue, sim_grid_snapshot, task
from tests.core.sim.conftest import add_jobs, small_sim, status_of

H = 3600.0


def test_dispatch_fills_free_slots_by_priority_then_age() -> None:
    """Pilot dispatch (seed profile: by share, no getJob by age): a queue with 2 free slots takes the priority-900
    job, then the older priority-500 job."""
    sim = small_sim(job_counts=counts("A", running=2))
    sim.jobs.n = 0  # no background jobs: the queue's 2 slots are free
    a = add_jobs(sim, currentPriority=500.0)
    b = add_jobs(sim, currentPriority=500.0)
    c = add_jobs(sim, currentPriority=900.0)
    pilots.dispatch(sim, sim.now)
    assert status_of(sim, np.r_[a, b, c]) == ["running", "activated", "running"]


def test_a_closed_job_uses_an_attempt_but_is_not_a_failure() -> None:
    """propagateResultToJEDI: closed -> attemptNr + 1 only; failed -> attemptNr and failedAttempt + 1; at
    maxAttempt 3 the unit is failed for good and counted in nFilesFailed."""
    sim = small_sim()
    sim.jobs.n = 0
    fid = sim.files.add(1, 1, 3, 10**6)
    sim.tasks.loc[1, "nFilesUsed"] = 1
    r1 = add_jobs(sim, jediTaskID=1, fileID=fid[0])
    end_jobs(sim, r1, "closed")
    assert (sim.files.attemptNr[0], sim.files.failedAttempt[0], sim.files.status[0]) == (1, 0, Files.READY)
    assert sim.retry_pool[1] == [0]
    r2 = add_jobs(sim, jediTaskID=1, fileID=fid[0])
    end_jobs(sim, r2, "failed")
    assert (sim.files.attemptNr[0], sim.files.failedAttempt[0]) == (2, 1)
    r3 = add_jobs(sim, jediTaskID=1, fileID=fid[0])
    end_jobs(sim, r3, "closed")
    assert sim.files.status[0] == Files.FAILED and sim.tasks.loc[1, "nFilesFailed"] == 1


def _tasks(**cols: object) -> pd.DataFrame:
    base = {"status": "running", "oldStatus": "running", "modificationTime": 0.0, "stateChangeTime": 0.0,
            "frozenTime": np.nan, "throttledTime": np.nan, "numThrottled": 0, "nFiles": 4, "nFilesUsed": 4,
            "nFilesFinished": 0, "nFilesFailed": 0, "prodSourceLabel": "managed", "currentPriority": 500.0}  # fmt: skip
    base.update(cols)
    return pd.DataFrame([base], index=pd.Index([7], name="jediTaskID"))


CODE = Config().with_overrides({"RULES": "panda-1.0.4"})


def test_task_throttled_for_many_attempts_and_released_after_120_min() -> None:
    """§4.5 (switch throttle_as_jedi): average failedAttempt 5 over ready/running files, int(5 / 5) = 1 >
    numThrottled 0: throttled until now + 120 x 1^2 min, then released to running."""
    files = pd.DataFrame({"jediTaskID": [7] * 4, "status": ["ready"] * 4, "failedAttempt": [5] * 4, "attemptNr": 5})
    t, ch = task_agent.step(_tasks(), files, pd.Series(dtype=int), 1000.0, CODE)
    assert t.loc[7, "status"] == "throttled" and t.loc[7, "throttledTime"] == 1000.0 + 7200.0
    assert ch.iloc[0]["rule"] == "many attempts" and "5.0 > 1x5" in ch.iloc[0]["cause"]
    t2, _ = task_agent.step(t, files.assign(failedAttempt=0), pd.Series(dtype=int), 8300.0, CODE)
    assert t2.loc[7, "status"] == "running"


def test_analysis_tasks_are_never_throttled_for_attempts() -> None:
    """§4.5: analysis tasks keep numThrottled NULL (here -1) and are never throttled."""
    files = pd.DataFrame({"jediTaskID": [7] * 4, "status": ["ready"] * 4, "failedAttempt": [9] * 4, "attemptNr": 10})
    for config in (Config(), CODE):
        t, _ = task_agent.step(_tasks(numThrottled=-1), files, pd.Series(dtype=int), 0.0, config)
        assert t.loc[7, "status"] == "running"


def test_final_status_done_finished_failed() -> None:
    """§6.2: all inputs finished -> done; none -> failed; some -> finished (only when no job is left), but a
    production task goes to exhausted instead (seed 003: "For production tasks, all reattempts were done but some
    inputs were still unsuccessful, and the task is configured to go to this state instead of finished")."""
    empty = pd.DataFrame({"jediTaskID": [], "status": [], "failedAttempt": [], "attemptNr": []})
    cases = {(4, 0, "managed"): "done", (0, 4, "managed"): "failed", (3, 1, "managed"): "exhausted",
             (3, 1, "user"): "finished"}  # fmt: skip
    for (fin, bad, label), want in cases.items():
        t, _ = task_agent.step(_tasks(nFilesFinished=fin, nFilesFailed=bad, prodSourceLabel=label, numThrottled=-1),
                               empty, pd.Series(dtype=int), 0.0, Config())  # fmt: skip
        assert t.loc[7, "status"] == want
    t, _ = task_agent.step(_tasks(nFilesFinished=4), empty, pd.Series({7: 1}), 0.0, Config())
    assert t.loc[7, "status"] == "running"


def test_pending_task_is_retried_after_60_minutes() -> None:
    """waitForPending: a pending task goes back to its old status 60 min after it was held."""
    empty = pd.DataFrame({"jediTaskID": [], "status": [], "failedAttempt": [], "attemptNr": []})
    t = _tasks(status="pending", oldStatus="running", modificationTime=0.0, frozenTime=0.0)
    assert task_agent.step(t, empty, pd.Series(dtype=int), 3000.0, Config())[0].loc[7, "status"] == "pending"
    assert task_agent.step(t, empty, pd.Series(dtype=int), 3600.0, Config())[0].loc[7, "status"] == "running"


def test_urgent_production_tasks_leave_pending_sooner() -> None:
    """reactivatePendingTasks (switch pending_as_jedi): a production task at priority >= 950 is retried after 10
    min, >= 900 after 30 min; an analysis task at 950 still waits 60 min."""
    empty = pd.DataFrame({"jediTaskID": [], "status": [], "failedAttempt": [], "attemptNr": []})
    for prio, label, minutes, back in ((950, "managed", 10, True), (900, "managed", 10, False),
                                       (900, "managed", 30, True), (950, "user", 30, False)):  # fmt: skip
        t = _tasks(status="pending", oldStatus="running", modificationTime=0.0, frozenTime=0.0,
                   currentPriority=float(prio), prodSourceLabel=label)  # fmt: skip
        got = task_agent.step(t, empty, pd.Series(dtype=int), minutes * 60.0, CODE)[0].loc[7, "status"]
        assert (got == "running") is back, (prio, label, minutes)


def test_pending_timeout_follows_pending_timeout_per_label() -> None:
    """A task pending since frozenTime for more than PENDING_TIMEOUT_<label> hours (default 168) is exhausted, the
    sentence naming the key: 170 h exhausts a managed task by default, 30 h only with PENDING_TIMEOUT_managed=24."""
    empty = pd.DataFrame({"jediTaskID": [], "status": [], "failedAttempt": [], "attemptNr": []})
    t = _tasks(status="pending", oldStatus="running", modificationTime=169 * H, frozenTime=0.0)
    out, ch = task_agent.step(t, empty, pd.Series(dtype=int), 170 * H, Config())
    assert out.loc[7, "status"] == "exhausted" and "PENDING_TIMEOUT_managed 168 h" in ch["cause"].iloc[0]
    t = _tasks(status="pending", oldStatus="running", modificationTime=29.9 * H, frozenTime=0.0)
    assert task_agent.step(t, empty, pd.Series(dtype=int), 30 * H, Config())[0].loc[7, "status"] == "pending"
    cfg = Config().with_overrides({"PENDING_TIMEOUT_managed": 24.0})
    assert task_agent.step(t, empty, pd.Series(dtype=int), 30 * H, cfg)[0].loc[7, "status"] == "exhausted"


def _snap():  # type: ignore[no-untyped-def]
    qs = [queue("A", "S1"), queue("B", "S2"), queue("C", "S3")]
    tasks = [task(i, chunk_nevents=60, chunk_njobs=3, cputime=20.0, currentpriority=400 + i) for i in (1, 2, 3)]
    ds = [dataset(i, i, nfiles=20, nevents=400, neventsused=0) for i in (1, 2, 3)]
    jc = counts("A", running=4, activated=2) + counts("B", running=3) + counts("C", running=2, defined=2)
    return sim_grid_snapshot(qs, tasks, datasets=ds, job_counts=jc)


def test_same_seed_same_run_and_another_seed_differs() -> None:
    """Determinism: one snapshot, config and seed give the identical run; the seed drives every draw."""
    a = Simulation(_snap(), Config(), seed=3).run(3).result()
    b = Simulation(_snap(), Config(), seed=3).run(3).result()
    c = Simulation(_snap(), Config(), seed=4).run(3).result()
    assert json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)
    assert json.dumps(a, sort_keys=True, default=str) != json.dumps(c, sort_keys=True, default=str)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 1000),
    hours=st.sampled_from([1.0, 2.5, 4.0]),
    threshold=st.sampled_from([0.5, 2.0]),
    cmds=st.lists(st.tuples(st.floats(0, 0.9), st.sampled_from([1, 2, 3]), st.sampled_from(
        ["kill", "finish", "pause", "resume", "retry", "reassign"])), max_size=4),
)  # fmt: skip
def test_counters_add_up_and_no_job_is_lost(
    seed: int, hours: float, threshold: float, cmds: list[tuple[float, int, str]]
) -> None:
    """Invariants, with task commands at random times: every job has one status and the statuses add up to the
    jobs made; every task has a JEDI status; per task the picked units are finished + failed + ready + running;
    no closed job added a failure."""
    from brokerage.sim.commands import TaskCommand
    from brokerage.sim.task_states import TASK_STATUSES

    todo = [TaskCommand(f * hours * 3600, tid, c) for f, tid, c in cmds]
    sim = Simulation(_snap(), Config().with_overrides({"THROTTLE_THRESHOLD": threshold}), seed=seed)
    sim.run(hours, commands=todo)
    assert sum(sim.result()["statuses"].values()) == sim.jobs.n
    assert set(sim.tasks["status"]) <= set(TASK_STATUSES) and len(sim.commands) == len(todo)
    of_tasks = sim.jobs["jediTaskID"] >= 0  # the per-task counters the WatchDog reads match the job table
    assert sim.jobs_made.sum() == of_tasks.sum()
    assert sim.jobs_finished.sum() == (of_tasks & (sim.jobs["jobStatus"] == S["finished"])).sum()
    assert sim.jobs_failed.sum() == (of_tasks & (sim.jobs["jobStatus"] == S["failed"])).sum()
    j, f = sim.jobs, sim.files
    assert np.isin(j["jobStatus"], np.arange(len(S))).all()
    for tid, row in sim.tasks.iterrows():
        mine = f.task == tid
        assert mine.sum() == row["nFilesUsed"]
        assert (f.status[mine] == Files.FINISHED).sum() == row["nFilesFinished"]
        assert (f.status[mine] == Files.FAILED).sum() == row["nFilesFailed"]
    live_units = set(j["fileID"][(j["fileID"] >= 0) & ~np.isin(j["jobStatus"], FINAL)].tolist())
    assert live_units == set(np.flatnonzero(f.status == Files.RUNNING).tolist())
    ev = sim.log.frame()
    assert ((ev["to"] == "failed") & (ev["rule"] != "task")).sum() == (j["jobStatus"] == S["failed"]).sum()
    assert f.failedAttempt.sum() == (j["jobStatus"][j["fileID"] >= 0] == S["failed"]).sum()


def test_no_jobs_for_tasks_that_may_not_generate() -> None:
    """JobGenerator reads only ready, running and scouting tasks: a pending and an assigning task get no job."""
    qs = [queue("A", "S1")]
    tasks = [task(1, status="pending", chunk_nevents=10, chunk_njobs=1), task(2, status="assigning", chunk_nevents=10,
             chunk_njobs=1, nucleus=None)]  # fmt: skip
    snap = sim_grid_snapshot(qs, tasks, datasets=[dataset(i, i, nfiles=5, nevents=50) for i in (1, 2)], job_counts=[])
    sim = Simulation(snap, Config().with_overrides({"TASKBROKER_PERIOD": 86400}), seed=0)
    sim.now = 0.0
    jobgen.tick(sim, sim.now)
    assert sim.jobs.n == 0


def test_cli_refuses_bad_input_with_exit_2(tmp_path: Path) -> None:
    """brokerage simulate: negative hours, an unknown key, a missing file and --compare without --set exit 2."""
    path = tmp_path / "g.json"
    _snap().to_json(path)
    for args, words in (
        (["--hours", "-1"], "--hours: -1 is not allowed"),
        (["--hours", "1", "--set", "NO_SUCH=1"], "NO_SUCH: unknown gdpconfig key"),
        (["--hours", "1", "--compare"], "--compare needs at least one --set"),
    ):
        r = CliRunner().invoke(main, ["simulate", "--snapshot", str(path), *args])
        assert r.exit_code == 2 and words in r.output and "Traceback" not in r.output, r.output
    r = CliRunner().invoke(main, ["simulate", "--snapshot", str(tmp_path / "none.json"), "--hours", "1"])
    assert r.exit_code == 2


def test_cli_writes_a_run_and_compares(tmp_path: Path) -> None:
    """brokerage simulate --out writes the run; --compare prints stored vs what-if side by side."""
    path, out = tmp_path / "g.json", tmp_path / "run.json"
    _snap().to_json(path)
    r = CliRunner().invoke(main, ["simulate", "--snapshot", str(path), "--hours", "1", "--out", str(out), "--quiet"])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert doc["headline"]["hours"] == 1.0 and len(doc["times_h"]) == 7
    r = CliRunner().invoke(main, ["simulate", "--snapshot", str(path), "--hours", "1", "--compare", "--quiet",
                                  "--set", "THROTTLE_THRESHOLD=0.5"])  # fmt: skip
    assert r.exit_code == 0 and "stored" in r.output and "what-if" in r.output


def test_simulations_on_the_cluster_equal_serial_runs() -> None:
    """simulate_many: each config's run on a 2-worker LocalCluster equals the same run in this process."""
    from distributed import Client, LocalCluster

    from brokerage.sim.sweep import simulate_many

    snap = _snap()
    configs = [Config(), Config().with_overrides({"THROTTLE_THRESHOLD": 0.5})]
    serial = [Simulation(snap, c, seed=2).run(2).result() for c in configs]
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None) as lc,
        Client(lc, set_as_default=False) as client,
    ):
        parallel = simulate_many(snap, configs, 2, seed=2, client=client)
    dump = lambda r: json.dumps(r, sort_keys=True, default=str)  # noqa: E731
    assert [dump(r) for r in parallel] == [dump(r) for r in serial]


def test_a_cancelled_simulation_stops_with_cancelled(monkeypatch: pytest.MonkeyPatch) -> None:
    """simulate_many in-process: progress counts simulated minutes of all runs, and cancel() stops them."""
    from brokerage.runs import engine
    from brokerage.runs.chunks import Cancelled
    from brokerage.sim.sweep import simulate_many

    monkeypatch.setattr(engine, "_engine", engine._Engine(workers=0))
    seen: list[tuple[int, int]] = []
    simulate_many(_snap(), [Config(), Config()], 1, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (120, 120) and seen[0] == (1, 120)
    with pytest.raises(Cancelled):
        simulate_many(_snap(), [Config()], 1, cancel=lambda: True)


def test_a_snapshot_without_the_simulators_tables_is_refused(tmp_path: Path) -> None:
    """Bad input: a snapshot without work queues, share values and queue slots cannot be simulated; the engine
    names each missing table and `brokerage simulate` exits 2 with the same words."""
    from brokerage.sim.setup import SimInputError
    from tests.builders import grid

    bare = grid([queue("A", "S1")], [task(1)], gshares=[{"gshare": "MC Simulation"}])
    with pytest.raises(SimInputError) as err:
        Simulation(bare, Config())
    text = str(err.value)
    assert "work_queues: no rows" in text and "queue_slots: no rows" in text
    assert "gshares.value: missing for 1 of 1 shares (MC Simulation)" in text
    path = tmp_path / "bare.json"
    bare.to_json(path)
    r = CliRunner().invoke(main, ["simulate", "--snapshot", str(path), "--hours", "1"])
    assert r.exit_code == 2 and "work_queues: no rows" in r.output and "Traceback" not in r.output


def test_a_resource_work_queue_is_throttled_on_its_own() -> None:
    """Aligned work queues: a reprocessing task taken by the Resource work queue 'Reprocessing default' is throttled
    under that queue's name; a simul task of the same share stays in its global share's queue."""
    wqs = [
        {"queue_id": 1, "queue_name": "Reprocessing default", "queue_type": "managed", "queue_order": 1,
         "criteria": "processingType = 'reprocessing'", "queue_function": "Resource"},
        {"queue_id": 2, "queue_name": "managed", "queue_type": "managed", "queue_order": 100},
    ]  # fmt: skip
    tasks = [task(1, processingtype="reprocessing", chunk_nevents=10, chunk_njobs=1),
             task(2, processingtype="simul", chunk_nevents=10, chunk_njobs=1)]  # fmt: skip
    snap = sim_grid_snapshot([queue("A", "S1")], tasks, datasets=[dataset(i, i, nfiles=5, nevents=50) for i in (1, 2)],
                             job_counts=counts("A", running=5), work_queues=wqs)  # fmt: skip
    sim = Simulation(snap, Config(), seed=0)
    assert sim.tasks["workQueue"].to_dict() == {1: "Reprocessing default", 2: "MC Simulation"}
    jobgen.tick(sim, sim.now)
    assert set(sim.verdicts) == {("Reprocessing default", "SCORE"), ("MC Simulation", "SCORE")}
    made = pd.Series(sim.jobs["workQueue"]).map(dict(enumerate(sim.g.work_queues)))
    by_task = {t: w for t, w in zip(sim.jobs["jediTaskID"], made, strict=True) if t > 0}
    assert by_task == {1: "Reprocessing default", 2: "MC Simulation"}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(status=st.sampled_from(["throttled", "pending", "exhausted", "scouted", "assigning", "paused", "finished",
                               "broken", "aborted"]), seed=st.integers(0, 100))  # fmt: skip
def test_no_job_is_generated_for_a_task_that_may_not_generate(status: str, seed: int) -> None:
    """JobGenerator reads ready, running and scouting tasks only: over 30 generation, payload and dispatch cycles a
    task in any other status gets no job, while a ready task beside it does."""
    tasks = [task(1, status=status, chunk_nevents=10, chunk_njobs=2), task(2, chunk_nevents=10, chunk_njobs=2)]
    snap = sim_grid_snapshot([queue("A", "S1")], tasks, datasets=[dataset(i, i, nfiles=9, nevents=90) for i in (1, 2)],
                             job_counts=counts("A", running=5))  # fmt: skip
    sim = Simulation(snap, Config(), seed=seed)
    for minute in range(30):
        sim.now = 60.0 * minute
        jobgen.tick(sim, sim.now)
        pilots.end_payloads(sim, sim.now)
        pilots.dispatch(sim, sim.now)
    made = set(sim.jobs["jediTaskID"].tolist())
    assert 1 not in made and 2 in made


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 1000), queued=st.integers(20, 200), keyed=st.booleans())
def test_fast_rebrokerage_fires_only_for_a_share_with_its_threshold_key(seed: int, queued: int, keyed: bool) -> None:
    """Rule F closes jobs only of a share that has FAST_REBRO_THRESHOLD_NQUEUE_<share>: with overshooting queues of
    two shares and the key set for MC Simulation at most, no Reprocessing job is ever closed by F, and MC Simulation
    jobs only when keyed; the rest is a dry run."""
    cfg = Config().with_overrides({"FAST_REBRO_THRESHOLD_NQUEUE_MC Simulation": 5} if keyed else {})
    sim = small_sim(config=cfg, job_counts=counts("A", running=2) + counts("B", running=2))
    sim.jobs.n = 0
    rng = np.random.default_rng(seed)
    for share in ("MC Simulation", "Reprocessing"):
        add_jobs(sim, n=queued, queue=str(rng.choice(["A", "B"])), gshare=sim.si[share],
                 creationTime=-rng.uniform(0, 3600, queued), modificationTime=0.0)  # fmt: skip
    sim.now = 600.0
    timeouts.tick(sim, sim.now)
    ev = sim.log.frame()
    closed = ev[ev["rule"] == "F"]
    shares = {sim.g.shares[s] for s in sim.jobs["gshare"][np.isin(sim.jobs["PandaID"], closed["id"])]}
    assert "Reprocessing" not in shares
    assert (len(closed) > 0) == keyed
    assert any(d[2] == "Reprocessing" for d in sim.dry_runs)


def test_a_jobs_history_gives_every_step_with_its_cause(tmp_path: Path) -> None:
    """job_history: a generated job's steps in time order, from generation (its brokerage weight share) through
    dispatch to its end, each with the sentence of its rule; the CLI prints them for --job-history and says when a
    PandaID is not in the run."""
    from brokerage.sim.events import job_history

    sim = Simulation(_snap(), Config(), seed=3).run(3)
    j = sim.jobs
    done = int(j["PandaID"][(j["jediTaskID"] > 0) & (j["jobStatus"] == S["finished"])][0])
    steps = job_history(sim.log.frame(), done)
    assert [s["to"] for s in steps] == ["activated", "running", "holding", "finished"]
    assert steps[0]["cause"].startswith("JobGenerator: generated by JEDI") and "weight share" in steps[0]["cause"]
    assert [s["time_h"] for s in steps] == sorted(s["time_h"] for s in steps)
    path = tmp_path / "g.json"
    _snap().to_json(path)
    r = CliRunner().invoke(main, ["simulate", "--snapshot", str(path), "--hours", "3", "--seed", "3", "--quiet",
                                  "--job-history", str(done), "--job-history", "99999999"])  # fmt: skip
    assert r.exit_code == 2, r.output  # an unknown id is an error, after the known ones are shown
    assert f"job {done} at 0 h: - -> activated: JobGenerator" in r.output and "job 99999999: not a job" in r.output
