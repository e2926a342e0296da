"""PanDA 1.0.4's endpoint blacklist in the production job broker (brokerage/checks/panda_io.py)."""

from __future__ import annotations

import pytest

from brokerage.brokers import production
from brokerage.model.gdpconfig import Config
from tests.builders import grid, queue, site, task

PANDA = Config().with_overrides({"RULES": "panda-1.0.4"})


def _grid() -> object:
    """Nucleus N (queue N1), satellite S1 (queue A); the task's only complete replica is at S2_DATADISK, whose
    read_wan is OFF (readable over LAN only)."""
    eps = [{"ddm_endpoint_name": f"{s}_DATADISK", "site_name": s, "space_total": 1e6, "space_free": 5e5,
            "read_wan": "OFF" if s == "S2" else "ON"} for s in ("N", "S1", "S2")]  # fmt: skip
    return grid(
        [queue("N1", "N"), queue("A", "S1")],
        [task(1, nucleus="N")],
        sites=[site("N"), site("S1", role="satellite"), site("S2", role="satellite")],
        ddm_endpoints=eps,
        datasets=[{"jeditaskid": 1, "datasetid": 1, "nfiles": 10, "size_gb": 10.0, "is_master": True}],
        dataset_replicas=[{"jeditaskid": 1, "datasetid": 1, "ddm_endpoint_name": "S2_DATADISK", "nfiles": 10,
                           "size_gb": 10.0}],
    )  # fmt: skip


@pytest.mark.parametrize("profile", [pytest.param(PANDA, id="-source_blacklist:panda-1.0.4")])
def test_satellites_need_a_wan_readable_source(profile: Config) -> None:
    """blacklist_as_jedi: when no complete replica of the input can be read over WAN, satellite queues are skipped
    (-source_blacklist, a temporary problem) and the nucleus' queues are not; the seed has no such rule."""
    skips = {s.candidate: s.criteria for s in production.broker(_grid(), 1, profile).skipped}
    assert skips.get("A") == "-source_blacklist" and "N1" not in skips
    assert {s.candidate: s.criteria for s in production.broker(_grid(), 1, Config()).skipped}.get("A") != (
        "-source_blacklist"
    )
