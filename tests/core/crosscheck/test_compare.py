"""Both sides' verdicts compared (no PanDA needed)."""

from __future__ import annotations

from brokerage.crosscheck.compare import ABSENT, Totals, compare
from brokerage.crosscheck.verdicts import Verdicts, jedi


def _v(cands: dict, skips: dict) -> Verdicts:
    return Verdicts(ok=bool(cands), candidates=cands, skips={k: (c, "") for k, c in skips.items()})


def test_identical_within_a_relative_1e_9() -> None:
    c = compare(1, "prod", _v({"A": 1.0}, {"B": "-status"}), _v({"A": 1.0 + 1e-12}, {"B": "-status"}))
    assert c.identical and not c.differing()


def test_weight_verdict_and_absent_differences() -> None:
    c = compare(1, "prod", _v({"A": 1.0, "C": 2.0}, {"B": "-status"}), _v({"A": 1.1}, {"C": "-disk"}))
    rows = {r.name: r for r in c.rows}
    assert rows["A"].differs == "weight"
    assert rows["B"].differs == "verdict" and rows["B"].jedi == ABSENT
    assert rows["C"].ours == "+use" and rows["C"].jedi == "-disk"
    assert not c.identical


def test_nucleus_probabilities_are_compared() -> None:
    c = compare(1, "nucleus", _v({"A": 1.0, "B": 1.0}, {}), _v({"A": 1.0, "B": 1.0}, {}))
    assert c.identical
    assert _v({"A": 1.0, "B": 3.0}, {}).probabilities() == {"A": 0.25, "B": 0.75}


def test_totals_count_verdicts_weights_and_kinds() -> None:
    t = Totals()
    t.add(compare(1, "prod", _v({"A": 1.0}, {"B": "-status"}), _v({"A": 1.0}, {"B": "-disk"})))
    d = t.to_dict()
    assert (d["tasks"], d["tasks_identical"], d["verdicts"], d["verdicts_agree"], d["weights_agree"]) == (1, 0, 2, 1, 1)
    assert d["differences"] == [{"field": "verdict", "ours": "-status", "jedi": "-disk", "count": 1}]


def test_jedi_result_pseudo_queues_collapse_and_skips_parse() -> None:
    res = {
        "status": "SC_SUCCEEDED", "ms": 3.0,
        "candidates": {"BNL/MCORE": 2.0, "BNL/MCORE_HIMEM": 2.0, "CERN": 1.0},
        "log": [["AtlasProdJobBroker", "  skip site=RAL/SCORE due to status=offline criteria=-status"],
                ["AtlasProdTaskBroker", "  skip nucleus=X due to y criteria=-space"]],
    }  # fmt: skip
    v = jedi(res, "prod")
    assert v.candidates == {"BNL": 2.0, "CERN": 1.0}
    assert v.skips == {"RAL": ("-status", "due to status=offline")}


def test_allow_listed_differences_are_counted_apart() -> None:
    """An allow-list entry (crosscheck/allowlist.py) covers its difference for its tasks only: the task is accepted,
    not identical, and the row counts under allowed_differences, not differences."""
    ours, jedi = _v({"A": 1.0}, {}), _v({}, {"A": "?-t1_weight"})
    covered, other = compare(86008, "prod", ours, jedi), compare(1, "prod", ours, jedi)
    assert covered.rows[0].allowed and not other.rows[0].allowed
    assert covered.accepted and not covered.identical and not other.accepted
    t = Totals()
    t.add(covered)
    d = t.to_dict()
    assert d["differences"] == [] and d["allowed_differences"][0]["count"] == 1
    assert (d["tasks_identical"], d["tasks_accepted"]) == (0, 1)


def test_equal_weights_swapped_at_the_cut_are_the_same_analysis_decision() -> None:
    """JEDI shuffles equal weights before keeping the best 10 (AtlasAnalJobBroker.py:2250-2259): ours keeping A and
    cutting B where JEDI keeps B and cuts A, all of weight 5, agree (marked tie); a swap at unequal weights, or an
    unbalanced one, still differs."""
    cut = "weight=5 below the best 10 (cut at 5)"
    ours = Verdicts(ok=True, candidates={"A": 5.0, "C": 9.0}, skips={"B": ("-low_weight", cut)})
    jedi_side = Verdicts(ok=True, candidates={"B": 5.0, "C": 9.0},
                         skips={"A": ("-low_weight", "due to low weight and not-used by old jobs with weight=5.0 gshare=x")})  # fmt: skip
    c = compare(1, "anal", ours, jedi_side)
    assert c.identical and {r.name for r in c.rows if r.tie} == {"A", "B"}
    t = Totals()
    t.add(c)
    assert t.to_dict()["tie_swaps"] == 2 and t.to_dict()["verdicts_agree"] == 3
    lower = Verdicts(ok=True, candidates={"A": 4.0, "C": 9.0}, skips={"B": ("-low_weight", cut)})
    assert not compare(1, "anal", lower, jedi_side).identical
    alone = Verdicts(ok=True, candidates={"A": 5.0, "B": 5.0, "C": 9.0})
    assert not compare(1, "anal", alone, jedi_side).identical


def test_a_tie_is_found_at_the_printed_precision_of_jedi_lines() -> None:
    """JEDI prints a cut queue's weight with 7 decimals (weight=0.0058479): it ties with candidates of weight
    0.005847888... on both sides (ours A kept, JEDI's B kept)."""
    w = 0.005847888258626498
    ours = Verdicts(
        ok=True, candidates={"A": w}, skips={"B": ("-low_weight", f"weight={w:.4g} below the best 10 (cut at {w:.4g})")}
    )
    jedi_side = Verdicts(ok=True, candidates={"B": w * (1 + 1e-15)},
                         skips={"A": ("-low_weight", "due to low weight and not-used by old jobs with weight=0.0058479 gshare=x")})  # fmt: skip
    assert compare(1, "anal", ours, jedi_side).identical


def test_queues_removed_without_a_line_when_the_pre_assigned_queue_failed() -> None:
    """AtlasAnalJobBroker.py:1467-1473: when the pre-assigned queue did not pass all tests, JEDI drops the others
    without a skip line; ours' -nonpreassigned for them is the same verdict."""
    log = [["AtlasAnalJobBroker", "preassigned site P did not pass all tests"],
           ["AtlasAnalJobBroker", "  skip site=P due to status=offline criteria=-status"]]  # fmt: skip
    ours = _v({}, {"P": "-status", "Q": "-nonpreassigned"})
    assert compare(1, "anal", ours, jedi({"candidates": {}, "log": log}, "anal")).identical
    assert not compare(1, "anal", ours, jedi({"candidates": {}, "log": log[1:]}, "anal")).identical
