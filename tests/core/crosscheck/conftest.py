"""The crosscheck tests: the converter and token map always; PanDA's own brokers when scripts/panda.sh ran."""

from __future__ import annotations

import pytest

from brokerage.crosscheck.panda import PandaEnv, PandaMissing, find_panda


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "crosscheck: runs PanDA's own brokers (needs scripts/panda.sh)")


@pytest.fixture(scope="session")
def panda() -> PandaEnv:
    """PanDA's environment, or the test is skipped saying how to get it."""
    try:
        return find_panda()
    except PandaMissing as exc:
        pytest.skip(f"PanDA is not set up: {exc}")
