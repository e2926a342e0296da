"""The DIRAC page: viewmodel functions, the re-match callback called directly, the JSON API, the permalink."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from brokerage.dirac.demo import dirac_columns
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot, frame

PILOT = "Site=LCG.CERN.cern,CPUTime=86400,Platform=x86_64-el9"


def _rows(cols: dict[str, Any]) -> list[dict[str, Any]]:
    keys = list(cols)
    values = [list(v.tolist() if hasattr(v, "tolist") else v) for v in cols.values()]
    return [dict(zip(keys, r, strict=True)) for r in zip(*values, strict=True)]


@pytest.fixture
def dirac_app(app_client: Any, snap: GridSnapshot) -> Iterator[Any]:
    """The app serving the sample grid plus a DIRAC community of 400 jobs."""
    from app.main import state
    from app.state.source import Source

    tables = {name: frame(name, _rows(cols)) for name, cols in dirac_columns(0, n_jobs=400).items()}
    with_dirac = snap.replace(**tables)
    state.reset(Source(with_dirac, Config(), "test"))
    yield app_client
    state.reset()


def test_pilot_of_a_ce_carries_its_description() -> None:
    """A CE row becomes the pilot string a pilot there sends (tags, processors, RAM)."""
    from app.viewmodels import dirac as vm

    row = {"Site": "S", "GridCE": "ce", "CPUTime": 1000, "Platform": "el9", "Tags": ["GPU"], "RequiredTags": ["GPU"],
           "NumberOfProcessors": 8, "MaxRAM": 16000}  # fmt: skip
    assert vm.pilot_of_ce(row) == (
        "Site=S,GridCE=ce,CPUTime=1000,Platform=el9,Tags=GPU,RequiredTags=GPU,NumberOfProcessors=8,MaxRAM=16000"
    )


def test_edits_become_overrides_and_a_permalink() -> None:
    """Edited buckets, switches and shares are overrides; the permalink holds them and reads back the same."""
    from app.viewmodels import dirac as vm

    overrides, problems = vm.edits("[360, 1800]", False, 50, "RealPriority", {"lhcb_user": 10}, Config())
    assert problems == []
    assert overrides == {"DIRAC_CPU_BUCKETS": [360, 1800], "DIRAC_CPU_ORDER": False, "DIRAC_JOBS_PER_TRY": 50,
                         "DIRAC_JOB_WEIGHT": "RealPriority", "DIRAC_JOB_SHARE_lhcb_user": 10.0}  # fmt: skip
    link = vm.permalink(PILOT, 3, overrides)
    query = dict(parse_qsl(urlsplit(link).query))
    assert query["pilot"] == PILOT and query["seed"] == "3"
    assert vm.overrides_from_query(query) == (overrides, [])
    assert vm.edits("[5, 1]", None, None, None, {}, Config())[1][0].startswith("DIRAC_CPU_BUCKETS:")


def test_rematch_callback_shows_match_and_every_reason(dirac_app: Any) -> None:
    """The callback answers the summary, the chance chart and a row per task queue with its reasons; the link follows."""
    from app.callbacks.dirac import rematch

    content, link = rematch(PILOT, 2, "[500, 5000, 50000, 300000]", True, 10, "UserPriority", [], [])
    text = str(content)
    assert "Matched task queue" in text and "dirac-grid" in text
    assert link.startswith("/dirac?pilot=") and "seed=2" in link and "DIRAC_" not in link
    content, link = rematch(PILOT, 0, "[360, 1800, 3600, 21600]", True, 10, "UserPriority",
                            [5.0], [{"type": "dirac-share", "group": "lhcb_user"}])  # fmt: skip
    assert "DIRAC_CPU_BUCKETS" in link and "DIRAC_JOB_SHARE_lhcb_user=5.0" in link
    assert "CPUTime bucket" in str(content)


def test_rematch_says_a_bad_pilot_or_edit(dirac_app: Any) -> None:
    """A bad pilot field and a refused bucket list are said inline, with the field named."""
    from app.callbacks.dirac import rematch

    content, _ = rematch("Site=X,Colour=1", 0, "[500]", True, 10, "UserPriority", [], [])
    assert "bad pilot field Colour" in str(content)
    content, _ = rematch(PILOT, 0, "[5, 1]", True, 10, "UserPriority", [], [])
    assert "DIRAC_CPU_BUCKETS" in str(content)


def test_page_renders_from_a_permalink(dirac_app: Any) -> None:
    """/dirac with pilot, seed and overrides renders; a bad override is named in a notice."""
    import dash

    layout = dash.page_registry["app.pages.dirac"]["layout"]
    tree = str(layout(pilot=PILOT, seed="4", DIRAC_CPU_ORDER="false"))
    assert "failed:" not in tree and "LCG.CERN.cern" in tree
    assert "DIRAC_JOBS_PER_TRY" in str(layout(DIRAC_JOBS_PER_TRY="0"))
    assert dirac_app.get("/dirac?pilot=Site%3DLCG.CERN.cern").status_code == 200


def test_api_match_taskqueues_and_ces(dirac_app: Any) -> None:
    """/api/dirac/match answers the CLI's JSON; /taskqueues the definitions; bad input is a 400 naming the field."""
    r = dirac_app.get("/api/dirac/match", query_string={"pilot": PILOT, "seed": "1"})
    body = r.get_json()
    assert r.status_code == 200 and body["matched"]["taskqueue"] >= 1
    assert {"id", "verdict", "reasons", "priority", "probability"} <= set(body["taskqueues"][0])
    r = dirac_app.get("/api/dirac/taskqueues", query_string={"DIRAC_CPU_BUCKETS": "[360,1800]"})
    assert r.status_code == 200 and r.get_json()["buckets"] == [360, 1800]
    r = dirac_app.get("/api/dirac/match", query_string={"pilot": "Site=X,Colour=1"})
    assert r.status_code == 400 and r.get_json()["field"] == "Colour"
    r = dirac_app.get("/api/dirac/taskqueues", query_string={"DIRAC_MAX_JOBS_IN_TQ": "0"})
    assert r.status_code == 400 and r.get_json()["field"] == "DIRAC_MAX_JOBS_IN_TQ"
    assert dirac_app.get("/api/dirac/ces").get_json()["ces"][0]["pilot"].startswith("Site=")


def test_empty_dirac_tables_still_render(app_client: Any) -> None:
    """A grid without DIRAC tables shows no task queue and says no match, without an error."""
    from app.callbacks.dirac import rematch

    content, _ = rematch(PILOT, 0, "", True, 10, "UserPriority", [], [])
    assert "No match found" in str(content) and "failed:" not in str(content)
