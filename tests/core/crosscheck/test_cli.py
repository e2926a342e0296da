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


def test_missing_dirac_exits_2_with_one_sentence_saying_how_to_get_it(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--brokers dirac without DIRAC's venv: one sentence naming scripts/dirac.sh and the version, exit 2."""
    monkeypatch.setenv("BROKERAGE_DIRAC_DIR", str(tmp_path / "none"))
    result = CliRunner().invoke(crosscheck, ["--random-grids", "1", "--brokers", "dirac"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "scripts/dirac.sh" in lines[0] and "9.1.22" in lines[0]


def test_dirac_without_mariadb_exits_2(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """DIRAC's venv present but no MariaDB on the port: one sentence naming scripts/dirac.sh db start, exit 2."""
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    (tmp_path / "venv" / "bin" / "python").write_text("")
    (tmp_path / "READY-9.1.22").write_text("")
    monkeypatch.setenv("BROKERAGE_DIRAC_DIR", str(tmp_path))
    monkeypatch.setenv("DIRAC_DB_PORT", "9")  # discard: nothing listens
    result = CliRunner().invoke(crosscheck, ["--random-grids", "1", "--brokers", "dirac"])
    assert result.exit_code == 2 and "no MariaDB answers on 127.0.0.1:9" in result.output
    assert "scripts/dirac.sh db start" in result.output
