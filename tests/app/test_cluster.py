"""The gunicorn deployment's shared Dask cluster (app/cluster.py) is private: only holders of its files reach it."""

from __future__ import annotations

import gc
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dask
import pytest
from distributed import Client

from app.cluster import CREDENTIALS, client_environ, start, stop


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """`python -m app.cluster` with one worker, as gunicorn's master starts it: (its folder, scheduler address)."""
    folder = tmp_path_factory.mktemp("cluster")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BROKERAGE_DASK_WORKERS", "1")
        mp.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
        proc, address = start(folder)
    try:
        yield folder, address
    finally:
        stop(proc)


def test_the_shared_cluster_is_reached_only_with_its_credentials(shared: tuple[Path, str]) -> None:
    """The cluster gunicorn's workers share speaks TLS only; its generated credentials are files only this user can
    read, and Dask's TLS settings naming them (what gunicorn.conf.py gives the workers) are what lets a client in."""
    folder, address = shared
    assert address.startswith("tls://127.0.0.1:")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert all(stat.S_IMODE((folder / name).stat().st_mode) == 0o600 for name in CREDENTIALS.values())
    with pytest.raises((OSError, TypeError)):  # no credentials: no TLS context (TypeError); plain: reset
        Client(address, timeout=5, set_as_default=False)
    gc.collect()  # a refused, half-built Client collected inside the next Client() deadlocks Dask's loop runner
    with pytest.raises(OSError):
        Client(address.replace("tls://", "tcp://"), timeout=5, set_as_default=False)
    gc.collect()
    settings = _flat(dask.config.collect_env(client_environ(folder)))  # what dask reads from those variables
    with dask.config.set(settings), Client(address, timeout=30, set_as_default=False) as client:
        assert client.submit(sum, [1, 2]).result(timeout=60) == 3


def _flat(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        flat |= _flat(value, f"{prefix}{key}.") if isinstance(value, dict) else {f"{prefix}{key}": value}
    return flat
