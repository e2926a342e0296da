"""PanDA 1.0.4's own checks, active only under the rule profile panda-1.0.4 (brokerage/checks/panda_rules.py)."""

from __future__ import annotations

import pytest

from brokerage.brokers import production
from brokerage.model.gdpconfig import Config
from tests.builders import grid, queue, task

PANDA = Config().with_overrides({"RULES": "panda-1.0.4"})


def _skips(config: Config) -> dict[str, str]:
    qs = [queue("A", "S1"), queue("B", "S1", catchall="useJumboJobs")]
    d = production.broker(grid(qs, [task(1)]), 1, config)
    return {s.candidate: s.criteria for s in d.skipped}


@pytest.mark.parametrize("profile", [pytest.param(PANDA, id="-jumbo:panda-1.0.4")])
def test_a_task_without_jumbo_jobs_avoids_jumbo_queues(profile: Config) -> None:
    """Under PanDA's code a task without jumbo jobs skips a queue whose catchall holds useJumboJobs (-jumbo)."""
    skips = _skips(profile)
    assert skips.get("B") == "-jumbo"
    assert "A" not in skips


def test_the_seed_has_no_jumbo_rule() -> None:
    """The seed names no jumbo check, so under the default profile a useJumboJobs queue is not skipped for it."""
    assert _skips(Config()).get("B") != "-jumbo"


def _blacklist_grid() -> object:
    """Queue A's only endpoint is a SCRATCHDISK (online); queue B's a DATADISK."""
    return grid(
        [queue("A", "S1"), queue("B", "S2")],
        [task(1)],
        ddm_endpoints=[
            {"ddm_endpoint_name": "S1_DATADISK", "site_name": "S1", "type": "SCRATCHDISK", "space_total": 1e6,
             "space_free": 5e5},
            {"ddm_endpoint_name": "S2_DATADISK", "site_name": "S2", "type": "DATADISK", "space_total": 1e6,
             "space_free": 5e5},
        ],
    )  # fmt: skip


def test_blacklist_tests_datadisk_endpoints_only() -> None:
    """check_endpoints_with_blacklist(storage_type='DATADISK'): a queue without a DATADISK input endpoint cannot
    read over LAN (-read_lan_blacklist); under the seed an online endpoint of any type passes."""
    panda = production.broker(_blacklist_grid(), 1, PANDA)
    assert {s.candidate: s.criteria for s in panda.skipped}.get("A") == "-read_lan_blacklist"
    seed = production.broker(_blacklist_grid(), 1, Config())
    assert "A" not in {s.candidate for s in seed.skipped}


def _io_grid(holders: dict[str, tuple[str, int]]) -> object:
    """An IO-intensive task (ioIntensity 5000 kB/s) reading 200 files of 0.1 GB; HOLDERS: site -> (type, files)."""
    sites = sorted({"S1", "S2", *holders})
    return grid(
        [queue("A", "S1"), queue("B", "S2")],
        [task(1, iointensity=5000.0)],
        ddm_endpoints=[{"ddm_endpoint_name": f"{s}_DATADISK", "site_name": s, "type": holders.get(s, ("DATADISK", 0))[0],
                        "is_tape": holders.get(s, ("DATADISK", 0))[0] == "DATATAPE", "space_total": 1e6,
                        "space_free": 5e5} for s in sites],
        datasets=[{"jeditaskid": 1, "datasetid": 1, "nfiles": 200, "size_gb": 20.0, "is_master": True}],
        dataset_replicas=[{"jeditaskid": 1, "datasetid": 1, "ddm_endpoint_name": f"{s}_DATADISK", "nfiles": n,
                           "size_gb": 20.0 * n / 200} for s, (_, n) in holders.items()],
    )  # fmt: skip


def test_io_check_counts_complete_replicas_only() -> None:
    """JEDI's IO check: B holds 150 of 200 files (not complete: all 200 files, 20 GB > 10 GB, must move) while A
    holds all 200 on disk, so B fails -io; the seed counts B's 150 files (50 files, 5 GB to move) and keeps it."""
    snap = _io_grid({"S1": ("DATADISK", 200), "S2": ("DATADISK", 150)})
    panda = {s.candidate: s.criteria for s in production.broker(snap, 1, PANDA).skipped}
    assert panda.get("B") == "-io" and "A" not in panda
    seed = {s.candidate: s.criteria for s in production.broker(snap, 1, Config()).skipped}
    assert seed.get("B") != "-io"


def test_io_check_is_disabled_when_no_queue_passes() -> None:
    """No queue holds the input: every queue would fail, so JEDI disables the IO check (no -io skip)."""
    snap = _io_grid({})
    panda = {s.candidate: s.criteria for s in production.broker(snap, 1, PANDA).skipped}
    assert "-io" not in panda.values()
