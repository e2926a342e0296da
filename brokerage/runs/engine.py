"""The process's dask.distributed client: an embedded LocalCluster, or the scheduler at DASK_SCHEDULER_ADDRESS."""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import dask
from distributed import Client, LocalCluster
from distributed.security import Security

log = logging.getLogger(__name__)

SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"  # tcp://host:8786: use that cluster instead of an embedded one
WORKERS_ENV = "BROKERAGE_DASK_WORKERS"  # worker processes of the embedded cluster (default: one per core)
DASHBOARD_ENV = "BROKERAGE_DASK_DASHBOARD"  # e.g. 127.0.0.1:8787 serves the embedded cluster's Dask dashboard there (off by default)
CONNECT_TIMEOUT_S = 30
# Dask's nanny starts workers with MALLOC_TRIM_THRESHOLD_=65536; setting any malloc threshold turns off glibc's
# dynamic mmap threshold, so every array above 128 kB is a fresh mmap whose pages are zeroed again: allocating an
# 8 MB array measured 7x slower in a worker than here, and a simulation twice as slow. Big thresholds keep array
# memory in the heap for reuse (docs/runs.md says the same for workers started by hand).
WORKER_MALLOC_ENV = {"MALLOC_TRIM_THRESHOLD_": 2**30, "MALLOC_MMAP_THRESHOLD_": 2**25}


@dataclass
class _Engine:
    pid: int = 0
    client: Client | None = None
    cluster: LocalCluster | None = None
    address: str | None = None  # set by configure(); else the environment
    embedded: str | None = None  # the embedded cluster's scheduler address, for forked children
    workers: int | None = None
    security: Security | None = None  # set by configure() for `address`; else Dask's config (distributed.comm.tls)
    private: Security | None = None  # the embedded cluster's generated TLS credentials (kept by forked children)


_engine = _Engine()
_locks = SimpleNamespace(engine=threading.Lock())  # replaced in a forked child (see below)
# A forked child (a Dash background job) inherits the parent's client, whose event-loop thread stayed in the
# parent: closing or even collecting it there could hang, so the child keeps it referenced and never uses it.
_inherited: list[Any] = []


def configure(*, address: str | None = None, workers: int | None = None, security: Security | None = None) -> None:
    """Set the scheduler ADDRESS (with the SECURITY to reach it, default: Dask's configuration) or the embedded
    cluster's WORKERS for this process (before the first run).

    Usage: ``configure(address="tcp://10.0.0.5:8786")`` or ``configure(workers=2)``
    """
    with _locks.engine:
        if _engine.client is not None and _engine.pid == os.getpid():
            raise RuntimeError("the dask client of this process is already running; configure it before")
        if address is not None:
            _engine.address = address
        if workers is not None:
            _engine.workers = workers
        if security is not None:
            _engine.security = security


def scheduler_address() -> str | None:
    """The external scheduler this process uses (configure() or DASK_SCHEDULER_ADDRESS), None for an embedded one."""
    return _engine.address or os.environ.get(SCHEDULER_ENV) or None


def local_workers() -> int:
    """Worker processes of the embedded cluster: configure(workers=), BROKERAGE_DASK_WORKERS, or one per core."""
    if _engine.workers is not None:
        return _engine.workers
    env = os.environ.get(WORKERS_ENV, "").strip()
    return int(env) if env else (os.cpu_count() or 1)


def _adopt_fork() -> str | None:
    """In a forked child: set the parent's client aside; return its embedded cluster's address to reach it (with the
    parent's credentials, still in ``_engine.private``)."""
    inherited = _engine.embedded
    _inherited.append((_engine.client, _engine.cluster))
    _engine.client = _engine.cluster = _engine.embedded = None
    return inherited


def get_client() -> Client:
    """This process's client, started on first use and closed at exit.

    With DASK_SCHEDULER_ADDRESS (or ``configure(address=)``) it connects to that scheduler; otherwise it starts an
    embedded LocalCluster (worker processes, one thread each, on 127.0.0.1, private: see ``_start_embedded``). A
    forked child of a process that runs one (a Dash background job) connects to its parent's cluster instead.
    Usage: ``client = get_client(); client.ncores()``
    """
    with _locks.engine:
        pid = os.getpid()
        if _engine.client is not None and _engine.pid == pid:
            return _engine.client
        parent_cluster = _adopt_fork() if _engine.client is not None else None
        address = scheduler_address()
        if address:  # security None: Dask's own configuration (distributed.comm.tls.*, a security loader) applies
            client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False, security=_engine.security)
            log.info("dask: connected to %s", address)
        elif parent_cluster:
            client = Client(parent_cluster, timeout=CONNECT_TIMEOUT_S, set_as_default=False, security=_engine.private)
        else:
            client = _start_embedded()
        _engine.client, _engine.pid = client, pid
        return client


def _start_embedded() -> Client:
    """Start the embedded LocalCluster and connect to it.

    It is private to this process: it listens on 127.0.0.1 with TLS only, under credentials generated for it
    (``Security.temporary()``: a fresh CA and certificate held in memory, given to its workers and this client), and
    both ends require the peer's certificate, so another local process can neither connect nor submit work. Its
    HTTP servers show no cluster information unless a dashboard is asked for (BROKERAGE_DASK_DASHBOARD).
    """
    n = local_workers()
    if n < 1:
        raise RuntimeError(f"no Dask workers: {WORKERS_ENV}=0 or --workers 0 keeps every run in-process")
    dashboard = os.environ.get(DASHBOARD_ENV, "")
    settings: dict[str, Any] = {f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in WORKER_MALLOC_ENV.items()}
    if not dashboard:  # the HTTP servers it cannot avoid (on loopback ports) answer health checks only
        settings |= {f"distributed.{role}.http.routes": ["distributed.http.health"] for role in ("scheduler", "worker")}
    private = Security.temporary()
    with dask.config.set(settings):
        cluster = LocalCluster(
            n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1", protocol="tls://", security=private,
            dashboard_address=dashboard or None, scheduler_kwargs=_http_kwargs(dashboard),
        )  # fmt: skip
    client = Client(cluster, set_as_default=False, security=private)
    _engine.cluster, _engine.embedded, _engine.private = cluster, cluster.scheduler_address, private
    log.info(
        "dask: embedded LocalCluster with %d workers at %s (TLS, private credentials)", n, cluster.scheduler_address
    )
    return client


def cluster_security() -> Security | None:
    """The credentials that reach this process's cluster: the embedded cluster's generated ones, else those given
    to ``configure()`` (None: Dask's configuration decides).

    Usage: ``Client(running_client().scheduler.address, security=cluster_security())``
    """
    return _engine.private if _engine.private is not None else _engine.security


def _http_kwargs(dashboard: str) -> dict[str, Any]:
    """The scheduler's HTTP server: off unless a dashboard address is asked for.

    Without a dashboard the scheduler would still open its health/metrics server on 8787 and warn when anything
    (the user's own dashboard, another run) holds that port; an ephemeral loopback port never collides.
    """
    return {} if dashboard else {"dashboard": False, "dashboard_address": "127.0.0.1:0"}


def running_client() -> Client | None:
    """This process's client if it is already running (never starts one)."""
    return _engine.client if _engine.pid == os.getpid() else None


_close_hooks: list[Callable[[Client], None]] = []


def on_close(hook: Callable[[Client], None]) -> None:
    """Call HOOK with a client this process is closing (a module holding futures of that client forgets them).

    Usage: ``on_close(forget)``
    """
    _close_hooks.append(hook)


def _forget(client: Client) -> None:
    for hook in _close_hooks:
        hook(client)


def close() -> None:
    """Close this process's client and its embedded cluster (a forked child's inherited ones are left alone).

    Usage: ``close()`` (also registered at exit)
    """
    with _locks.engine:
        if _engine.pid != os.getpid():
            return
        client, cluster = _engine.client, _engine.cluster
        _engine.client = _engine.cluster = _engine.embedded = _engine.private = None
        _engine.pid = 0
    if client is not None:
        if cluster is not None:  # the snapshots go with the cluster: unpublish them so its shutdown is quiet
            with contextlib.suppress(Exception):
                for name in client.list_datasets():
                    client.unpublish_dataset(name)
        _forget(client)
        client.close()
    if cluster is not None:
        cluster.close()


def _new_lock_in_child() -> None:
    # another thread may have held the lock at the fork; in the child it would stay held forever
    _locks.engine = threading.Lock()


atexit.register(close)
os.register_at_fork(after_in_child=_new_lock_in_child)
