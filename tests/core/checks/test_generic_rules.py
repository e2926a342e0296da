"""GenJobBroker's queue checks (brokerage/checks/generic_rules.py), one case per criteria code."""

from __future__ import annotations

import pytest

from brokerage.brokers import generic
from brokerage.checks.generic_rules import catchall_has, catchall_value
from tests.builders import grid, queue, task


@pytest.mark.parametrize(
    ("queue_kw", "task_kw", "code"),
    [
        pytest.param({"status": "brokeroff"}, {}, "-status", id="-status"),
        pytest.param({"corecount": 8}, {"corecount": 1}, "-cpucore", id="-cpucore:single-core task"),
        pytest.param({"corecount": 4}, {"corecount": 8, "ramcount": 0}, "-cpucore", id="-cpucore:too few cores"),
        pytest.param({"maxrss": 1000}, {"ramcount": 2000, "ramunit": "MB"}, "-lowmemory", id="-lowmemory"),
        pytest.param({"minrss": 3000}, {"ramcount": 2000, "ramunit": "MB"}, "-highmemory", id="-highmemory"),
        pytest.param({"maxwdir": 500}, {"workdiskcount": 300}, "-disk", id="-disk:300 MB + 300 MiB > 500"),
        pytest.param({"space": 150}, {}, "-disk", id="-disk:SE space 150 < 200 GB"),
        pytest.param({"maxtime": 3600}, {"walltime": 7200}, "-shortwalltime", id="-shortwalltime"),
        pytest.param({"mintime": 7200}, {"walltime": 3600}, "-longwalltime", id="-longwalltime"),
        pytest.param({"catchall": "allowed_processing=evgen|reco"}, {"processingtype": "simul"}, "-processing",
                     id="-processing:not allowed"),
        pytest.param({"catchall": "excluded_processing=simul"}, {"processingtype": "simul"}, "-processing",
                     id="-processing:excluded"),
        pytest.param({"npilot": 0}, {}, "-nopilot", id="-nopilot"),
    ],
)  # fmt: skip
def test_each_check_skips_with_its_code(queue_kw: dict[str, object], task_kw: dict[str, object], code: str) -> None:
    """GenJobBroker's checks in order: status online, scratch <= maxwdir, SE space >= 200 GB when set, walltime in
    [mintime, maxtime], core count (1: queue corecount 0/1; n > 1: 0 or >= n), memory in [minrss, maxrss], catchall
    allowed/excluded processing types, pilot activity."""
    ok_cores = 0 if task_kw.get("corecount") == 8 else 1  # corecount 0 takes any task
    snap = grid([queue("BAD", "S", **queue_kw), queue("OK", "S", corecount=ok_cores)], [task(1, vo="wlcg", **task_kw)])
    d = generic.broker(snap, 1)
    assert d.ranked_names == ["OK"]
    skip = d.skip_of("BAD")
    assert skip is not None and skip.criteria == code


def test_catchall_is_read_as_sitespec_reads_it() -> None:
    """hasValueInCatchall: KEY alone or KEY=value among the comma-separated items; getValueFromCatchall: the value."""
    assert catchall_has("per_core_attr,allow_no_pilot", "allow_no_pilot")
    assert catchall_has("allow_no_pilot=1", "allow_no_pilot") and not catchall_has("allow_no_pilots", "allow_no_pilot")
    assert catchall_value("x=1,allowed_processing=evgen|simul", "allowed_processing") == "evgen|simul"
    assert catchall_value("", "allowed_processing") is None


def test_se_space_and_walltime_limits_as_genjobbroker_draws_them() -> None:
    """GenJobBroker: "free space must be >= 200GB" only where the queue's space is set (space 0 passes, 200 passes);
    walltime: skip when maxtime != 0 and walltime > maxtime, or mintime != 0 and walltime < mintime (equal passes);
    a task without walltime is not checked."""
    qs = [queue("UNSET", "S"), queue("EDGE", "S", space=200, maxtime=3600, mintime=3600), queue("LOW", "S", space=199)]
    d = generic.broker(grid(qs, [task(1, vo="wlcg", walltime=3600)]), 1)
    assert sorted(d.ranked_names) == ["EDGE", "UNSET"]
    low = d.skip_of("LOW")
    assert low is not None and low.reason == "disk shortage in SE = 199 < 200GB"
    short = generic.broker(grid(qs, [task(1, vo="wlcg", walltime=3601)]), 1).skip_of("EDGE")
    assert short is not None and short.reason == "short site walltime=3600(site upper limit) < 3601"
    assert sorted(generic.broker(grid(qs[:2], [task(1, vo="wlcg")]), 1).ranked_names) == ["EDGE", "UNSET"]


def test_the_se_space_check_comes_before_walltime_and_cores() -> None:
    """GenJobBroker's order: scratch disk, SE space, walltime, core count: a queue failing the last three is skipped
    by the SE space check (-disk), one failing the last two by the walltime check (-shortwalltime)."""
    qs = [queue("ALL3", "S", space=10, maxtime=60, corecount=8), queue("TWO", "S", maxtime=60, corecount=8),
          queue("OK", "S")]  # fmt: skip
    d = generic.broker(grid(qs, [task(1, vo="wlcg", walltime=3600)]), 1)
    assert d.ranked_names == ["OK"]
    assert [d.skip_of(n).criteria for n in ("ALL3", "TWO")] == ["-disk", "-shortwalltime"]  # type: ignore[union-attr]
