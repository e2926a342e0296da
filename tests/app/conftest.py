"""Fast-lane fixtures: the one app, served from a small sample grid set up before app.main is imported."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from brokerage.model.snapshot import GridSnapshot
from tests.app.sample import sample_grid


@pytest.fixture(scope="session")
def snap() -> GridSnapshot:
    """The sample grid."""
    return sample_grid()


@pytest.fixture(scope="session")
def app_client(tmp_path_factory: pytest.TempPathFactory, snap: GridSnapshot) -> Iterator[object]:
    """A Flask test client of the one app, whose data source is the sample grid."""
    path = Path(tmp_path_factory.mktemp("grid")) / "sample.json"
    snap.to_json(path)
    os.environ["BROKERAGE_SNAPSHOT"] = str(path)
    os.environ.pop("DATABASE_URL", None)
    from app.main import app, state

    state.reset()
    yield app.server.test_client()
    state.reset()


@pytest.fixture(autouse=True)
def fresh_attempt_limiter() -> Iterator[None]:
    """Each test starts with no failed operator checks counted (the limiter is per process)."""
    from app.services.roles import limiter

    limiter().reset()
    yield
