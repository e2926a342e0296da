"""Grid diffs: the brokerages that change between two versions, each attributed to the input that caused it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from brokerage.cli.main import main
from brokerage.diff.attribute import diff_grids
from brokerage.diff.delta import apply, deltas, describe
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from tests.builders import counts, grid, queue, task
from tests.core.checks.helpers import net, sites


def two_links(q1: float, q2: float = 70, maxrss2: int = 4000) -> GridSnapshot:
    """Q1 at S1 and Q2 at S2, both satellites of nucleus N (closeness 11, no throughput), one task for N."""
    qs = [queue("Q1", "S1"), queue("Q2", "S2", maxrss=maxrss2)]
    network = net("S1", "N", queued=q1, closeness=11) + net("S2", "N", queued=q2, closeness=11)
    return grid(qs, [task(1, nucleus="N")], sites=sites("N", "S1", "S2"), network=network)


def test_queued_files_on_a_link_explain_a_new_top_candidate() -> None:
    """Network weight 0.5 x (2 - nQueued/150) + 0.5 x 1: S1->N queued 60 -> 120 moves Q1 from 1.3 to 1.1, below
    Q2's 1.267, so Q2 becomes top; Q2's maxrss, changed too, is not a cause."""
    old = two_links(60)
    new = GridSnapshot(two_links(120, maxrss2=5000).tables, old.taken_at, old.snapshot_id, old.version + 1)
    d = diff_grids(old, new, Config())
    assert d.tables == {"queues": 1, "network": 1}
    assert [t.change.task for t in d.tasks] == [1]
    (td,) = d.tasks
    assert td.change.aspects == ("top",) and td.change.before.top[0] == "Q1" and td.change.after.top[0] == "Q2"
    assert [(c.table, c.row, c.level) for c in td.causes] == [("network", ("S1", "N"), "row")]
    assert td.causes[0].sentence() == (
        "Q1 ranked lower (1 → 2) because queued files on S1→N rose from 60 to 120 (network 1.3 → 1.1)"
    )


def test_running_jobs_explain_a_rank_change() -> None:
    """Weight (running + 1) / (queued + 10): B's running 10 -> 100 takes it from 11/10 to 101/10, above A's 51/10."""
    jc_old = counts("A", running=50) + counts("B", running=10)
    jc_new = counts("A", running=50) + counts("B", running=100)
    old = grid([queue("A", "SA"), queue("B", "SB")], [task(1)], job_counts=jc_old)
    new = grid([queue("A", "SA"), queue("B", "SB")], [task(1)], job_counts=jc_new)
    (td,) = diff_grids(old, new, Config()).tasks
    (cause,) = td.causes
    assert (cause.table, cause.row, cause.level, cause.subject) == ("job_counts", ("B",), "row", "B")
    assert "running jobs at B rose from 10 to 100" in cause.sentence()
    assert cause.sentence().startswith("B ranked higher (2 → 1) because")


def test_two_links_that_only_together_change_the_top_stay_a_table_cause() -> None:
    """S1->N 60 -> 66 (Q1 1.3 -> 1.28) or S2->N 70 -> 64 (Q2 1.267 -> 1.287) alone keep Q1 first; both make Q2 first,
    so no single link explains it and the network table is the cause."""
    old = two_links(60, 70)
    new = GridSnapshot(two_links(66, 64).tables, old.taken_at, old.snapshot_id, 1)
    (td,) = diff_grids(old, new, Config()).tasks
    assert [(c.table, c.row, c.level) for c in td.causes] == [("network", None, "table")]


def test_unchanged_grids_have_no_diff() -> None:
    """The same grid twice: no input changed, so no brokerage can change and nothing is brokered or replayed (the
    `diff --from 1 --to 1` short cut)."""
    snap = two_links(60)
    d = diff_grids(snap, snap, Config())
    assert (d.tasks, d.tables, d.replays, d.compared, d.phases) == ([], {}, 0, 0, {})


def test_cli_diff_of_a_version_with_itself_says_so_at_once(tmp_path: Path) -> None:
    """`diff` of a grid with itself prints that the inputs are the same and brokers nothing (no progress lines)."""
    a = tmp_path / "a.json"
    two_links(60).to_json(a)
    out = CliRunner().invoke(main, ["diff", "--from", str(a), "--to", str(a)])
    assert out.exit_code == 0, out.output
    assert "the two grids hold the same inputs: no brokerage can change (nothing brokered)" in out.stdout
    assert "brokering" not in out.stderr


def test_apply_swaps_one_row_group_in_place() -> None:
    """Swapping one link takes exactly that link's rows from the new grid, at the place of the old ones."""
    old, new = two_links(60), two_links(120)
    delta = deltas(old, new)["network"]
    assert delta.keys == (("S1", "N"),)
    mixed = apply(old, [(delta, None)], "t")
    assert mixed.tables["network"].equals(new.tables["network"])
    assert mixed.snapshot_id == f"{old.snapshot_id}+t"
    assert describe(delta, ("S1", "N")) == ["queued files on S1→N rose from 60 to 120"]


def test_cli_diff_json_and_errors(tmp_path: Path) -> None:
    """`diff --from A.json --to B.json --json` prints the changed tasks with their causes and both versions; a
    version that is neither a number nor a .json file exits 2 naming the option."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    old = two_links(60)
    old.to_json(a)
    GridSnapshot(two_links(120).tables, old.taken_at, old.snapshot_id, 1).to_json(b)
    out = CliRunner().invoke(main, ["diff", "--from", str(a), "--to", str(b), "--task", "1", "--json"])
    assert out.exit_code == 0, out.output
    body = json.loads(out.output)
    assert body["changed"] == 1 and body["snapshot_version"] == f"{old.snapshot_id}@1"
    assert body["config_version"] == "defaults"
    assert body["tasks"][0]["causes"][0]["row"] == ["S1", "N"]
    text = CliRunner().invoke(main, ["diff", "--from", str(a), "--to", str(b)])
    assert "Q1 ranked lower (1 → 2) because queued files on S1→N rose from 60 to 120" in text.output
    bad = CliRunner().invoke(main, ["diff", "--from", "yesterday", "--to", str(b)])
    assert bad.exit_code == 2 and "--from: expected a stored grid version" in bad.output
