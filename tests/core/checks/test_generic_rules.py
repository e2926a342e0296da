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
        pytest.param({"catchall": "allowed_processing=evgen|reco"}, {"processingtype": "simul"}, "-processing",
                     id="-processing:not allowed"),
        pytest.param({"catchall": "excluded_processing=simul"}, {"processingtype": "simul"}, "-processing",
                     id="-processing:excluded"),
        pytest.param({"npilot": 0}, {}, "-nopilot", id="-nopilot"),
    ],
)  # fmt: skip
def test_each_check_skips_with_its_code(queue_kw: dict[str, object], task_kw: dict[str, object], code: str) -> None:
    """GenJobBroker's checks in order: status online, scratch <= maxwdir, core count (1: queue corecount 0/1; n > 1:
    0 or >= n), memory in [minrss, maxrss], catchall allowed/excluded processing types, pilot activity."""
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
