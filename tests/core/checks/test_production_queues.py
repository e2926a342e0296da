"""The production job filters over queues (brokerage/checks/production_queues.py): the seed's order."""

from __future__ import annotations

from brokerage.checks import production_queues


def test_full_chain_filter_sits_before_the_pilot_check() -> None:
    names = [f.name for f in production_queues.FILTERS]
    assert names.index("full-chain check") == names.index("pilot check") - 1
    assert names.index("full-chain check") > names.index("T1 weight check")
