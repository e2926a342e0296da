"""The crosscheck tests: the converter and token map always; PanDA's own brokers when scripts/panda.sh ran."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "crosscheck: runs PanDA's own brokers (needs scripts/panda.sh)")
