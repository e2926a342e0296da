"""The crosscheck tests: the converters and token map always; PanDA's own brokers when scripts/panda.sh ran, DIRAC's
TaskQueueDB when scripts/dirac.sh ran and its MariaDB is up."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "crosscheck: runs PanDA's own brokers (needs scripts/panda.sh)")


@pytest.fixture(scope="session")
def dirac_env():
    """DIRAC's venv (scripts/dirac.sh) and its MariaDB (scripts/dirac.sh db start), or the test is skipped saying
    which is missing and how to get it."""
    from brokerage.crosscheck.dirac_env import DiracMissing, find_dirac

    try:
        return find_dirac()
    except DiracMissing as exc:
        pytest.skip(f"DIRAC is not set up: {exc}")
