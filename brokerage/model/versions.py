"""The versions a decision was made on: the grid snapshot's and the gdpconfig's (or a what-if on it)."""

from __future__ import annotations

from typing import Any

from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot


def config_version(config: Config) -> str:
    """The gdpconfig version a decision was made under: ``vN``, ``defaults``, or ``what-if on vN`` with the edits.

    Usage: ``config_version(Config(version=3).with_overrides({"NQUEUED_SAT_CAP": 300}))``
    """
    base = f"v{config.version}" if config.version is not None else "defaults"
    if not config.overrides:
        return base
    edits = ", ".join(f"{k}={v}" for k, v in sorted(config.overrides.items()))
    return f"what-if on {base} ({edits})"


def snapshot_version(snap: GridSnapshot) -> str:
    """The grid a decision was made on: ``snapshot_id@version``, the stored version's number after the ``@``.

    Usage: ``snapshot_version(snap)  # "demo-0@4"``
    """
    return snap.key


def stamp(snap: GridSnapshot, config: Config) -> dict[str, Any]:
    """``{"snapshot_version", "config_version"}`` to put at the top level of any decision's JSON.

    Usage: ``{**decision.to_dict(), **stamp(snap, config)}``
    """
    return {"snapshot_version": snapshot_version(snap), "config_version": config_version(config)}
