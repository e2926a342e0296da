"""The whole-grid impact names each moved task's old and new top candidate and what moved it."""

from __future__ import annotations

from brokerage.brokers.batch import run_grid_serial as run_grid
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.whatif.compare import FactorChange, FilterChange, TaskDiff
from brokerage.whatif.impact import impact


def _diff(**kw) -> TaskDiff:
    base = dict(task=1, broker="production", label="queue", status_before="pending", status_after="ok", moves=[],
                filter_changes=[], factor_changes=[], top_before=None, top_after="Q1")  # fmt: skip
    return TaskDiff(**{**base, **kw})


def test_why_moved_names_the_filter_the_new_top_now_passes() -> None:
    """A task that stops being pending is explained by the filter its new top candidate newly passes."""
    from app.viewmodels.impact import why_moved

    fc = FilterChange("Q1", "newly passes", "-disk", "too little disk", "", "")
    assert why_moved(_diff(filter_changes=[fc])) == "Q1 newly passes -disk"
    f = FactorChange("Q2", "network", 1.0, 2.5)
    assert (
        why_moved(_diff(top_before="Q1", top_after="Q2", factor_changes=[f])) == "weight factor network of Q2: 1 → 2.5"
    )


def test_moved_rows_show_old_and_new_top_and_totals(snap: GridSnapshot) -> None:
    """Every moved task row carries "old → new" top candidates; load totals read before → after."""
    from app.viewmodels.impact import moved_rows, totals_text

    before = run_grid(snap, Config())
    after = run_grid(snap, Config({"NQUEUED_SAT_CAP": 1}))
    im = impact(before, after)
    rows = moved_rows(im, before, after, {}, explain=lambda key: f"why {key[1]}")
    assert rows and all(" → " in r["top"] for r in rows) and rows[0]["why"] == f"why {rows[0]['task']}"
    assert totals_text(im.queue_load, "expected jobs").startswith("expected jobs in total: ")


def test_nucleus_headline_names_the_drawn_nucleus_and_the_draw(snap: GridSnapshot) -> None:
    """The nucleus view says which nucleus was drawn, with its probability, and that the choice is a weighted draw."""
    from app.viewmodels.nuclei import draw_sentence, probability_figure
    from brokerage.brokers.router import run_nucleus_brokerage

    d = run_nucleus_brokerage(snap, 4, Config())
    text = draw_sentence(d)
    assert text is not None and text.startswith(f"Drawn nucleus: {d.extra['chosen']}, with probability ")
    assert "weighted random draw" in text
    assert probability_figure(d).layout.yaxis.range[1] <= 1.0


def test_unknown_api_paths_and_malformed_ids_answer_json(app_client) -> None:
    """Unknown /api/ paths answer a JSON 404 and malformed task ids a JSON 400, never the HTML page with 200."""
    for path, code in (("/api/nope", 404), ("/api/tasks/abc/jobs", 400), ("/api/tasks/-1/nucleus", 400)):
        r = app_client.get(path)
        assert (r.status_code, r.is_json) == (code, True) and "error" in r.get_json()
    assert app_client.get("/api/queues").status_code == 200


def test_queue_page_says_an_unknown_queue_does_not_exist(app_client, snap: GridSnapshot) -> None:
    """/queue?name=<unknown> says no queue has that name and suggests close ones."""
    import dash

    from app.viewmodels.detail import unknown_queue_text

    tree = str(dash.page_registry["app.pages.queue"]["layout"](name="nonexistent"))
    assert "No queue is named 'nonexistent' in this snapshot" in tree

    assert unknown_queue_text(snap, "AGLT2_Q2") is None
    assert unknown_queue_text(snap, "AGLT2_Q").startswith("No queue is named 'AGLT2_Q' in this snapshot. Did you mean ")
