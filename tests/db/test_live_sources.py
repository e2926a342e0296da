"""The live sources PanDA's configurator reads import by content: SW tags, NWS metrics, site matrix, DDM statuses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from brokerage.brokers.router import run_job_brokerage
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.network import network_weights
from brokerage.store import repository
from brokerage.store.importer import ImportFileError, detect_kind, import_data, import_file
from tests.builders import endpoint, grid, queue, site, task

LIVE = Path(__file__).parents[1] / "data" / "live"  # small files made in the published shapes
EL9 = "x86_64-el9-gcc13-opt"


def live_grid() -> Any:
    """AGLT2 (AUTO releases, no SW description) and MWT2 satellites of nucleus BNL-ATLAS; one closeness row."""
    queues = [queue("AGLT2", "AGLT2", releases=["AUTO"]), queue("MWT2", "MWT2"), queue("BNL", "BNL-ATLAS")]
    sites = [site("AGLT2", "satellite"), site("MWT2", "satellite"), site("BNL-ATLAS")]
    endpoints = [endpoint(f"{s}_DATADISK", s) for s in ("AGLT2", "MWT2", "BNL-ATLAS")]
    network = [
        {"src": "AGLT2", "dst": "BNL-ATLAS", "key": "AGIS_closeness", "value": 0.0, "ts": "2026-11-20T11:50:00Z"}
    ]
    tasks = [task(1, architecture=EL9, transhome="Athena-24.0.30")]
    return grid(queues, tasks, sites=sites, ddm_endpoints=endpoints, network=network)


@pytest.fixture
def stored(engine: Any) -> Any:
    """An engine holding live_grid()."""
    repository.save_snapshot(engine, live_grid())
    return engine


@pytest.mark.parametrize(
    ("name", "kind"),
    [("cric_sw_tags.json", "sw_tags"), ("nws_metrics.json", "nws"), ("cric_sitematrix.json", "site_matrix"),
     ("ddm_endpoint_status.json", "ddm_status")],
)  # fmt: skip
def test_each_live_file_is_detected_by_its_content(name: str, kind: str) -> None:
    """Each recorded file is recognised from its shape, not its name."""
    assert detect_kind(json.loads((LIVE / name).read_text())) == kind


def test_sw_tags_let_a_task_pass_the_release_check(stored: Any) -> None:
    """Before the import AGLT2 (AUTO) has no SW description and fails -cache; after it the EL9 task may run there."""
    before = run_job_brokerage(repository.load_snapshot(stored), 1)
    assert before.skip_of("AGLT2") is not None and before.skip_of("AGLT2").criteria == "-cache"
    result = import_file(stored, LIVE / "cric_sw_tags.json")
    assert result.kind == "sw_tags" and result.counts == {"queue_software": 1}
    assert any("GONE_QUEUE" in n for n in result.notes)
    after = run_job_brokerage(repository.load_snapshot(stored), 1)
    assert after.skip_of("AGLT2") is None and "AGLT2" in after.ranked_names


def test_nws_metrics_change_the_network_weight_by_the_step_functions(stored: Any) -> None:
    """AGLT2->BNL-ATLAS goes from closeness 0 (2.0) to 75 queued and 120.5 MB/s: 0.5*(2-75/150) + 0.5*1.9 = 1.7."""
    sites = np.array(["AGLT2"], dtype=object)
    before = network_weights(GridCache(repository.load_snapshot(stored)), sites, "BNL-ATLAS", Config())
    assert before.weight[0] == pytest.approx(2.0)
    result = import_file(stored, LIVE / "nws_metrics.json")
    after = network_weights(GridCache(repository.load_snapshot(stored)), sites, "BNL-ATLAS", Config())
    assert (after.queued_weight[0], after.throughput_weight[0]) == (pytest.approx(1.5), pytest.approx(1.9))
    assert after.weight[0] == pytest.approx(1.7)
    assert any("ignored 2 values older than 30 min" in n for n in result.notes)  # Express done 1h and 6h
    assert any("UNKNOWN-SITE" in n for n in result.notes)


def test_nws_keys_line_up_with_panda_names_and_fts_becomes_dashb(stored: Any) -> None:
    """Keys are <activity>_done_1h/_6h, <activity>_queued, <system>_mbps_<d>; an fts-only link also gets dashb_."""
    import_file(stored, LIVE / "nws_metrics.json")
    net = repository.load_snapshot(stored).tables["network"]
    keys = {(r.src, r.key): r.value for r in net.itertuples()}
    assert keys[("AGLT2", "Production Output_done_1h")] == 40 and keys[("AGLT2", "Production Output_done_6h")] == 250
    assert keys[("AGLT2", "Production Input_queued")] == 12 and keys[("AGLT2", "percentile_mbps_1w")] == 250
    assert keys[("MWT2", "fts_mbps_1h")] == keys[("MWT2", "dashb_mbps_1h")] == 8.0
    assert ("AGLT2", "Express_done_1h") not in keys and ("AGLT2", "AGIS_closeness") in keys


def test_site_matrix_sets_closeness_and_blocks_a_link(stored: Any) -> None:
    """closeness -1 from MWT2 marks the link blocked; AGLT2's closeness 2 replaces the stored 0."""
    result = import_file(stored, LIVE / "cric_sitematrix.json")
    assert result.counts == {"network": 2}
    weights = network_weights(
        GridCache(repository.load_snapshot(stored)), np.array(["AGLT2", "MWT2"], dtype=object), "BNL-ATLAS", Config()
    )
    assert weights.closeness.tolist() == [2.0, -1.0] and weights.blocked.tolist() == [False, True]


def test_ddm_status_sets_detailed_statuses_and_resets_the_rest(stored: Any) -> None:
    """Listed activities take their value, every other activity of a stored endpoint is ON, unknown ones skipped."""
    import_data(stored, {"MWT2_DATADISK": {"read_wan": {"status": {"value": "OFF"}}}}, "first")
    result = import_file(stored, LIVE / "ddm_endpoint_status.json")
    eps = repository.load_snapshot(stored).tables["ddm_endpoints"].set_index("ddm_endpoint_name")
    assert eps.loc["BNL-ATLAS_DATADISK", "write_wan"] == "OFF" and eps.loc["AGLT2_DATADISK", "read_lan"] == "TEST"
    assert eps.loc["MWT2_DATADISK", "read_wan"] == "ON"  # not listed any more
    assert any("RETIRED_DATADISK" in n for n in result.notes)
    assert any("third_party_copy_read" in n for n in result.notes)


def test_a_bad_value_refuses_the_whole_live_file(stored: Any) -> None:
    """A malformed entry names its path and nothing is written."""
    before = repository.table_contents(stored)
    bad = {
        "AGLT2:BNL-ATLAS": {
            "files": {"queued": {"Production Output": {"latest": "many", "timestamp": "2026-11-20T11:55:00"}}}
        }
    }
    with pytest.raises(ImportFileError) as err:
        import_data(stored, bad, "bad.json")
    assert err.value.problems == [
        "AGLT2:BNL-ATLAS.Production Output_queued: expected a non-negative number, got 'many'"
    ]
    assert repository.table_contents(stored) == before


def test_imported_status_reaches_the_blacklist_filter(stored: Any) -> None:
    """MWT2_DATADISK read_lan OFF in a CRIC status dump makes job brokerage skip MWT2 with -read_lan_blacklist."""
    assert run_job_brokerage(repository.load_snapshot(stored), 1).skip_of("MWT2") is None
    import_data(stored, {"MWT2_DATADISK": {"read_lan": {"status": {"value": "OFF", "reason": "dCache upgrade"}}}})
    skip = run_job_brokerage(repository.load_snapshot(stored), 1).skip_of("MWT2")
    assert skip is not None and skip.criteria == "-read_lan_blacklist"
