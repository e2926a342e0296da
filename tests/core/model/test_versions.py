"""Every decision names the grid version and the gdpconfig version (or the what-if on it) it was made on."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from brokerage.cli.main import main
from brokerage.model.gdpconfig import Config
from brokerage.model.versions import config_version, stamp
from tests.builders import grid, queue, task


def test_config_version_names_the_stored_version_and_the_edits() -> None:
    """A stored config is vN; with overrides it is "what-if on vN (KEY=VALUE, ...)", sorted by key."""
    cfg = Config(version=4).with_overrides({"NQUEUED_SAT_CAP": 300, "MAX_SITE_CANDIDATES": 5})
    assert config_version(Config(version=4)) == "v4"
    assert config_version(cfg) == "what-if on v4 (MAX_SITE_CANDIDATES=5, NQUEUED_SAT_CAP=300)"


def test_cli_json_carries_both_versions(tmp_path: Path) -> None:
    """`jobs --json` and `nucleus --json` put snapshot_version and config_version at the top level."""
    snap = grid([queue("A", "SA")], [task(1)])
    path = tmp_path / "g.json"
    snap.to_json(path)
    for cmd in ("jobs", "nucleus"):
        out = CliRunner().invoke(
            main, [cmd, "--snapshot", str(path), "--task", "1", "--set", "NQUEUED_SAT_CAP=300", "--json"]
        )
        assert out.exit_code == 0, out.output
        body = json.loads(out.output)
        assert body["snapshot_version"] == snap.key
        assert body["config_version"] == "what-if on defaults (NQUEUED_SAT_CAP=300)"
    assert stamp(snap, Config()) == {"snapshot_version": snap.key, "config_version": "defaults"}
