"""JEDI's skip messages as our criteria codes (no PanDA needed)."""

from __future__ import annotations

import re

import pytest

from brokerage.crosscheck import tokens
from brokerage.model.profiles import PANDA_104, PROFILES, SWITCHES


def test_every_jedi_1_0_4_token_is_mapped_or_not_modelled() -> None:
    """Each token the 1.0.4 brokers write has one of our codes or a reason why it has none, never both."""
    for tok in tokens.JEDI_104_TOKENS:
        assert (tok in tokens.MAPPED) != (tok in tokens.NOT_MODELLED), tok
    assert all(reason for reason in tokens.NOT_MODELLED.values())


def test_skip_lines_become_our_codes_by_unified_name() -> None:
    lines = [
        "  skip site=BNL_UCORE/MCORE due to status=brokeroff criteria=-status",
        "  skip site=RAL due to sue to insufficient RAM less than less than job's core-scaled requirement 14400 MB "
        "criteria=-lowmemory",
        "  skip site=X due to too many output files queued in the channel 200(>150 link limit): criteria=-link_unusable",
        "  skip site=V to avoid VP",
        "  skip site=C due to resource cap criteria=-cap_rt",
        "  use site=CERN/SCORE with weight=26.73 nRun=400 criteria=+use",
    ]
    p = tokens.parse_lines(lines)
    assert {k: v[0] for k, v in p.skips.items()} == {
        "BNL_UCORE": "-status", "RAL": "-lowmemory", "X": "-link_unusable", "V": "-avoid_vp", "C": "-cap",
    }  # fmt: skip
    assert p.uses == {"CERN": 26.73}
    assert not p.unmapped


def test_gpu_architecture_lines_have_no_token_but_a_code() -> None:
    """AtlasAnalJobBroker's architecture check names a GPU queue without a criteria token: ours is -architecture."""
    p = tokens.parse_lines([
        "  skip site=ANALY_PIC_GPU since architecture=x86_64-el9-gcc13-opt is unavailable",
        "  skip site=ANALY_MWT2_GPU since architecture is required for GPU queues",
    ])  # fmt: skip
    assert {k: v[0] for k, v in p.skips.items()} == {
        "ANALY_PIC_GPU": "-architecture",
        "ANALY_MWT2_GPU": "-architecture",
    }
    assert not p.unmapped


def test_the_first_message_about_a_queue_is_its_verdict() -> None:
    p = tokens.parse_lines(["  skip site=A due to x criteria=-disk", "  skip site=A due to y criteria=-nopilot"])
    assert p.skips["A"][0] == "-disk"


def test_an_unknown_token_is_reported_as_unmapped() -> None:
    p = tokens.parse_lines(["  skip site=A due to a new rule criteria=-brand_new", "x criteria=-other_new"])
    assert p.unmapped == {"-brand_new", "-other_new"}
    assert p.skips["A"][0] == "?-brand_new"
    with pytest.raises(KeyError):
        tokens.our_code("-brand_new")


def test_not_modelled_tokens_keep_the_token() -> None:
    p = tokens.parse_lines(["  skip site=A due to locked by another brokerage criteria=-lock"])
    assert p.skips["A"][0] == "?-lock" and not p.unmapped


def test_nucleus_lines() -> None:
    p = tokens.parse_lines(
        [
            "  skip nucleus=RAL since disk shortage (usable 0 TB) at endpoint RAL_DATADISK criteria=-space",
            "  use nucleus=CERN weight=2.189e-07 1/( RW=400000000.0 ) criteria=+use",
            "  skip site=CERN_Q due to status=offline criteria=-status",
        ],
        "nucleus",
    )
    assert {k: v[0] for k, v in p.skips.items()} == {"RAL": "-space"}
    assert p.uses == {"CERN": 2.189e-07}


def test_the_panda_profile_holds_every_switch_and_the_seed_profile_none() -> None:
    assert PROFILES["seed"] == frozenset()
    assert PROFILES[PANDA_104] == {s.name for s in SWITCHES}
    assert all(s.seed and s.code and s.where for s in SWITCHES)


def test_docs_list_every_switch_and_every_not_modelled_token() -> None:
    """docs/crosscheck.md holds the switch table as profiles.switch_table() writes it, and every token without code."""
    from pathlib import Path

    from brokerage.model.profiles import switch_table

    text = (Path(__file__).resolve().parents[3] / "docs" / "crosscheck.md").read_text()
    table = text.split("<!-- switches -->\n", 1)[1].split("\n<!-- /switches -->", 1)[0]
    assert table.splitlines() == switch_table()
    assert all(f"| `{tok}` |" in text for tok in tokens.NOT_MODELLED)


def test_every_token_in_panda_1_0_4_source_is_known(panda) -> None:
    """Every criteria token PanDA 1.0.4's jedibrokerage/ writes (``criteria=-x`` in a message, or ``criteria = "-x"``
    for the link check's variable token) is in JEDI_104_TOKENS, so it is mapped or listed as not modelled."""
    found: set[str] = set()
    for path in sorted((panda.src / "pandajedi" / "jedibrokerage").glob("*.py")):
        text = path.read_text()
        found |= set(re.findall(r"criteria=(-[A-Za-z_0-9]+)", text))
        found |= set(re.findall(r"criteria\s*=\s*[\"'](-[A-Za-z_0-9]+)[\"']", text))
    assert len(found) > 60  # the source was read
    assert found - set(tokens.JEDI_104_TOKENS) == set()
