"""Queue pages show the VO: the queues table names the VOs with jobs at each queue, the queue page breaks its job
counts down per VO when several VOs have jobs there (each VO's brokerage counts its own), the Stabilizer per VO."""

from __future__ import annotations

from typing import Any

import dash
import pandas as pd
import pytest

from app.viewmodels import detail, queues
from app.viewmodels import stabilizer as svm
from brokerage.brokers.stabilizer import stabilizer_grid
from brokerage.model.cache import GridCache
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from tests.builders import counts, user_counts

Q = "CERN-PROD_Q0"  # the sample's: 20 running, 5 activated, 2 defined of MC Simulation; 10 running, 30 activated UA


def two_vos(snap: GridSnapshot) -> GridSnapshot:
    """The sample grid with 7 running and 4 activated Rubin jobs of VO wlcg at Q, and wlcg user carol's 4 activated."""
    wlcg = pd.DataFrame([{**r, "vo": "wlcg"} for r in counts(Q, gshare="Rubin", running=7, activated=4)])
    users = pd.DataFrame([{**r, "vo": "wlcg"} for r in user_counts(Q, user="carol", gshare="Rubin", activated=4)])
    return snap.replace(
        job_counts=pd.concat([snap.tables["job_counts"], wlcg], ignore_index=True),
        user_job_counts=pd.concat([snap.tables["user_job_counts"], users], ignore_index=True),
    )


def test_the_queues_table_names_the_vos_with_jobs(snap: GridSnapshot) -> None:
    """Each queue row's vo lists the VOs with jobs there, atlas first ('atlas, wlcg' at Q); the counts sum them
    (running 20 + 10 + 7 = 37); a VO column sits beside the site's role."""
    rows = {r["panda_queue"]: r for r in queues.queue_rows(two_vos(snap))}
    assert rows[Q]["vo"] == "atlas, wlcg" and rows[Q]["running"] == 37 and rows[Q]["activated"] == 39
    assert rows["BNL-ATLAS_Q1"]["vo"] == "atlas"
    fields = [c["field"] for c in queues.queue_column_defs()]
    assert fields.index("vo") == fields.index("site_role") + 1


def test_a_queue_with_two_vos_breaks_its_counts_down_per_vo(snap: GridSnapshot) -> None:
    """Per VO at Q: atlas 30 running, 35 activated, 2 defined (67); wlcg 7 running, 4 activated (11). The per-share
    table is keyed by VO and share."""
    rows = detail.queue_vo_counts(two_vos(snap), Q)
    assert [(r["vo"], r["running"], r["activated"], r["defined"], r["total"]) for r in rows] == [
        ("atlas", 30, 35, 2, 67), ("wlcg", 7, 4, 0, 11)]  # fmt: skip
    shares = detail.queue_job_counts(two_vos(snap), Q)
    assert {(r["vo"], r["gshare"]) for r in shares} == {("atlas", "MC Simulation"), ("atlas", "User Analysis"),
                                                         ("wlcg", "Rubin")}  # fmt: skip


def test_a_queue_of_one_vo_has_no_breakdown(snap: GridSnapshot) -> None:
    """With jobs of one VO only there is nothing to break down: no per-VO rows, the per-share table as before."""
    assert detail.queue_vo_counts(snap, Q) == []
    assert all("vo" not in r for r in detail.queue_job_counts(snap, Q))


def test_the_queue_page_shows_the_per_vo_card_only_with_two_vos(
    app_client: Any, snap: GridSnapshot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/queue?name=Q shows 'Jobs per VO' with a row per VO when two VOs have jobs there, and not otherwise."""
    from app import ids
    from app.main import state

    layout = dash.page_registry["app.pages.queue"]["layout"]
    assert "Jobs per VO" not in str(layout(name=Q))
    monkeypatch.setattr(state, "snapshot", lambda: two_vos(snap))
    tree = str(layout(name=Q))
    assert "Jobs per VO" in tree and ids.QUEUE_VO_COUNTS in tree and "'vo': 'wlcg'" in tree


def test_the_stabilizer_keeps_each_vos_users_apart(snap: GridSnapshot) -> None:
    """The Stabilizer page's per-queue rows are per (share, VO, PQ): wlcg's carol at Q is one user of Rubin's wlcg
    queue (nQ 4), not counted with atlas' users."""
    df = stabilizer_grid(GridCache(two_vos(snap)), Config())
    pq = svm.per_queue(df)
    carol = pq[(pq["panda_queue"] == Q) & (pq["vo"] == "wlcg")]
    assert carol[["gshare", "nQ", "users"]].values.tolist() == [["Rubin", 4, 1]]
    assert set(pq[pq["vo"] == "atlas"]["gshare"]) == {"User Analysis"}
