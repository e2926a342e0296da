"""The embedded Dask cluster is private: TLS under credentials generated for it, so no other process can use it."""

from __future__ import annotations

import gc
import json
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from distributed import Client
from distributed.security import Security

from brokerage import runs
from brokerage.cli.main import main
from brokerage.model.waiting import waiting_task_ids
from brokerage.runs import chunks, engine
from brokerage.synth.demo import demo_snapshot

REFUSED_S = 5  # a refused client gives up after this long (it is refused at once; the bound keeps a hang short)


@pytest.fixture(scope="module")
def embedded() -> Iterator[Client]:
    """This process's embedded cluster (one worker), started through the run engine as every command starts it."""
    saved = engine._engine
    engine._engine = engine._Engine(workers=1)
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.delenv(engine.SCHEDULER_ENV, raising=False)
            client = runs.get_client()
        yield client
    finally:
        runs.close()
        engine._engine = saved


def _clients(client: Client) -> int:
    return client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.clients))


def test_the_embedded_scheduler_listens_on_loopback_with_tls_only(embedded: Client) -> None:
    """The scheduler and its workers listen on tls://127.0.0.1 and require encryption under generated credentials."""
    address = embedded.scheduler.address
    assert address.startswith("tls://127.0.0.1:")
    workers = embedded.scheduler_info()["workers"]
    assert workers and all(w.startswith("tls://127.0.0.1:") for w in workers)
    security = runs.cluster_security()
    assert security is not None and security.require_encryption
    assert security.tls_ca_file.startswith("-----BEGIN CERTIFICATE-----")  # held in memory, never in a file


def test_a_plain_client_cannot_connect_or_submit_work(embedded: Client, tmp_path: Path) -> None:
    """A client without the cluster's credentials (plain TCP, TLS without a certificate, TLS under other generated
    credentials) is refused before it can submit anything: the scheduler never counts it and no task runs."""
    address = embedded.scheduler.address
    before = _clients(embedded)
    marker = tmp_path / "ran"
    attempts = {
        "plain tcp": (address.replace("tls://", "tcp://"), None),
        "tls, no certificate": (address, None),
        "tls, other credentials": (address, Security.temporary()),
    }
    for name, (target, security) in attempts.items():
        with pytest.raises((OSError, TypeError)):  # TypeError: no TLS context at all
            client = Client(target, security=security, timeout=REFUSED_S, set_as_default=False)
            client.submit(marker.write_text, name).result(timeout=REFUSED_S)
        # a refused Client is half-built: collected later inside the next Client's start it deadlocks Dask's loop
        # runner (its __del__ stops the loop under the runner's lock), so it is collected here, outside any start
        gc.collect()
    assert not marker.exists() and _clients(embedded) == before


def test_a_raw_tls_connection_without_a_client_certificate_is_refused(embedded: Client) -> None:
    """The scheduler asks every peer for a certificate signed by the cluster's own CA: a TLS handshake that trusts
    the server but shows no certificate gets no Dask message back."""
    host, port = embedded.scheduler.address.removeprefix("tls://").rsplit(":", 1)
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    with socket.create_connection((host, int(port)), timeout=REFUSED_S) as raw, ctx.wrap_socket(raw) as tls:
        assert tls.getpeercert(binary_form=True)  # a TLS server answered with its certificate ...
        # ... and asks for ours (TLS 1.3: at a read): the alert, or the closed connection when it beats the alert
        with pytest.raises(ssl.SSLError, match=r"CERTIFICATE_REQUIRED|EOF occurred in violation of protocol"):
            tls.sendall(b"\x00" * 8)
            tls.recv(1)


def test_a_whole_grid_report_runs_on_the_private_cluster(
    embedded: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`report --all` brokers on the embedded (TLS) cluster and writes what the in-process run (`--workers 0`) does."""
    snap = demo_snapshot(seed=0, queues=60, tasks=40)
    path = tmp_path / "grid.json"
    snap.to_json(path)
    monkeypatch.setattr(chunks, "MIN_CLUSTER_TASKS", 1)
    docs = {}
    transitions = embedded.run_on_scheduler(lambda dask_scheduler: dask_scheduler.transition_counter)
    for label, args in {"cluster": [], "here": ["--workers", "0"]}.items():
        out = tmp_path / f"{label}.json"
        cmd = ["report", "--snapshot", str(path), "--all", "--quiet", "--format", "json", "--out", str(out), *args]
        with pytest.MonkeyPatch.context() as mp:
            if args:  # the in-process run gets an engine of its own (this process's engine is running)
                mp.setattr(engine, "_engine", engine._Engine())
            else:
                assert runs.running_client() is embedded  # the command uses this process's private cluster
            result = CliRunner().invoke(main, cmd, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        docs[label] = json.loads(out.read_text())
        for volatile in ("generated_at", "seconds"):
            docs[label]["meta"].pop(volatile)
    assert embedded.run_on_scheduler(lambda dask_scheduler: dask_scheduler.transition_counter) > transitions
    assert docs["cluster"] == docs["here"] and len(docs["here"]["tasks"]) == len(waiting_task_ids(snap))
