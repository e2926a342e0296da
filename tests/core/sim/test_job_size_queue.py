"""Issue 30 item 6: a job is the size its queue allows (seed 003: JEDI "generates jobs according to the site
parameters, such as the number of cores per slot, memory size, and walltime limit"; nGBPerJob; tgtMaxOutputForNG)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from brokerage.model.gdpconfig import Config
from brokerage.sim import jobgen, jobsize, postprocessor, retrymodule
from tests.builders import counts, dataset, queue, task
from tests.core.sim.conftest import small_sim

CODE = Config().with_overrides({"RULES": "panda-1.0.4"})


def _sim(q: dict[str, Any] | None = None, config: Config | None = None, **kw: Any):  # type: ignore[no-untyped-def]
    """One queue A; task 1 running, 4 jobs a cycle, 10,000 events in 100 files of 100, 0.5 MB of input per event
    (the brokers' chunk: one file, 50 MB), nGBPerJob 3: 0.5 e + 2,560 <= 3,072 MB, e <= 1,024: 10 whole files, 1,000
    events per job; 36 HS06 s per event at 100 % efficiency: 3,600 s at corepower 10, + baseWalltime 600 s."""
    fields = {"status": "running", "chunk_nevents": 100, "chunk_njobs": 4, "chunk_input_mb": 50.0, "ngbperjob": 3,
              "cputime": 36.0, "cpuefficiency": 100}  # fmt: skip
    sim = small_sim(
        config, queues=[q or queue("A", "S1")], tasks=[task(1, **{**fields, **kw})],
        datasets=[dataset(1, 1, nfiles=100, nevents=10_000, neventsused=0)], job_counts=counts("A", running=20),
    )  # fmt: skip
    sim.jobs.n = 0
    sim.live = sim.live[:0]
    sim.true_cpu[1] = 1.0
    return sim


def _made(sim) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    """After one JobGenerator cycle: the shares of the units its jobs took and their run seconds."""
    jobgen.tick(sim, 0.0)
    rows = np.arange(sim.jobs.n)
    return sim.files.share[sim.jobs["fileID"][rows]], sim.jobs["runSeconds"][rows]


def test_a_job_is_cut_to_the_queues_walltime_limit_in_whole_files() -> None:
    """Seed 003: jobs are generated "according to the site parameters, such as ... walltime limit": at maxtime
    2,400 s, 600 s + 3.6 s x e <= 2,400 s holds e <= 500 events, 5 whole files: each of 4 jobs takes half its unit,
    runs 600 + 1,800 s x its noise, and the other half of the 4 units becomes 2 new units (10 + 2 = 12)."""
    share, run = _made(_sim(queue("A", "S1", maxtime=2400)))
    assert share.tolist() == [0.5] * 4
    assert np.all((run - 600 > 1800 * 0.5) & (run - 600 < 1800 * 2.0))
    assert _sim().tasks.at[1, "nFiles"] == 10
    sim = _sim(queue("A", "S1", maxtime=2400))
    _made(sim)
    assert sim.tasks.at[1, "nFiles"] == 12 and sim.tasks.at[1, "nFilesToBeUsed"] == 12


def test_short_remainders_add_up_to_whole_units_and_one_short_one() -> None:
    """The input a shortened job leaves is processed by later jobs, none lost or doubled: at maxtime 2,040 s
    (e <= 400) 4 jobs leave 4 x 0.6 = 2.4 units: 2 whole units and one of 0.4, which the next new unit holds."""
    sim = _sim(queue("A", "S1", maxtime=2040))
    share, _run = _made(sim)
    assert share.tolist() == [0.4] * 4
    assert sim.tasks.at[1, "nFiles"] == 13 and sim.unit_tail[1] == pytest.approx(0.4)
    new = sim.files.add(1, 2, 3, 10)
    jobsize.take_tail(sim, 1, new)
    assert sim.files.share[new].tolist() == pytest.approx([0.4, 1.0]) and 1 not in sim.unit_tail
    # the 13 units: the 4 made (400 events each), 8 whole ones (1,000) and the short one (400): 10,000 events
    assert 4 * 400 + (13 - 4 - 1) * 1000 + 400 == 10_000


def test_the_tasks_max_walltime_rule_bounds_a_job_below_the_queues() -> None:
    """Seed 003 tgtMaxOutputForNG "Works with maxWaltime (hrs) so that the jobs do not get too long": split rule
    maxWalltime 1 h at a 48 h queue: 600 + 3.6 e <= 3,600 s, e <= 833, 8 whole files: 800 events, share 0.8."""
    share, _run = _made(_sim(maxwalltime=1))
    assert share.tolist() == pytest.approx([0.8] * 4)


def test_n_max_files_per_job_caps_the_files_n_gb_per_job_allows() -> None:
    """Split rule nMaxFilesPerJob (JEDI_TASKS.SPLITRULE MF; JobSplitter's maxNumFiles, 200 when unset): nGBPerJob 3
    allows 10 files of 100 events, nMaxFilesPerJob 4 holds a job to 4 files, 400 events, so the 10,000 events are
    25 units; at a queue whose maxtime allows 5 files (2,400 s) a job still takes its 4."""
    sim = _sim(queue("A", "S1", maxtime=2400), nmaxfilesperjob=4)
    assert sim.tasks.at[1, "nEventsPerUnit"] == 400 and sim.tasks.at[1, "nFiles"] == 25
    share, _run = _made(sim)
    assert share.tolist() == [1.0] * 4


def test_n_max_files_per_job_caps_the_cut_at_a_queue() -> None:
    """A job cut at its queue takes at most nMaxFilesPerJob whole files: a unit of 10,000 events (100 files of
    100, set directly as the task's events per job) with nMaxFilesPerJob 3, at a queue with no walltime or disk
    limit, takes 3 files: 300 of its 10,000 events, share 0.03 (without the rule, JEDI's 200 files: all of it)."""
    sim = _sim(ngbperjob=30, nmaxfilesperjob=3, cputime=0.1)
    sim.sizing[1] = sim.sizing[1].changed(p=10_000.0)  # the unit as one 10,000-event job, cut at the queue
    share = jobsize.shares_at(sim, 1, np.ones(1), np.zeros(1, np.int64), np.ones(1))
    assert share == pytest.approx([0.03])


def test_a_job_is_cut_to_the_queues_scratch_disk() -> None:
    """Seed 003's disk estimate (inputsize + max(output, 2.5GB) + workdirsize) within the queue's maxwdir: 2 MB of
    input per event, a 500 MB work directory, nGBPerJob 5 (2e + 3,060 <= 5,120: 1,000 events), maxwdir 4,060 MB:
    2e + 2,560 + 500 <= 4,060, e <= 500: 500 events; switch jobsize_as_jedi: nGBPerJob holds 2e + 1,536 + 800 <=
    6,656 (2,100 events) and maxwdir input + output only, 2e <= 4,060: 20 files, 2,000 events."""
    kw = {"chunk_input_mb": 200.0, "workdiskcount": 500, "ngbperjob": 5, "cputime": 0.1}
    sim = _sim(queue("A", "S1", maxwdir=4060), **kw)
    share, _run = _made(sim)
    assert (share * sim.tasks.at[1, "nEventsPerUnit"]).tolist() == pytest.approx([500] * 4)
    code = _sim(queue("A", "S1", maxwdir=4060), CODE, **kw)  # its brokers want replicas: the split alone
    assert code.tasks.at[1, "nEventsPerUnit"] == 2100
    share = jobsize.shares_at(code, 1, np.ones(1), np.zeros(1, np.int64), np.ones(1))
    assert share * 2100 == pytest.approx([2000])


@pytest.mark.parametrize(
    ("allow", "direct_lan", "merge", "events"),
    [("use", True, False, 1000), ("", True, False, 500), ("use", False, False, 500), ("use", True, True, 500)],
    ids=["direct", "task-copies", "queue-copies", "merge-copies"],
)
def test_input_read_directly_does_not_count_against_maxwdir(
    allow: str, direct_lan: bool, merge: bool, events: int
) -> None:  # fmt: skip
    """Seed 000: "inputDiskCount is zero if the queues are configured to read input files directly from the local
    storage": the scratch-disk case above (2 MB of input per event, 500 MB work directory, maxwdir 4,060 MB, 500
    events) with allowInputLAN at a direct_access_lan queue leaves 2,560 + 500 <= 4,060 with no input: the job
    keeps its 1,000 events; a task that copies its input, a queue without direct access, or a merge job: 500."""
    kw = {"chunk_input_mb": 200.0, "workdiskcount": 500, "ngbperjob": 5, "cputime": 0.1, "allowinputlan": allow,
          "is_merge": merge}  # fmt: skip
    sim = _sim(queue("A", "S1", maxwdir=4060, direct_access_lan=direct_lan), **kw)
    share = jobsize.shares_at(sim, 1, np.ones(1), np.zeros(1, np.int64), np.ones(1))
    assert share * sim.tasks.at[1, "nEventsPerUnit"] == pytest.approx([events])


def test_without_n_gb_per_job_jedi_counts_the_work_directory_against_maxwdir() -> None:
    """Switch jobsize_as_jedi, a task without nGBPerJob: maxwdir is JobSplitter's maxSize, input + max(output,
    1.5 GB) + workDiskCount + 300 MB: a unit of 200 files (no split rule: JobSplitter's maxNumFiles, 20,000 events,
    2 MB each), 2e + 1,536 + 800 <= 4,060, e <= 862: 8 files, 800 events; the seed's estimate, 2e + 2,560 + 500 <=
    4,060: 500 events."""
    kw = {"chunk_nevents": 4000, "chunk_input_mb": 8000.0, "ngbperjob": 0, "workdiskcount": 500, "cputime": 0.1}
    for config, want in ((None, 500), (CODE, 800)):
        sim = _sim(queue("A", "S1", maxwdir=4060), config, **kw)
        assert sim.tasks.at[1, "nEventsPerUnit"] == 20_000
        share = jobsize.shares_at(sim, 1, np.ones(1), np.zeros(1, np.int64), np.ones(1))
        assert share * 20_000 == pytest.approx([want])


def test_a_jobs_output_stays_within_10_gb() -> None:
    """JobSplitter's maxOutSize (10 GB for the largest output; seed 003: "avoid hitting the hard limit in athena"):
    at 20 MB of output per event (20,480 kBPerEvent), nGBPerJob 21 (20.5 e <= 21,504 MB: 1,000 events), 10,240 MB
    hold 512 events, 5 whole files: share 0.5."""
    share, _run = _made(_sim(outdiskcount=20480.0, outdiskunit="kBPerEvent", ngbperjob=21, cputime=0.1))
    assert share.tolist() == [0.5] * 4


def test_a_rule_fixed_job_is_not_shortened_and_fails_at_maxtime() -> None:
    """nEventsPerJob (seed 003's event-level splitting: "split by N events") fixes the job: 1,000 events need
    4,200 s at a 2,400 s queue, so the job keeps its size and is killed at maxtime (pilot 1213, REACHEDMAXTIME)."""
    sim = _sim(queue("A", "S1", maxtime=2400), neventsperjob=1000)
    share, run = _made(sim)
    assert share.tolist() == [1.0] * 4 and run.tolist() == [2400.0] * 4
    assert sim.jobs["willFail"][:4].all() and sim.tasks.at[1, "nFiles"] == 10


def test_tgt_max_output_resets_n_gb_per_job_after_the_scouts() -> None:
    """Seed 003: "tgtMaxOutputForNG: The target size for the largest output format. NG is reset after the scouts in
    order to get towards this value": target 4 GB at 1 MB of output per event is 4,096 events, a disk estimate of
    2 x 4,096 + 4,096 + 500 = 12,788 MB, NG 12 GB, which holds 3e + 500 <= 12,288, 39 files of 100: 3,900 events;
    the 100 units of 100 events become 2 of 3,900 and one of 0.564. JobSplitter's constants (jobsize_as_jedi):
    12,788 + 300 - 1,536 = 11,552 MB, NG 11, 3e + 800 <= 12,800: 4,000 events."""
    kw = {"ngbperjob": 2, "tgtmaxoutputforng": 4.0, "chunk_input_mb": 200.0, "workdiskcount": 500,
          "outdiskcount": 1024.0, "outdiskunit": "kBPerEvent"}  # fmt: skip
    sim = _sim(**kw)
    assert sim.tasks.at[1, "nEventsPerUnit"] == 100 and sim.tasks.at[1, "nFiles"] == 100  # 2 GB hold one file
    assert jobsize.reset_ng(sim, 1) == 12.0
    assert sim.tasks.at[1, "nEventsPerUnit"] == 3900 and sim.tasks.at[1, "nFiles"] == 3
    assert sim.unit_tail[1] == pytest.approx(10_000 / 3900 - 2)
    code = _sim(config=CODE, **kw)
    assert jobsize.reset_ng(code, 1) == 11.0 and code.tasks.at[1, "nEventsPerUnit"] == 4000
    assert jobsize.reset_ng(_sim(), 1) is None  # no target: nothing to reset


def test_scouts_cut_at_their_queue_measure_cpu_per_event_of_their_own_events() -> None:
    """Seed 003: "cpuTime = max(0,endTime-startTime-baseTime)*corePower*coreCount*cpuEfficiency/NEvents*1.5" with
    the job's own NEvents: 4 jobs cut to 500 events that ran 600 + 1,800 s at corepower 10 measure 1,800 x 10 / 500
    = 36 HS06 s per event, so cpuTime 36 x 1.5 = 54 (not 27, as over the task's 1,000 events per job)."""
    sim = _sim(queue("A", "S1", maxtime=2400))
    _made(sim)
    rows = np.arange(4)
    sim.jobs["runSeconds"][rows] = 2400.0
    sim.tasks.at[1, "status"] = "scouting"  # the jobs as its scouts
    postprocessor.assess_scouts(sim, 1, rows)
    assert sim.tasks.at[1, "cpuTime"] == pytest.approx(54.0)


def test_a_cut_job_killed_at_maxtime_raises_cputime_for_its_own_events() -> None:
    """initialize_cpu_time_task (retry module increase_cputime) over the killed job's own events: a job cut to 500
    events at a 2,400 s queue gives (2,400 - 600) x 10 x 1 x 1.1 / 1.0 / 500 x 1.5 = 59.4, an integer: 59 HS06 s per
    event, above the task's 36 (over 1,000 events it would be 29.7, below 36, and 36 kept)."""
    sim = _sim(queue("A", "S1", maxtime=2400))
    _made(sim)
    retrymodule.increase_cputime(sim, 0)
    assert sim.tasks.at[1, "cpuTime"] == 59.0


def test_scouts_of_a_task_without_a_size_rule_take_one_file() -> None:
    """JobSplitter (jedi-lifecycle.md §5.1): "scouts use nFilesPerJob = 1 when no nFiles/nEvents per job rule": a
    scouting task of nGBPerJob 3 (1,000 events, 10 files) makes scouts of one file, 100 events, share 0.1; with
    nEventsPerJob 1,000 its scouts keep the 1,000."""
    for kw, want in (({}, 0.1), ({"neventsperjob": 1000}, 1.0)):
        sim = _sim(status="ready", **kw)
        share = jobsize.shares_at(sim, 1, np.ones(2), np.zeros(2, np.int64), np.ones(2), scout=True)
        assert share.tolist() == pytest.approx([want] * 2)


def test_reset_ng_recounts_one_file_scout_units_for_their_file() -> None:
    """Units not made yet are recounted for the events they hold: a ready task of 3,000 events (30 files of 100, 0.5
    MB of input and 1 MB of output per event) in units of 1,000 (nGBPerJob 3) has 10 one-file scout units and 2
    units of 1,000 (12 units). tgtMaxOutputForNG 4 GB resets nGBPerJob to 0.5 x 4,096 + 4,096 = 6,144 MB: 6 GB,
    which holds 6,144 / 1.5 = 4,096 events, 40 files: 4,000. Before any unit is made, its 3,000 events become one
    short unit of 0.75, not 12 x 1,000 / 4,000 = 3 units."""
    sim = small_sim(
        queues=[queue("A", "S1")],
        tasks=[task(1, status="ready", chunk_nevents=100, chunk_njobs=4, chunk_input_mb=50.0, ngbperjob=3,
                    cputime=36.0, tgtmaxoutputforng=4.0, outdiskcount=1024.0, outdiskunit="kBPerEvent")],
        datasets=[dataset(1, 1, nfiles=30, nevents=3_000, neventsused=0)], job_counts=counts("A", running=20),
    )  # fmt: skip
    assert (sim.tasks.at[1, "nFiles"], sim.scout_files[1]) == (12, 10)
    assert jobsize.reset_ng(sim, 1) == 6.0
    assert sim.tasks.at[1, "nEventsPerUnit"] == 4000 and 1 not in sim.scout_files
    assert (sim.tasks.at[1, "nFiles"], sim.unit_tail[1]) == (1, pytest.approx(0.75))
