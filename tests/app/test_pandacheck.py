"""The task page's PanDA 1.0.4 panel: the verdict's words, the job behind it, its cache, and PanDA absent or present."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from app.components.pandacheck import verdict_view
from app.viewmodels import pandacheck as vm
from brokerage.crosscheck.compare import compare
from brokerage.crosscheck.panda import PandaEnv
from brokerage.crosscheck.single import TaskCheck
from brokerage.crosscheck.verdicts import Verdicts
from tests.app.test_jobs import _as_trigger


def _text(tree: Any) -> str:
    return json.dumps(tree.to_plotly_json() if hasattr(tree, "to_plotly_json") else tree,
                      default=lambda o: o.to_plotly_json() if hasattr(o, "to_plotly_json") else str(o))  # fmt: skip


def _check(broker: str, ours: Verdicts, jedi: Verdicts) -> dict[str, Any]:
    """A one-broker TaskCheck of task 7 as the job returns it (plain JSON)."""
    return TaskCheck(7, "1.0.4", "panda-1.0.4", [compare(7, broker, ours, jedi)]).to_dict()


AGREE = _check(
    "prod",
    Verdicts(True, {"A_Q": 2.0, "B_Q": 1.0}, {"C_Q": ("-status", "offline")}),
    Verdicts(True, {"A_Q": 2.0, "B_Q": 1.0}, {"C_Q": ("-status", "due to status=offline")}),
)


def test_identical_candidates_weights_and_codes_read_agrees() -> None:
    """The same candidate set, weights and removal codes on both sides is "PanDA 1.0.4 agrees", with no table."""
    v = vm.verdict(AGREE)
    assert v.agrees and v.headline == "PanDA 1.0.4 agrees" and v.rows == []
    assert v.lines == [
        "Job broker (AtlasProdJobBroker): the same 2 candidates with the same weights; "
        "the same removal code for each of 1 queue removed."
    ]
    assert "panda-1.0.4 rule profile" in v.profile and "stored gdpconfig" in v.profile
    assert vm.verdict(vm.summarised(AGREE)) == v and vm.summarised(AGREE)["brokers"][0]["queues"] == []
    seed = vm.profile_note({**AGREE, "stored_profile": "seed"})
    assert seed.endswith("; the job brokerage above uses the stored profile, seed.")
    assert vm.profile_note({**AGREE, "stored_profile": "panda-1.0.4"}).endswith("(docs/crosscheck.md).")


def test_differing_queues_name_each_side_and_the_field() -> None:
    """A queue PanDA removes by -cpucore that we keep, and a weight 2 vs 2.5, are two rows: queue, ours, PanDA's, field;
    a weight difference shows enough digits to see it."""
    result = _check(
        "prod",
        Verdicts(True, {"A_Q": 2.0, "B_Q": 1.0}),
        Verdicts(True, {"A_Q": 2.5}, {"B_Q": ("-cpucore", "due to core mismatch site:8 <> task:1")}),
    )
    v = vm.verdict(result)
    assert not v.agrees and v.headline == "PanDA 1.0.4 differs on 2 queues"
    assert v.rows == [
        {"broker": "prod", "name": "A_Q", "ours": "candidate, weight 2", "panda": "candidate, weight 2.5", "field": "weight",
         "why": ""},
        {"broker": "prod", "name": "B_Q", "ours": "candidate, weight 1", "panda": "-cpucore", "field": "verdict", "why": ""},
    ]  # fmt: skip
    assert v.lines == ["Job broker (AtlasProdJobBroker): 0 of 2 queues agree; ours 2 candidates, PanDA's 1."]
    assert vm.verdict(vm.summarised(result)) == v


def test_nuclei_a_not_listed_name_and_an_unmapped_token_in_words() -> None:
    """The task broker's rows are nuclei; a name one side never mentions is "not listed"; a JEDI token with no code
    of ours says so."""
    result = _check("nucleus", Verdicts(True, {"N1": 1.0}), Verdicts(False, {}, {"N1": ("?-newtoken", "skip")}))
    v = vm.verdict(result)
    assert v.headline == "PanDA 1.0.4 differs on 1 nucleus"
    assert v.rows[0]["panda"] == "-newtoken (a JEDI token with no code of ours)"
    assert vm.shown("absent", None) == "not listed" and vm.shown("+use", 0.123456789) == "candidate, weight 0.1235"
    view = _text(verdict_view(result))
    assert '"nucleus"' in view and "PanDA's" in view


def test_a_panda_crash_is_a_failure_not_agreement() -> None:
    """PanDA's broker raising is never counted as agreement: the headline says it failed, with its last line (a known
    PanDA 1.0.4 crash named as such, its rows marked "PanDA crashed" with the crash as their reason)."""
    jedi = Verdicts(False, error="Traceback ...\nZeroDivisionError: division by zero")
    result = _check("prod", Verdicts(False), jedi)
    v = vm.verdict(result)
    assert not v.agrees and v.headline == "PanDA 1.0.4 failed on this task"
    assert v.failure == "ZeroDivisionError: division by zero"
    jedi.error = "  nRunning = max(int(numStandby / tmpSiteSpec.coreCount), nRunning)\nZeroDivisionError"
    crashed = _check("prod", Verdicts(True, {"A_Q": 1.0}), jedi)
    assert vm.failure_of(crashed).startswith("a known PanDA 1.0.4 crash: AtlasProdJobBroker.py")
    (row,) = vm.verdict(crashed).rows
    assert row["field"] == "verdict (PanDA crashed)" and row["why"].startswith(
        "known PanDA crash: AtlasProdJobBroker.py:1801"
    )
    assert row["panda"] == "not listed" and "(PanDA crashed)" in _text(verdict_view(crashed))


def test_panda_absent_is_said_inline_and_starts_no_job(app_client: Any, monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:  # fmt: skip
    """Without PanDA's source the panel says "PanDA source not available: run scripts/panda.sh" with where it looked,
    starts no job and polls nothing."""
    from app import ids
    from app.callbacks.pandacheck import drive_panda_check
    from app.main import services

    monkeypatch.setenv("BROKERAGE_PANDA_DIR", str(tmp_path / "no-panda"))
    monkeypatch.setattr(services.jobs, "start", lambda *a, **k: pytest.fail("no job without PanDA"))
    services.crosschecks.results.clear()
    body, status, job, poll_off, *_ = _as_trigger(f"{ids.TASK_ID}.data", drive_panda_check, 1, None, None, None, None)
    text = _text(body)
    assert "PanDA source not available: run scripts/panda.sh" in text
    assert str(tmp_path / "no-panda") in text and job is None and poll_off is True and status == ""


def test_an_unknown_task_is_refused_inline_before_any_job(app_client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A task id not in the snapshot is an inline error naming it; no job is started."""
    from app import ids
    from app.callbacks.pandacheck import drive_panda_check
    from app.main import services

    monkeypatch.setattr(services.crosschecks, "missing", lambda: None)
    monkeypatch.setattr(services.jobs, "start", lambda *a, **k: pytest.fail("no job for an unknown task"))
    body, _, job, *_ = _as_trigger(f"{ids.TASK_ID}.data", drive_panda_check, 999, None, None, None, None)
    assert "unknown task 999" in _text(body) and job is None


def test_the_cache_is_bounded_and_keyed_on_snapshot_task_and_config(app_client: Any) -> None:
    """A finished check is kept under (snapshot key, task, config fingerprint); another config is another entry; the
    cache never outgrows its size; a cached check answers at once, without a job."""
    from app.main import services
    from app.services.crosschecks import Crosschecks
    from app.services.jobs import JobState

    checks = Crosschecks(services.state, services.jobs, size=2)
    key = checks.key(1)
    assert key == (services.state.snapshot().key, 1, services.state.config().fingerprint())
    job_id = checks.job_id(key)
    assert checks.key_of(job_id) == key and checks.key_of("report:x") is None
    checks._keep(job_id, JobState("done", 100, "done", result=AGREE))
    assert checks.start(1) == (job_id, JobState("done", 100, "done", result=AGREE))
    for other in ((key[0], 2, key[2]), (key[0], 1, "another-config")):
        checks._keep(checks.job_id(other), JobState("done", result={"identical": False}))
    assert len(checks.results) == 2 and checks.results.peek(key) is None
    assert checks.results.peek((key[0], 1, "another-config")) == {"identical": False}


def _finish(fn: Any, first: tuple[Any, ...], task: int) -> tuple[Any, ...]:
    from app import ids_pandacheck as pids

    out, end = first, time.monotonic() + 120
    while out[2] is not None and time.monotonic() < end:  # out[2]: the job id while it runs
        time.sleep(0.2)
        out = _as_trigger(f"{pids.PANDA_POLL}.n_intervals", fn, task, 1, None, None, out[2])
    return out


def test_with_panda_the_panel_shows_the_crosschecks_verdict(app_client: Any, panda: PandaEnv,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """With PanDA set up, opening a task starts the job (a status line while it runs), which ends in the verdict the
    crosscheck of that task gives under the stored config and the panda-1.0.4 profile; a second opening is answered
    from the cache without a job."""
    from app import ids
    from app.callbacks.pandacheck import drive_panda_check
    from app.main import services
    from brokerage.crosscheck.single import crosscheck_task

    services.crosschecks.results.clear()
    for task in (1, 5):
        first = _as_trigger(f"{ids.TASK_ID}.data", drive_panda_check, task, None, None, None, None)
        assert first[2] is not None and f"Running PanDA 1.0.4's brokers and ours on task {task}" in _text(first[1])
        out = _finish(drive_panda_check, first, task)
        direct = crosscheck_task(services.state.snapshot(), task, services.state.config(), panda)
        want = vm.verdict(direct.to_dict())
        text = _text(out[0])
        assert want.headline in text and out[3] is True, text
        assert all(r["name"] in text for r in want.rows)
        assert direct.to_dict()["profile"] == "panda-1.0.4" and "stored profile, seed" in text
    kept = services.crosschecks.results.peek(services.crosschecks.key(5))
    assert kept and kept["brokers"] and all(not q["agree"] for b in kept["brokers"] for q in b["queues"])  # summarised
    monkeypatch.setattr(services.jobs, "start", lambda *a, **k: pytest.fail("a cached check starts no job"))
    again = _as_trigger(f"{ids.TASK_ID}.data", drive_panda_check, 5, None, None, None, None)
    assert want.headline in _text(again[0]) and again[2] is None


def test_a_third_check_waits_for_a_free_panda_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """At most PANDA_AT_ONCE (2) PanDA subprocesses per worker process: with both taken, a check says it waits for a
    free PanDA process, runs nothing, and a cancel stops it there."""
    from app.services import crosschecks as cs
    from brokerage.runs import Cancelled

    monkeypatch.setattr(cs, "crosscheck_task", lambda *a: pytest.fail("no PanDA run while both slots are taken"))
    labels: list[str] = []

    def report(percent: int, label: str) -> None:
        labels.append(label)
        raise Cancelled("cancelled")

    taken = [cs._panda_slots.acquire(blocking=False) for _ in range(cs.PANDA_AT_ONCE)]
    try:
        assert all(taken)
        with pytest.raises(Cancelled):
            cs.task_crosscheck(report, None, None, 1)  # type: ignore[arg-type]
    finally:
        for _ in taken:
            cs._panda_slots.release()
    assert labels == [cs.WAITING] and cs.PANDA_AT_ONCE == 2
