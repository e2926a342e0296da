"""Holding (3 h at priority >= 800, TIMEOUT_holding below) and transferring (transtimehi / transtimelo per queue)."""

from __future__ import annotations

import numpy as np

from brokerage.model.gdpconfig import Config
from brokerage.sim import finisher, timeouts
from brokerage.sim.jobs import S
from tests.builders import queue
from tests.core.sim.conftest import add_jobs, small_sim, status_of

H, D = 3600.0, 86400.0
CODE = Config().with_overrides({"RULES": "panda-1.0.4"})


def test_high_priority_holding_jobs_fail_after_3_hours() -> None:
    """Seed 000: "3 hours for holding jobs with job.currentPriority>=800, while days for holding jobs with
    job.currentPriority<800": after 3.1 h in holding a priority-800 job fails (H5, code 103), priority 799 and an
    analysis job at 500 wait for TIMEOUT_holding (48 h). Switch holding_as_jedi: above 800 strictly, and analysis
    holding jobs after 3 h too."""
    now = 10 * H
    for config, want in ((Config(), ["failed", "holding", "holding", "failed"]),
                         (CODE, ["holding", "holding", "failed", "failed"])):  # fmt: skip
        sim = small_sim(config)
        rows = np.r_[
            add_jobs(sim, status="holding", currentPriority=800.0, modificationTime=now - 3.1 * H),
            add_jobs(sim, status="holding", currentPriority=799.0, modificationTime=now - 3.1 * H),
            add_jobs(sim, status="holding", prodSourceLabel=1, modificationTime=now - 3.1 * H),
            add_jobs(sim, status="holding", currentPriority=900.0, modificationTime=now - 3.1 * H),
        ]
        sim.now = now
        timeouts.tick(sim, now)
        assert status_of(sim, rows) == want, config.overrides
        failed = rows[np.array(want) == "failed"]
        assert (sim.jobs["errorCode"][failed] == 103).all()


def _transfer_sim(config: Config | None = None):  # type: ignore[no-untyped-def]
    """Queue A sets transtimehi 1 day and transtimelo 3 days; B leaves both unset."""
    return small_sim(config, queues=[queue("A", "S1", transtimehi=1.0, transtimelo=3.0), queue("B", "S2")])


def test_transferring_jobs_time_out_after_the_queues_transtimehi_and_transtimelo() -> None:
    """Seed 000: "transtimehi days for transferring jobs with job.currentPriority>=800, while transtimelo days for
    transferring jobs with job.currentPriority<800": at A a priority-900 job transferring 1.2 d fails (taskBuffer
    101), a priority-500 one of 1.2 d is finished (its outputs count as arrived) and one of 3.5 d fails; at B
    (unset) PanDA's 2 d / 6 d apply: 1.5 d finishes, 2.5 d fails."""
    now = 10 * D
    sim = _transfer_sim()
    rows = np.r_[
        add_jobs(sim, status="transferring", currentPriority=900.0, modificationTime=now - 1.2 * D),
        add_jobs(sim, status="transferring", currentPriority=500.0, modificationTime=now - 1.2 * D),
        add_jobs(sim, status="transferring", currentPriority=500.0, modificationTime=now - 3.5 * D),
        add_jobs(sim, status="transferring", queue="B", currentPriority=900.0, modificationTime=now - 1.5 * D),
        add_jobs(sim, status="transferring", queue="B", currentPriority=900.0, modificationTime=now - 2.5 * D),
    ]
    sim.now = now
    finisher.tick(sim, now)
    assert status_of(sim, rows) == ["failed", "finished", "failed", "finished", "failed"]
    assert (sim.jobs["errorCode"][rows[sim.jobs["jobStatus"][rows] == S["failed"]]] == 101).all()
    ev = sim.log.frame()
    assert sorted(ev.loc[ev["rule"] == "transfer_timeout", "threshold"].tolist()) == [1.0, 2.0, 3.0]


def test_the_code_ignores_the_queues_transfer_times() -> None:
    """Switch transfer_timeout_as_jedi: 2 days at priority >= 800 (non-analysis), else 6, whatever A says: A's
    priority-900 job at 1.2 d finishes, an analysis one at 900 waits for 6 days."""
    now = 10 * D
    sim = _transfer_sim(CODE)
    rows = np.r_[
        add_jobs(sim, status="transferring", currentPriority=900.0, modificationTime=now - 1.2 * D),
        add_jobs(sim, status="transferring", currentPriority=900.0, prodSourceLabel=1, modificationTime=now - 5 * D),
        add_jobs(sim, status="transferring", currentPriority=900.0, modificationTime=now - 2.5 * D),
    ]
    sim.now = now
    finisher.tick(sim, now)
    assert status_of(sim, rows) == ["finished", "finished", "failed"]


def test_activated_evgen_simul_jobs_are_reassigned_after_6_hours_at_t2_and_t1_outside_us_nd() -> None:
    """Seed 003: "6 hours for activated even/simul jobs at T2 when nRunning=0 or nActivated/nRunning>0" and "6 hours
    for activated evgen/simul jobs at T1 except US and ND": 6.5 h old jobs of a simul task are closed (code 51) at
    the T2 and the DE T1, kept at the US T1; a reco task's job and a 5.5 h one stay. Switch evgensimul_6h_as_jedi:
    PanDA's code has no such rule."""
    from tests.builders import dataset, site, task

    qs = [queue("T2Q", "T2", cloud="FR"), queue("DEQ", "T1DE", cloud="DE"), queue("USQ", "T1US", cloud="US")]
    sites = [site("T2", "satellite", tier_level=2), site("T1DE", tier_level=1), site("T1US", tier_level=1)]
    tasks = [task(1, processingtype="simul", chunk_nevents=10, chunk_njobs=1),
             task(2, processingtype="reco", chunk_nevents=10, chunk_njobs=1)]  # fmt: skip
    ds = [dataset(1, 1, nfiles=1, nevents=10), dataset(2, 2, nfiles=1, nevents=10)]
    now = 20 * H
    for config, want in ((Config(), ["closed", "closed", "activated", "activated", "activated"]),
                         (CODE, ["activated"] * 5)):  # fmt: skip
        sim = small_sim(config, queues=qs, tasks=tasks, datasets=ds, sites=sites, job_counts=[])
        rows = np.r_[
            add_jobs(sim, queue="T2Q", jediTaskID=1, modificationTime=now - 6.5 * H),
            add_jobs(sim, queue="DEQ", jediTaskID=1, modificationTime=now - 6.5 * H),
            add_jobs(sim, queue="USQ", jediTaskID=1, modificationTime=now - 6.5 * H),
            add_jobs(sim, queue="T2Q", jediTaskID=2, modificationTime=now - 6.5 * H),
            add_jobs(sim, queue="T2Q", jediTaskID=1, modificationTime=now - 5.5 * H),
        ]
        sim.now = now
        timeouts.tick(sim, now)
        assert status_of(sim, rows) == want, config.overrides
        assert (sim.jobs["errorCode"][rows[:2]] == 100).all() or config is CODE
