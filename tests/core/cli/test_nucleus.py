"""``brokerage nucleus``: JSON and table output, gdpconfig overrides, errors exit 2."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner

from brokerage.cli.nucleus import nucleus as nucleus_command
from tests.builders import site
from tests.core.brokers.test_nucleus import ngrid


def test_cli_json(tmp_path: Any) -> None:
    path = tmp_path / "snap.json"
    ngrid(sites=[site("A"), site("B", state="OFF")]).to_json(path)
    res = CliRunner().invoke(nucleus_command, ["--snapshot", str(path), "--task", "1", "--json", "--seed", "3"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert {"broker", "task", "status", "candidates", "chosen", "skipped", "funnel", "config"} <= set(out)
    assert out["broker"] == "task" and out["chosen"] == "A"
    assert {"nucleus", "rank", "weight", "probability", "factors"} <= set(out["candidates"][0])
    assert out["skipped"][0]["nucleus"] == "B" and out["skipped"][0]["criteria"] == "-status"


def test_cli_table_and_errors(tmp_path: Any) -> None:
    path = tmp_path / "snap.json"
    ngrid().to_json(path)
    runner = CliRunner()
    res = runner.invoke(nucleus_command, ["--snapshot", str(path), "--task", "1", "--set", "RW_OFFSET=10"])
    assert res.exit_code == 0 and "chosen nucleus" in res.output and "probability" in res.output
    bad = runner.invoke(nucleus_command, ["--snapshot", str(path), "--task", "1", "--set", "RW_OFFSET=-1"])
    assert bad.exit_code == 2 and "RW_OFFSET" in bad.output
    missing = runner.invoke(nucleus_command, ["--snapshot", str(path), "--task", "99"])
    assert missing.exit_code == 2 and "unknown task 99" in missing.output


def test_cli_is_attached_to_the_brokerage_command() -> None:
    import click

    from brokerage.cli.main import main

    assert main.get_command(click.Context(main), "nucleus") is not None
