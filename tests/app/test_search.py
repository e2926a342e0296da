"""The navbar search opens the right page, and the task picker matches status words."""

from __future__ import annotations

from dash import no_update

from brokerage.model.snapshot import GridSnapshot


def test_search_resolves_each_kind_of_name_to_its_page(snap: GridSnapshot) -> None:
    """A task id or name, a queue, a nucleus, a satellite site and a user each open the page that answers them."""
    from app.viewmodels.search import resolve

    assert resolve(snap, "7") == ("/task?id=7", "task 7")
    assert resolve(snap, "aglt2_q2") == ("/queue?name=AGLT2_Q2", "queue AGLT2_Q2")
    assert resolve(snap, "CERN-PROD") == ("/network?nucleus=CERN-PROD", "nucleus CERN-PROD")
    assert resolve(snap, "MWT2") == ("/queues?site=MWT2", "site MWT2")
    assert resolve(snap, "alice") == ("/stabilizer?user=alice", "user alice")
    assert resolve(snap, "evgen.second") == ("/task?id=2", "task 2 · mc23.evgen.second")
    assert resolve(snap, "Q1") is None  # three queues contain it: the list of matches decides, not the first
    assert resolve(snap, "no such thing") is None and resolve(snap, " ") is None


def test_search_lists_prefix_matches_before_substring_matches(snap: GridSnapshot) -> None:
    """Typing part of a name lists every match, those that start with it first: "q1" is no queue's start, so the
    three queues containing it come in table order; "aglt" lists AGLT2's three queues and the site."""
    from app.viewmodels.search import matches

    assert [label for _, label in matches(snap, "aglt")] == [
        "queue AGLT2_Q2", "queue AGLT2_Q6", "queue AGLT2_Q10", "site AGLT2"
    ]  # fmt: skip
    assert [label for _, label in matches(snap, "q1")] == ["queue BNL-ATLAS_Q1", "queue AGLT2_Q10", "queue MWT2_Q11"]
    assert matches(snap, "bnl", limit=2) == [("/queue?name=BNL-ATLAS_Q1", "queue BNL-ATLAS_Q1"),
                                             ("/queue?name=BNL-ATLAS_Q5", "queue BNL-ATLAS_Q5")]  # fmt: skip


def test_search_callback_marks_an_unknown_name(app_client) -> None:
    """Enter on a name nothing has turns the box invalid and says why; a known name navigates; a part of several
    names lists them and navigates nowhere."""
    from app.callbacks.search import on_search, on_type
    from tests.app.test_jobs import _as_trigger

    def enter(text: str) -> tuple:
        return on_search(1, text)

    assert enter("AGLT2_Q2")[0] == "/queue?name=AGLT2_Q2"
    _, invalid, title, _ = enter("zzz")
    assert invalid is True and "zzz" in title
    href, invalid, title, listed = enter("aglt")
    assert href is no_update and not invalid and "pick one" in title and len(listed) == 4
    typed = _as_trigger("nav-search.value", on_type, "aglt", None)
    assert typed[0].children == "queue AGLT2_Q2"
    assert _as_trigger("url.pathname", on_type, "aglt", "/queues") == []


def test_task_picker_matches_status_words(snap: GridSnapshot) -> None:
    """Typing "pending" in the task picker offers the pending tasks; several words must all match."""
    from app.viewmodels.queues import search_tasks

    assert [o["value"] for o in search_tasks(snap, "pending")] == [3]
    assert [o["value"] for o in search_tasks(snap, "ready alice")] == [7]
    assert 2 in [o["value"] for o in search_tasks(snap, "evgen")]


def test_grid_filters_and_sorts_round_trip_through_the_url() -> None:
    """A table's filters and sort read back from the URL as AG Grid's filterModel and column sorts."""
    from app.viewmodels.gridstate import filter_model, with_sort

    assert filter_model('{"atlas_site": "CERN", "corecount": 8}') == {
        "atlas_site": {"filterType": "text", "type": "contains", "filter": "CERN"},
        "corecount": {"filterType": "number", "type": "equals", "filter": 8},
    }
    assert filter_model("not json") == {} and filter_model(None) == {}
    cols = with_sort([{"field": "a", "sort": "asc"}, {"field": "b"}], "b:desc,zz:up")
    assert cols == [{"field": "a"}, {"field": "b", "sort": "desc"}]


def test_grid_filter_other_comparisons_and_grid_params() -> None:
    """A comparison other than contains/equals comes back from {type, filter}; X_f/X_s of a known table are page state."""
    from app.viewmodels.gridstate import filter_model, is_grid_param

    assert filter_model('{"nQ": {"type": "greaterThan", "filter": 5}, "bad": [1], "site": {"type": "notContains", "filter": "X"}}') == {
        "nQ": {"filterType": "number", "type": "greaterThan", "filter": 5},
        "site": {"filterType": "text", "type": "notContains", "filter": "X"},
    }  # fmt: skip
    assert is_grid_param("i_f") and is_grid_param("nk_s") and is_grid_param("q_s")
    assert not is_grid_param("NQUEUED_SAT_CAP") and not is_grid_param("zz_f") and not is_grid_param("q_x")


def test_queue_rolls_up_to_its_site_and_cloud(snap: GridSnapshot) -> None:
    """A queue's page shows its job totals beside its site's and its cloud's, each linking to those queues."""
    from app.viewmodels.detail import rollup

    rows = rollup(snap, "AGLT2_Q2")
    assert [r["level"] for r in rows] == ["queue", "site AGLT2", "cloud CERN"]
    assert [r["queues"] for r in rows] == [1, 3, 6]
    assert rows[1]["running"] >= rows[0]["running"] and rows[1]["href"] == "/queues?site=AGLT2"
    assert rollup(snap, "NOPE") == []
