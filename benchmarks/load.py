"""Load benchmark: mixed traffic from locust (headless, loopback) against `gunicorn -c gunicorn.conf.py app.main:server`.

Usage: ``python benchmarks/load.py --users 20 50 --seconds 60``  (prints errors and p50/p95 per kind of request);
``--hostile`` adds 20 slow clients (10 trickling headers, 10 bodies) and 4 clients sending 100 MB callback bodies
beside the users for the whole run (the mixed run of the README).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCUSTFILE = """
import json, random
from locust import HttpUser, between, task

TASKS = json.loads(open(__import__("os").environ["LOAD_TASKS"]).read())


def callback_body(deps, output_part, values, changed):
    dep = next(d for d in deps if output_part in d["output"])
    outs = [{"id": o.split(".")[0], "property": o.split(".")[1]} for o in dep["output"].strip(".").split("...")]
    inputs = [{"id": i["id"], "property": i["property"], "value": values.get(i["id"])} for i in dep["inputs"]]
    state = [{"id": s["id"], "property": s["property"], "value": values.get(s["id"])} for s in dep.get("state", [])]
    return {"output": dep["output"], "outputs": outs if len(outs) > 1 else outs[0], "inputs": inputs,
            "changedPropIds": [changed], "state": state}


class Viewer(HttpUser):
    wait_time = between(0.5, 1.5)

    def on_start(self):
        self.deps = self.client.get("/_dash-dependencies", name="dash deps").json()

    @task(3)
    def page(self):
        self.client.get(random.choice(["/", "/queues", "/nuclei", "/network", "/tuning"]), name="page")

    @task(4)
    def api(self):
        path = random.choice(["/api/overview", "/api/queues", "/api/stabilizer", f"/api/tasks/{random.choice(TASKS)}/jobs"])
        self.client.get(path, name="api")

    @task(3)
    def queues_callback(self):
        tid = random.choice(TASKS)
        body = callback_body(self.deps, "queues-ranked", {"queues-task": tid, "queues-criteria": None}, "queues-task.value")
        with self.client.post("/_dash-update-component", json=body, name="callback: queues", catch_response=True) as r:
            if r.status_code != 200:
                r.failure(f"status {r.status_code}")

    @task(2)
    def whatif_callback(self):
        tid = random.choice(TASKS)
        raw = {"NQUEUED_SAT_CAP": random.randint(50, 5000)}
        body = callback_body(self.deps, "tune-task-view", {"tune-raw": raw, "tune-task": tid}, "tune-raw.data")
        with self.client.post("/_dash-update-component", json=body, name="callback: what-if", catch_response=True) as r:
            if r.status_code != 200:
                r.failure(f"status {r.status_code}")
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    """Start the production server on a demo grid, run locust at each user count, print the figures."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--users", type=int, nargs="+", default=[20, 50])
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--hostile", action="store_true", help="20 slow and 4 large-body clients beside the users")
    ap.add_argument("--queues", type=int, default=700)
    ap.add_argument("--tasks", type=int, default=3000)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="load-"))
    bin_dir = Path(sys.executable).parent
    grid = tmp / "grid.json"
    subprocess.run(
        [str(bin_dir / "brokerage"), "snapshot", "demo", "--out", str(grid), "--queues", str(args.queues),
         "--tasks", str(args.tasks)], check=True,
    )  # fmt: skip
    import json

    doc = json.loads(grid.read_text())
    ids = [t["jeditaskid"] for t in doc["tasks"] if t["status"] in ("ready", "assigning", "running")][:200]
    (tmp / "tasks.json").write_text(json.dumps(ids))
    (tmp / "locustfile.py").write_text(LOCUSTFILE)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(BIND=f"127.0.0.1:{port}", BROKERAGE_SNAPSHOT=str(grid), BROKERAGE_CACHE_DIR=str(tmp / "cache"))
    server = subprocess.Popen(
        [str(bin_dir / "gunicorn"), "-c", "gunicorn.conf.py", "app.main:server"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                with urllib.request.urlopen(url + "/api/overview", timeout=120):
                    break
            except OSError:
                time.sleep(0.5)
        stop = threading.Event()
        if args.hostile:
            for i in range(24):
                kind = "header" if i < 10 else "body" if i < 20 else "large"
                threading.Thread(target=_hostile, args=(port, kind, stop), daemon=True).start()
            time.sleep(2)
        for users in args.users:
            prefix = tmp / f"u{users}"
            subprocess.run(
                [str(bin_dir / "locust"), "-f", str(tmp / "locustfile.py"), "--headless", "-u", str(users),
                 "-r", str(max(1, users // 5)), "-t", f"{args.seconds}s", "-H", url, "--csv", str(prefix),
                 "--only-summary"],
                env={**os.environ, "LOAD_TASKS": str(tmp / "tasks.json")}, check=False,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            with open(f"{prefix}_stats.csv") as f:
                for row in csv.DictReader(f):
                    print(
                        f"{users:>3} users  {row['Name']:<20} requests {row['Request Count']:>6}  "
                        f"errors {row['Failure Count']:>4}  p50 {row['50%']:>6} ms  p95 {row['95%']:>6} ms"
                    )
        stop.set()
    finally:
        server.terminate()
        server.wait(timeout=30)


def _hostile(port: int, kind: str, stop: threading.Event) -> None:
    """One hostile client until STOP: headers or a body trickled a byte a second, or 100 MB bodies sent flat out."""
    heads = {
        "header": b"GET /api/overview HTTP/1.1\r\nHost: x\r\n",
        "body": b"POST /_dash-update-component HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{",
        "large": b"POST /_dash-update-component HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n",
    }
    chunk = b"0," * 500_000
    while not stop.is_set():
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            s.sendall(heads[kind])
            for _ in range(100):
                if stop.is_set():
                    break
                if kind == "large":
                    s.sendall(chunk)
                else:
                    s.sendall(b"X-Slow: 1\r\n" if kind == "header" else b" ")
                    stop.wait(1.0)
        stop.wait(0.1)


if __name__ == "__main__":
    main()
