"""Storage scopes as PanDA's select_scope draws them: analysis jobs read and write a queue's 'analysis' scope."""

from __future__ import annotations

from typing import Any

from brokerage.checks import storage
from brokerage.model import views
from brokerage.model.cache import GridCache
from brokerage.model.snapshot import GridSnapshot
from tests.builders import grid, queue, task


def scoped_grid(analysis_read_lan: str = "ON") -> GridSnapshot:
    """Queue Q at site S: scope 'default' reads and writes S_DATADISK, scope 'analysis' S_SCRATCHDISK; queue P has
    only the default scope. Task 1 (managed) and task 2 (user) both need dataset 10 (4 files, 8 GB), which only
    S_SCRATCHDISK and P's S2_DATADISK hold."""
    eps = [
        {"ddm_endpoint_name": "S_DATADISK", "site_name": "S", "space_total": 1e6, "space_free": 5e5},
        {"ddm_endpoint_name": "S_SCRATCHDISK", "site_name": "S", "type": "SCRATCHDISK", "space_total": 1e6,
         "space_free": 5e5, "read_lan": analysis_read_lan},
        {"ddm_endpoint_name": "S2_DATADISK", "site_name": "S2", "space_total": 1e6, "space_free": 5e5},
    ]  # fmt: skip
    rel: list[dict[str, Any]] = [
        {"panda_queue": "Q", "ddm_endpoint_name": "S_DATADISK", "default_write": True},
        {"panda_queue": "Q", "ddm_endpoint_name": "S_SCRATCHDISK", "default_write": True, "scope": "analysis"},
        {"panda_queue": "P", "ddm_endpoint_name": "S2_DATADISK", "default_write": True},
    ]
    tasks = [task(1), task(2, prodsourcelabel="user", gshare="User Analysis", username="alice")]
    ds = [{"jeditaskid": t, "datasetid": 10, "nfiles": 4, "size_gb": 8.0} for t in (1, 2)]
    reps = [
        {"jeditaskid": t, "datasetid": 10, "ddm_endpoint_name": e, "nfiles": 4, "size_gb": 8.0}
        for t in (1, 2)
        for e in ("S_SCRATCHDISK", "S2_DATADISK")
    ]
    return grid([queue("Q", "S"), queue("P", "S2")], tasks, ddm_endpoints=eps, panda_ddm_relation=rel, datasets=ds,
                dataset_replicas=reps)  # fmt: skip


def test_analysis_input_comes_from_the_analysis_scope() -> None:
    """select_scope: scope_input is 'analysis' for analysis jobs (prodSourceLabel user/panda) at a queue with an
    'analysis' input scope, else 'default' (getSiteInputStorageEndpointMap reads that scope's endpoints): the user
    task finds its 4 files at Q through S_SCRATCHDISK, the managed task does not (Q's default scope is S_DATADISK);
    at P, without an analysis scope, both read the default scope."""
    cache = GridCache(scoped_grid())
    prod, user = views.available_at_queues(cache, 1), views.available_at_queues(cache, 2)
    q, p = views.queue_arrays(cache).index["Q"], views.queue_arrays(cache).index["P"]
    assert (prod["avail_files"][q], user["avail_files"][q]) == (0.0, 4.0)
    assert (prod["avail_files"][p], user["avail_files"][p]) == (4.0, 4.0)
    rq, re_ = views.input_relations(views.queue_arrays(cache), "user")
    names = views.endpoint_arrays(cache).name
    assert dict(zip(rq.tolist(), names[re_].tolist(), strict=True)) == {p: "S2_DATADISK", q: "S_SCRATCHDISK"}


def test_the_blacklist_reads_the_scope_the_task_uses() -> None:
    """check_endpoints_with_blacklist takes select_scope's scope_input: S_SCRATCHDISK with read_lan OFF bars the user
    task at Q (-read_lan_blacklist) and not the managed task, which reads S_DATADISK (ON)."""
    cache = GridCache(scoped_grid(analysis_read_lan="OFF"))
    q = views.queue_arrays(cache).index["Q"]
    (passed_user, codes_user), (passed_prod, _) = (storage._blacklist_codes(cache, a)[False] for a in (True, False))
    assert not passed_user[q] and codes_user[q] == "-read_lan_blacklist" and passed_prod[q]
