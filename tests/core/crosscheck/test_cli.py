"""The crosscheck command without PanDA: one sentence, exit 2."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from brokerage.cli.crosscheck import crosscheck


def test_missing_panda_exits_2_with_one_sentence_saying_how_to_get_it(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BROKERAGE_PANDA_DIR", str(tmp_path / "none"))
    result = CliRunner().invoke(crosscheck, ["--random-grids", "1"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "scripts/panda.sh" in lines[0] and "1.0.4" in lines[0]


def test_unknown_broker_is_refused(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = CliRunner().invoke(crosscheck, ["--random-grids", "1", "--brokers", "prod,dirac"])
    assert result.exit_code == 2 and "dirac" in result.output
