"""A single CRIC queue object (the pilot's queuedata.json) imports as one CRIC queue, and brokers as unified."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from brokerage.brokers import production
from brokerage.model.gdpconfig import Config
from brokerage.store import repository
from brokerage.store.importer import detect_kind, import_file
from tests.builders import RECENT, grid, task

QUEUEDATA = Path(__file__).parents[1] / "data" / "queuedata_CERN.json"  # pilot3's CRIC record of CERN, trimmed


def test_one_queue_object_is_detected_as_cric_queues_not_a_snapshot() -> None:
    """queuedata.json names itself (panda_resource) and states capability/corecount; its 'queues' are CEs."""
    data = json.loads(QUEUEDATA.read_text())
    assert isinstance(data["queues"], list)  # what made it look like a snapshot before
    assert detect_kind(data) == "cric_queues"


def test_queuedata_json_imports_as_the_unified_queue_cern(engine: Any) -> None:
    """The record lands as queue CERN with its CRIC values; its site and astorages endpoints are added."""
    result = import_file(engine, QUEUEDATA)
    assert (result.kind, result.counts["queues"]) == ("cric_queues", 1)
    q = repository.load_snapshot(engine).tables["queues"].set_index("panda_queue").loc["CERN"]
    assert (q["atlas_site"], q["type"], q["status"], q["capability"]) == ("CERN-PROD", "unified", "online", "ucore")
    assert (q["corecount"], q["maxrss"], q["maxwdir"], q["maxtime"]) == (8, 32000, 160000, 288000)
    assert q["jobseed"] == "eshigh"


def test_imported_cern_takes_single_core_production_tasks(engine: Any) -> None:
    """The imported CERN row (live fields set) is a candidate of a 1-core 2000 MB task via its SCORE pseudo queue."""
    import_file(engine, QUEUEDATA)
    row = repository.load_snapshot(engine).tables["queues"].to_dict("records")[0]
    keep = ("panda_queue", "atlas_site", "type", "status", "capability", "corecount", "corepower", "maxrss", "minrss",
            "maxtime", "mintime", "maxwdir", "releases", "jobseed", "wnconnectivity")  # fmt: skip
    queue = {k: row[k] for k in keep} | {"releases": ["ANY"], "laststart": RECENT, "npilot": 10}
    decision = production.broker(grid([queue], [task()]), 1, Config())
    assert [c.name for c in decision.candidates] == ["CERN"] and not decision.skipped
